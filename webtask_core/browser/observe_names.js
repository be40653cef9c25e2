  // ---- What an element is and what it is called (included into observe.js; shares its scope) ----

  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'META', 'LINK', 'HEAD', 'TITLE', 'OPTION',
    'OPTGROUP', 'DATALIST', 'PARAM', 'SOURCE', 'TRACK', 'AREA', 'MAP', 'BASE', 'OBJECT', 'EMBED']);
  const FORM_CONTROLS = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA']);
  const NATIVE = new Set(['A', 'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'SUMMARY']);
  const WIDGET_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'switch', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem']);
  const IMPLICIT_ROLE = {A: 'link', BUTTON: 'button', SELECT: 'combobox', TEXTAREA: 'textbox', SUMMARY: 'button'};
  const INPUT_ROLE = {checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton',
    search: 'searchbox', button: 'button', submit: 'button', reset: 'button', image: 'button', file: 'button'};

  const clip = (s, max) => (s.length > max ? s.slice(0, max - 1) + '…' : s);
  // Invisible format characters are no text: zero-width spaces and joiners (editors keep the caret
  // in them, pages break long words with them), CKEditor's word joiner filler, byte order marks, soft
  // hyphens, direction marks. (Tested before replacing: most strings hold none.)
  const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]/;
  const INVISIBLE_ALL = /[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]/g;
  const visibleOnly = (s) => (INVISIBLE.test(s) ? s.replace(INVISIBLE_ALL, '') : s);
  const norm = (s) => visibleOnly(s).replace(/\s+/g, ' ').trim();

  // Does an inline element's own margin or padding set it apart from the text before or after it?
  // (Reading computed styles is the costly part of a pass: two reads, and only where text abuts.)
  const gapBefore = (style) => style.marginLeft !== '0px' || style.paddingLeft !== '0px';
  const gapAfter = (style) => style.marginRight !== '0px' || style.paddingRight !== '0px';

  // control -> its <label>s. One querySelectorAll per tree scope: el.labels is a live list that scans
  // the whole document on first use, which costs seconds on a form-heavy page.
  const labelsOf = new Map();
  function indexLabels(root) {
    for (const label of root.querySelectorAll('label')) {
      const control = label.control;
      if (!control) continue;
      const list = labelsOf.get(control);
      if (list) list.push(label); else labelsOf.set(control, [label]);
    }
  }

  // What tells an icon without a name apart: its title or tooltip text, an <svg> title, else id or class.
  function hintFor(el) {
    const title = el.getAttribute('title') || el.getAttribute('data-tooltip');
    if (title && title.trim()) return clip(norm(title), VALUE_MAX);
    const svgTitle = el.querySelector('svg title');
    if (svgTitle && svgTitle.textContent.trim()) return clip(norm(svgTitle.textContent), VALUE_MAX);
    if (el.id) return clip(el.id, VALUE_MAX);
    if (typeof el.className === 'string' && el.className.trim()) return clip(el.className.trim().split(/\s+/).slice(0, 3).join(' '), VALUE_MAX);
    return '';
  }

  // Text of a <label> without the text of the control it labels (a <select> inside would add options).
  // Inline elements add no space (`Enter "<b>x</b>"` reads `Enter "x"`); other boxes are set apart.
  // A <slot> reads as what is projected into it (a shadow-DOM control's label text lives in the light DOM).
  function labelText(label, control) {
    const parts = [];
    const one = (n) => {
      if (n.nodeType === 3) { parts.push(n.data); return; }
      if (n.nodeType !== 1 || n === control || SKIP.has(n.tagName) || n.tagName === 'SELECT' || n.tagName === 'TEXTAREA') return;
      if (n.tagName === 'SLOT') {
        const assigned = n.assignedNodes({flatten: true});
        if (assigned.length) { for (const a of assigned) one(a); return; }
      }
      const style = getComputedStyle(n);
      const block = !style.display.startsWith('inline');
      if (block || gapBefore(style)) parts.push(' ');
      for (let c = n.firstChild; c; c = c.nextSibling) one(c);
      if (block || gapAfter(style)) parts.push(' ');
    };
    for (let n = label.firstChild; n; n = n.nextSibling) one(n);
    return norm(parts.join(''));
  }
  function idrefText(el, ids) {
    const root = el.getRootNode();
    const parts = [];
    for (const id of ids.split(/\s+/)) {
      const ref = root.getElementById ? root.getElementById(id) : document.getElementById(id);
      if (ref) parts.push(ref.textContent);
    }
    return norm(parts.join(' '));
  }
  // The accessible-ish name: aria-labelledby, aria-label, <label>s, button-like input values, alt.
  function ownName(el, tag, type) {
    const by = el.getAttribute('aria-labelledby');
    if (by) { const t = idrefText(el, by); if (t) return t; }
    const aria = el.getAttribute('aria-label');
    if (aria && aria.trim()) return norm(aria);
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') {
      const labels = labelsOf.get(el);
      if (labels) {
        const parts = [];
        for (const label of labels) { const t = labelText(label, el); if (t) parts.push(t); }
        if (parts.length) return parts.join(' ');
      }
      if (tag === 'INPUT') {
        if (type === 'submit' || type === 'button' || type === 'reset') return norm(el.value || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : ''));
        if (type === 'image') return norm(el.alt || '');
      }
    }
    return '';
  }
  function containerLabel(el, tag) {
    const aria = el.getAttribute('aria-label');
    if (aria && aria.trim()) return clip(norm(aria), VALUE_MAX);
    const by = el.getAttribute('aria-labelledby');
    if (by) { const t = idrefText(el, by); if (t) return clip(t, VALUE_MAX); }
    if (tag === 'FIELDSET') {
      const legend = el.querySelector('legend');
      if (legend) return clip(norm(legend.textContent), VALUE_MAX);
    }
    return '';
  }

  // Full check for an element found outside the walk (a label's control may sit anywhere).
  function isRendered(el) {
    if (!el.checkVisibility({visibilityProperty: true})) return false;
    return hasSize(el);
  }
  // Inside the walk display and visibility are already known: only the size is left to check.
  function hasSize(el) {
    if (el.offsetWidth !== undefined) return el.offsetWidth > 0 && el.offsetHeight > 0;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }

  // Editor toolbars that show a toggle's state by a class only (Quill, Trix, CKEditor, TinyMCE's skin).
  const PRESSED_CLASS = /(?:^|\s)(?:ql-active|trix-active|tox-tbtn--enabled|ck-on|cke_button_on|is-active)(?:\s|$)/;
  function pushAria(a, el, tag, role) {
    for (const key of ['aria-expanded', 'aria-checked', 'aria-selected', 'aria-pressed']) {
      const v = el.getAttribute(key);
      if (v !== null) a.push(key, v);
      else if (key === 'aria-pressed' && (tag === 'BUTTON' || role === 'button')
        && typeof el.className === 'string' && PRESSED_CLASS.test(el.className)) a.push(key, 'true');
    }
    for (const key of ['aria-current', 'aria-invalid']) {
      const v = el.getAttribute(key);
      if (v !== null && v !== 'false') a.push(key, v);
    }
  }

  // Attributes in the documented order: type, role, name, placeholder, value, checked, selected, href,
  // aria-*, disabled, then flags. `editable`: the root of a contenteditable region, whose value is the
  // text it holds now (as a text field's is).
  function attributes(el, tag, type, control, editable) {
    const a = [];
    const source = control || el;
    if (tag === 'INPUT' || control) a.push('type', type);
    const role = el.getAttribute('role');
    if (role && role !== IMPLICIT_ROLE[tag]) a.push('role', role);
    const name = source.getAttribute('name');
    if (name) a.push('name', clip(name, VALUE_MAX));
    const placeholder = el.getAttribute('placeholder') || (editable ? el.getAttribute('aria-placeholder') || el.getAttribute('data-placeholder') : null);
    if (placeholder) a.push('placeholder', clip(norm(placeholder), VALUE_MAX));
    if (tag === 'INPUT' || control) {
      if (type === 'checkbox' || type === 'radio') {
        const v = source.getAttribute('value');
        if (v !== null && v !== 'on') a.push('value', clip(v, VALUE_MAX));
        if (source.checked) a.push('checked', true);
      } else if (type === 'password') {
        if (el.value) a.push('value', '••••••');  // secrets never reach the model
      } else if (type === 'file') {
        if (el.files && el.files.length) a.push('value', clip(Array.from(el.files, (f) => f.name).join(', '), VALUE_MAX));
      } else if (type !== 'submit' && type !== 'button' && type !== 'reset' && type !== 'image') {
        if (el.value) a.push('value', clip(visibleOnly(el.value), VALUE_MAX));
      }
    } else if (tag === 'TEXTAREA') {
      if (el.value) a.push('value', clip(norm(el.value), VALUE_MAX));
    } else if (tag === 'SELECT') {
      const chosen = Array.from(el.selectedOptions, (o) => norm(o.label));
      if (chosen.length) a.push('value', clip(chosen.join(', '), VALUE_MAX));
      const labels = [];
      const options = el.options;
      for (let i = 0; i < options.length && i < 6; i++) labels.push(norm(options[i].label));
      if (options.length > 6) labels.push('… ' + options.length + ' options');
      a.push('options', clip(labels.join(' | '), VALUE_MAX * 2));
    } else if (tag === 'BUTTON') {
      // What tells two "Submit" buttons apart (one saves a draft): the value they send.
      const v = el.getAttribute('value');
      if (v && v.trim() && norm(v) !== norm(el.textContent || '')) a.push('value', clip(norm(v), VALUE_MAX));
    } else if (tag === 'OPTION' && el.selected) {
      a.push('selected', true);
    } else if (editable) {
      const text = editableText(el);
      if (text) a.push('value', clip(text, VALUE_MAX));
    } else if (role && RANGE_ROLES.has(role)) {
      const v = el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow');
      if (v) a.push('value', clip(norm(v), VALUE_MAX));
    }
    if (tag === 'A') {
      const href = el.getAttribute('href');
      if (href && href !== '#' && !href.startsWith('javascript:')) a.push('href', clip(href, VALUE_MAX));
    }
    if (tag === 'SUMMARY' && el.parentElement && el.parentElement.tagName === 'DETAILS') {
      a.push('aria-expanded', el.parentElement.open ? 'true' : 'false');
    }
    pushAria(a, el, tag, role);
    // :disabled also covers controls inside a disabled <fieldset>, which have .disabled === false.
    if ((FORM_CONTROLS.has(source.tagName) && source.matches(':disabled')) || el.getAttribute('aria-disabled') === 'true') {
      a.push('disabled', true);
    }
    if (source.readOnly && (tag === 'INPUT' || tag === 'TEXTAREA')) a.push('readonly', true);
    if (source.required) a.push('required', true);
    if (tag === 'INPUT' && source.multiple) a.push('multiple', true);
    if (tag === 'INPUT' && (type === 'range' || type === 'number' || type === 'date')) {
      if (el.min) a.push('min', el.min);
      if (el.max) a.push('max', el.max);
    } else if (role && RANGE_ROLES.has(role) && !control) {
      const min = el.getAttribute('aria-valuemin'), max = el.getAttribute('aria-valuemax');
      if (min) a.push('min', min);
      if (max) a.push('max', max);
    }
    // Not shown to the model (keys starting with "_"): what replay needs to check a submit — the
    // form a control belongs to, whether it submits it, and a select's every option.
    if (FORM_CONTROLS.has(source.tagName) && source.form) {
      a.push('_form', String(formIndex(source.form)));
      const action = source.form.getAttribute('action');
      if (action) a.push('_action', clip(action, VALUE_MAX));
      if ((source.tagName === 'BUTTON' || (source.tagName === 'INPUT' && (type === 'submit' || type === 'image')))
          && source.type === (source.tagName === 'BUTTON' ? 'submit' : type)) {
        a.push('_submit', (source.getAttribute('formmethod') || source.form.getAttribute('method') || 'get').toLowerCase());
      }
    }
    if (tag === 'SELECT') {
      const all = [];
      for (let i = 0; i < el.options.length && i < 300; i++) all.push(norm(el.options[i].label));
      a.push('_options', all.join(' | '));
    }
    return a;
  }
  let formIndexes = null;
  function formIndex(form) {
    if (formIndexes === null) {
      formIndexes = new Map();
      Array.from(document.forms).forEach((f, i) => formIndexes.set(f, i));
    }
    const found = formIndexes.get(form);
    return found === undefined ? -1 : found;
  }

  // Widgets with a value on a scale (a slider's handle): its value, min and max as a range input shows them.
  const RANGE_ROLES = new Set(['slider', 'spinbutton', 'scrollbar', 'progressbar', 'meter']);

  // ---- Rich text: what an editable region holds, with the formatting a model must see ----

  const RICH_MARKS = {B: '**', STRONG: '**', I: '*', EM: '*', S: '~~', STRIKE: '~~', DEL: '~~', CODE: '`', U: '__'};
  const BLOCKS = new Set(['P', 'DIV', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'BLOCKQUOTE', 'PRE', 'UL', 'OL', 'LI',
    'TABLE', 'TR', 'SECTION', 'ARTICLE', 'FIGURE', 'HR']);
  // What an editable region holds, written markdown-like, its lines (paragraphs, line breaks, list
  // items) joined with a newline (the tree shows it as \n): **bold**, *italic*, __underline__,
  // ~~struck~~, `code`, # headings, "- " and "1. " list items, "> " quotes, [text](href) links.
  const editableText = (el) => markdown(el);
  function markdown(root) {
    const inline = (node, list) => {
      let out = '';
      for (let n = node.firstChild; n; n = n.nextSibling) {
        if (n.nodeType === 3) { out += visibleOnly(n.data).replace(/\s+/g, ' '); continue; }
        if (n.nodeType !== 1 || SKIP.has(n.tagName)) continue;
        const t = n.tagName;
        if (t === 'BR') { out += '\n'; continue; }
        if (t === 'UL' || t === 'OL') {
          let number = 0;
          for (let li = n.firstElementChild; li; li = li.nextElementSibling) {
            if (li.tagName !== 'LI') continue;
            number++;
            // Quill 2 writes every list as <ol> and says which kind on each item.
            const bullet = t === 'UL' || li.getAttribute('data-list') === 'bullet';
            out += '\n' + INDENT.repeat(list) + (bullet ? '- ' : number + '. ') + inline(li, list + 1).trim() + '\n';
          }
          continue;
        }
        const inner = inline(n, list);
        const mark = RICH_MARKS[t] || (BLOCKS.has(t) || t === 'A' ? undefined : styleMark(n));
        if (mark) {
          const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(inner);
          const close = mark.length > 2 ? mark.match(/\*\*|__|\*/g).reverse().join('') : mark;
          out += m[2] ? m[1] + mark + m[2] + close + m[3] : inner;
        } else if (t === 'A' && n.getAttribute('href')) {
          out += '[' + inner.trim() + '](' + n.getAttribute('href') + ')';
        } else if (BLOCKS.has(t)) {
          const head = t.length === 2 && t[0] === 'H' && t[1] >= '1' && t[1] <= '6' ? '#'.repeat(+t[1]) + ' '
            : t === 'BLOCKQUOTE' ? '> ' : '';
          out += '\n' + head + inner.trim() + '\n';
        } else {
          out += inner;
        }
      }
      return out;
    };
    return inline(root, 0).split('\n').map((line) => line.trim().replace(/\u0001/g, '  ')).filter((line) => line)
      .join('\n');
  }
  // Formatting an editor applies as inline style (<span style="font-weight: bold">, a weight of 600 or
  // more, font-style: italic, text-decoration: underline) where the text around it has none.
  function styleMark(n) {
    const parent = n.parentElement;
    if (!parent || (!n.hasAttribute('style') && !n.hasAttribute('class'))) return undefined;
    const own = getComputedStyle(n), around = getComputedStyle(parent);
    let mark = '';
    if (parseInt(own.fontWeight, 10) >= 600 && parseInt(around.fontWeight, 10) < 600) mark += '**';
    if (own.fontStyle === 'italic' && around.fontStyle !== 'italic') mark += '*';
    if (own.textDecorationLine.includes('underline') && !around.textDecorationLine.includes('underline')) mark += '__';
    return mark || undefined;
  }
  const INDENT = '\u0001';  // a nested list item's indent, kept through the trimming of its line

  // ---- Tables of inputs: a control in a cell is named by its column's header (and its row's) ----

  const columnHeaders = new Map();  // table -> header text per column ([] when it has none)
  const rowHeaders = new Map();  // row -> the text of its <th> ('' when none)
  function headersOf(table) {
    let names = columnHeaders.get(table);
    if (names !== undefined) return names;
    names = [];
    const head = table.tHead && table.tHead.rows.length ? table.tHead.rows[table.tHead.rows.length - 1]
      : table.rows.length && Array.prototype.every.call(table.rows[0].cells, (c) => c.tagName === 'TH') ? table.rows[0] : null;
    if (head) {
      for (const cell of head.cells) {
        const text = clip(norm(cell.textContent), VALUE_MAX);
        for (let i = 0; i < cell.colSpan; i++) names.push(text);
      }
    }
    columnHeaders.set(table, names);
    return names;
  }
  function rowHeaderOf(row) {
    let name = rowHeaders.get(row);
    if (name === undefined) {
      name = '';
      const cells = row.cells;
      for (let i = 0; i < cells.length; i++) if (cells[i].tagName === 'TH') { name = clip(norm(cells[i].textContent), VALUE_MAX); break; }
      rowHeaders.set(row, name);
    }
    return name;
  }
  // A parent walk and the cell's index, not closest() and a scan of the row: a table of inputs has
  // thousands of them on an admin page.
  function cellHeader(el) {
    let cell = el.parentElement;
    for (let depth = 0; cell !== null && depth < 4; depth++) {
      const t = cell.tagName;
      if (t === 'TD' || t === 'TH') break;
      if (t === 'TR' || t === 'TABLE' || t === 'BODY') return '';
      cell = cell.parentElement;
    }
    if (cell === null || (cell.tagName !== 'TD' && cell.tagName !== 'TH')) return '';
    const row = cell.parentElement;
    if (row === null || row.tagName !== 'TR') return '';
    const section = row.parentElement;
    const table = section === null ? null : section.tagName === 'TABLE' ? section : section.parentElement;
    if (table === null || table.tagName !== 'TABLE') return '';
    const names = headersOf(table);
    let column = cell.cellIndex;
    if (names.length) {
      const cells = row.cells;
      for (let i = column - 1; i >= 0; i--) column += cells[i].colSpan - 1;
    }
    const name = names[column] || '';
    const rowName = section === table.tHead ? '' : rowHeaderOf(row);
    return rowName && name && rowName !== name ? name + ', ' + rowName : name || rowName;
  }

  function isScrollable(el, tag, overflow) {
    if (tag === 'BODY' || tag === 'HTML' || overflow === null) return false;
    return (overflow === 'auto' || overflow === 'scroll') && el.scrollHeight > el.clientHeight + 1;
  }
  // Which part of a scroll box's content shows, as `scrollable="0-40%"` says: from the top of what
  // shows to its bottom, in percent of the content's height.
  function scrolledRange(el) {
    const total = el.scrollHeight;
    const from = Math.round(100 * el.scrollTop / total);
    const to = Math.min(100, Math.round(100 * (el.scrollTop + el.clientHeight) / total));
    return from + '-' + to + '%';
  }

  // 0: not interactive; 2: surely (native control, widget role, editable, scroll container);
  // 1: probably (tabindex, click listener, pointer cursor) - dropped again if it wraps many controls.
  // `grab`: a grab or move cursor where its parent has none (a drag handle, a sortable list's item).
  function isInteractive(el, tag, role, attrs, cursorPointer, parentPointer, overflow, grab) {
    if (NATIVE.has(tag)) {
      return tag !== 'A' || el.hasAttribute('href') || cursorPointer || (listeners !== null && listeners.has(el)) ? 2 : 0;
    }
    if (tag === 'BODY' || tag === 'HTML') return 0;
    let weak = false;
    if (attrs) {
      if (role && WIDGET_ROLES.has(role)) return 2;
      if (el.hasAttribute('contenteditable') && el.isContentEditable) return 2;
      const tabindex = el.getAttribute('tabindex');
      weak = (tabindex !== null && parseInt(tabindex, 10) >= 0) || el.hasAttribute('onclick')
        || el.getAttribute('draggable') === 'true';
    }
    if (isScrollable(el, tag, overflow)) return 2;
    if (weak || (listeners !== null && listeners.has(el)) || el.onclick !== null  // handler set as a property
      || (cursorPointer && !parentPointer) || grab) return 1;
    return 0;
  }
