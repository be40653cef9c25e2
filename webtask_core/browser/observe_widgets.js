  // ---- Widgets (included into observe.js after observe_names.js; shares its scope) ----

  // Form controls a widget library replaced, and what names a widget from outside it.

  // A <select>, <textarea> or text input that a widget library hid from sight to keep it for the form
  // (Tom Select's 1px clipped select, Choices.js's transparent one under its widget, Tagify's input
  // scaled to nothing): taken out of the tab order or [hidden], and too small to see (an sr-only box
  // is 1px and its border), clipped away, or transparent and passing the mouse through. The model
  // acts on the library's widget instead. A transparent select that takes the clicks (Pikaday's month
  // picker) is the control itself and stays.
  const SIGHT_MIN = 4;  // px
  const KEPT_TYPES = new Set(['checkbox', 'radio', 'file', 'submit', 'button', 'reset', 'image']);
  function replacedOriginal(el, tag, style) {
    if (el.getAttribute('tabindex') !== '-1' && !el.hasAttribute('hidden')) return false;
    if (tag === 'INPUT' ? KEPT_TYPES.has(el.type) : tag !== 'SELECT' && tag !== 'TEXTAREA') return false;
    if (el.offsetWidth < SIGHT_MIN || el.offsetHeight < SIGHT_MIN) return true;
    const s = style || getComputedStyle(el);
    if ((s.opacity === '0' && s.pointerEvents === 'none') || s.clip === 'rect(0px, 0px, 0px, 0px)'
      || s.clipPath.startsWith('inset(50%')) return true;
    const r = el.getBoundingClientRect();  // a transform can shrink it to nothing (Tagify)
    return r.width < SIGHT_MIN || r.height < SIGHT_MIN;
  }
  // The form control a widget stands in for: the hidden <textarea>/<input>/<select> just before the
  // widget's outer box (TinyMCE, CKEditor, EasyMDE and Trix put their editor right after the original;
  // Quill and Draftail keep a hidden input before it, a toolbar may come between).
  const isToolbar = (n) => n.getAttribute('role') === 'toolbar' || (typeof n.className === 'string' && /toolbar/i.test(n.className));
  function originalBefore(el) {
    for (let a = el, depth = 0; a && a.tagName !== 'BODY' && depth < 12; a = a.parentElement, depth++) {
      let before = a.previousElementSibling;
      if (before && isToolbar(before)) before = before.previousElementSibling;
      if (before && (before.tagName === 'TEXTAREA' || before.tagName === 'SELECT' || before.tagName === 'INPUT')
        && (before.type === 'hidden' || !isRendered(before))) return before;
    }
    return null;
  }
  // The label of that form control (a hidden input has no .labels: its <label for> is looked up).
  function originalLabel(original) {
    const parts = [];
    if (original.labels && original.labels.length) for (const label of original.labels) parts.push(label.textContent);
    else if (original.id) {
      const label = original.getRootNode().querySelector('label[for="' + CSS.escape(original.id) + '"]');
      if (label) parts.push(label.textContent);
    }
    return norm(parts.join(' ')) || norm(original.getAttribute('aria-label') || '');
  }
  // An editor (an editable region, a role=textbox, a code editor) is named by the label of the form
  // field it edits, before its own aria-label (often the library's "Rich Text Editor..." boilerplate).
  function fieldName(el) {
    const original = originalBefore(el);
    return original ? originalLabel(original) : '';
  }
  // What an editor's <body contenteditable> in an iframe is called: the label of the form field it
  // edits (found from its <iframe> when the page around it is of the same origin), its own
  // aria-labelledby or aria-label, else the iframe's title or aria-label.
  function editorName(body) {
    let frame = null;
    try { frame = window.frameElement; } catch (error) { frame = null; }
    if (frame) {
      const name = fieldName(frame);
      if (name) return name;
    }
    const own = ownName(body, 'BODY', null);
    if (own) return own;
    return frame ? norm(frame.getAttribute('title') || frame.getAttribute('aria-label') || '') : '';
  }
  // A code editor that draws its text itself and types through a hidden textarea (CodeMirror 5, as in
  // EasyMDE): the element and its text, or null.
  function codeEditorText(el) {
    const cm = el.CodeMirror;
    return cm && typeof cm.getValue === 'function' ? cm.getValue() : null;
  }

  // Controls known only by a class name: what their class says, read in their place.

  // The words of an element's classes and its data-action (xdsoft_prev, air-datepicker-nav--action
  // with data-action="prev", tagit-close, is-selected...), lower case.
  function classWords(el) {
    const own = (typeof el.className === 'string' ? el.className : '') + ' ' + (el.getAttribute('data-action') || '');
    return own.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z]+/).filter((w) => w);
  }
  const MONTHS = /\b(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sep(tember)?|oct(ober)?|nov(ember)?|dec(ember)?)\b/i;
  const STEP_WORDS = {prev: 'previous', previous: 'previous', next: 'next'};
  const REMOVE_WORDS = new Set(['close', 'remove', 'delete']);
  const KIND_WORDS = ['tag', 'chip', 'token'];
  // A name for an icon control with none (no text, title, aria): "previous month" for a calendar's
  // arrow beside a month's name, "remove tag weekend" for a tag's close link, "today"; '' if none.
  function iconName(el) {
    if (el.getAttribute('title') || el.getAttribute('aria-label') || el.getAttribute('data-tooltip')) return '';
    const words = classWords(el);
    const step = words.map((w) => STEP_WORDS[w]).find((w) => w);
    if (step) {
      for (let a = el.parentElement, depth = 0; a && depth < 3; a = a.parentElement, depth++) {
        if (MONTHS.test(a.innerText || '')) return step + ' month';
      }
      return step;
    }
    if (words.some((w) => REMOVE_WORDS.has(w))) {
      for (let a = el.parentElement, depth = 0; a && depth < 3; a = a.parentElement, depth++) {
        const what = norm((a.textContent || '').replace(el.textContent || '', ''));
        if (!what) continue;
        if (what.length > 40) break;  // not an item of its own (a tag, a chip): a page region
        const kind = KIND_WORDS.find((k) => classWords(a).some((w) => w.includes(k)));
        return 'remove ' + (kind ? kind + ' ' : '') + what;
      }
      return words.includes('close') ? 'close' : 'remove';
    }
    return words.includes('today') ? 'today' : '';
  }
  // A calendar's day (a cell whose text is a day's number): marked when it lies outside the month
  // shown, and when it is the chosen day (a class saying selected; else current, where nothing in
  // its calendar says selected: one library's "current" is the chosen day, another's today).
  function dayMarks(el, a) {
    const words = (typeof el.className === 'string' ? el.className : '').toLowerCase();
    if (!words || !/^\d{1,2}$/.test(norm(el.textContent || ''))) return;
    if (/other[-_ ]?month|outside/.test(words)) a.push('outside-month', true);
    if (el.getAttribute('aria-selected') !== null) return;
    const calendar = el.closest('table, [role=grid]') || (el.parentElement && el.parentElement.parentElement) || el;
    const chosen = /(^|[-_ ])selected([-_ ]|$)/.test(words)
      || (/(^|[-_ ])current([-_ ]|$)/.test(words) && !calendar.querySelector('[class*=selected]'));
    if (chosen) a.push('aria-selected', 'true');
  }

  // A drop-down's list that its combobox (aria-controls / aria-owns naming it), or the list itself,
  // says is closed: aria-expanded="false". A listbox one tabs to or that has a popup is the control
  // itself (Choices.js's single select), closed or not.
  function closedList(el) {
    if (el.getAttribute('aria-expanded') === 'false') {
      const tabindex = el.getAttribute('tabindex');
      return !el.hasAttribute('aria-haspopup') && !(tabindex !== null && parseInt(tabindex, 10) >= 0);
    }
    if (!el.id) return false;
    const root = el.getRootNode();
    const id = CSS.escape(el.id);
    const opener = root.querySelector('[aria-controls~="' + id + '"], [aria-owns~="' + id + '"]');
    return opener !== null && opener !== el && opener.getAttribute('aria-expanded') === 'false';
  }
  // A positioned box lying wholly left of or above the page (parked at -9999px): no scroll shows it.
  // Inside a box scrolled down (an admin's editor pane), one above the box's view is not parked: the
  // box's scroll brings it back, as it does the fields beside it (Wagtail's comment buttons of the
  // fields scrolled out above went missing, so their number changed with where the pane stood).
  function offPage(el) {
    const r = el.getBoundingClientRect();
    if (!(r.right + window.scrollX < 0 || r.bottom + window.scrollY < 0)) return false;
    for (let box = el.parentElement; box && box !== document.body && box !== document.documentElement;
      box = box.parentElement) {
      if (!box.scrollTop && !box.scrollLeft) continue;  // unscrolled: what lies above it, no scroll reaches
      const b = box.getBoundingClientRect();
      return r.right - b.left + box.scrollLeft < 0 || r.bottom - b.top + box.scrollTop < 0;
    }
    return true;
  }
