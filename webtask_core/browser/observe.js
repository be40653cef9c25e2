// One pass over this frame's document. Returns a JSON string {title, url, scroll, items} and stamps
// a data-wt-id mark on every interactive element. Ids are numbered from 0 in this frame
// (tag-N per tag); Python renumbers them across frames and restamps when they differ.
//
// An item is a string (plain text), an array (an interactive element) or an object:
//   element:    [tag, [key, value|true, ...], text, role, children?]   (its id is tag-N, N counted per
//               tag in document order within this frame; Python recounts the same way)
//   structure:  {t: "h1"|"label"|"form"|"table"|"row"|"list"|"dialog"|"alert"|"img"|..., x, c}
//   frame:      {t: "iframe", x: title, k: frame key}   (Python inserts the child frame's items)
//
// With opts.positions (a tree budget is set), every list of items comes with a parallel flat list of
// where each item lies, [top0, bottom0, top1, bottom1, ...] in CSS pixels from this frame's viewport
// top (result.pos for the top level; index 5 of an element with children; `p` of a structure; `y` of a
// frame is its content's top, to offset the child frame's positions). A container spans its own box
// and its children's (content may overflow its box). null, null means "never elide": a hidden file
// input, the focused element (a focused frame) and every container holding one.
(opts) => {
  const MARK = opts.mark;
  const FRAME_KEY = opts.frameAttribute;
  const TEXT_MAX = opts.textMax;
  const VALUE_MAX = opts.valueMax;
  const MARKS = Symbol.for('webtask.marks');
  const listeners = window[Symbol.for('webtask.listeners')] || null;
  const POSITIONS = opts.positions === true;
  const KEEP = [null, null];
  let focused = POSITIONS ? document.activeElement : null;
  while (focused && focused.shadowRoot && focused.shadowRoot.activeElement) focused = focused.shadowRoot.activeElement;
  const range = POSITIONS ? document.createRange() : null;

  // Marks are rewritten only where they change (attribute writes are the costliest part of a pass);
  // marks from an earlier observation that this pass did not renew are removed at the end.
  const PASS = Symbol.for('webtask.pass');
  const pass = (window[PASS] || 0) + 1;
  window[PASS] = pass;
  const marks = [];
  const counters = Object.create(null);

  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'META', 'LINK', 'HEAD', 'TITLE', 'OPTION',
    'OPTGROUP', 'DATALIST', 'PARAM', 'SOURCE', 'TRACK', 'AREA', 'MAP', 'BASE', 'OBJECT', 'EMBED']);
  const FORM_CONTROLS = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA']);
  const NATIVE = new Set(['A', 'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'SUMMARY']);
  const WIDGET_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'switch', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem']);
  const CONTAINERS = {FORM: 'form', FIELDSET: 'fieldset', TABLE: 'table', TR: 'row', UL: 'list', OL: 'list',
    NAV: 'nav', DIALOG: 'dialog'};
  const ROLE_CONTAINERS = {dialog: 'dialog', alertdialog: 'dialog', alert: 'alert', status: 'status',
    navigation: 'nav', list: 'list', listbox: 'list', menu: 'list', tablist: 'list', row: 'row', table: 'table',
    grid: 'table', form: 'form', radiogroup: 'group', group: 'group'};
  const HEADINGS = {H1: 'h1', H2: 'h2', H3: 'h3', H4: 'h4', H5: 'h5', H6: 'h6'};
  const TEXT_INPUTS = new Set(['text', 'email', 'number', 'search', 'tel', 'url', 'date', 'datetime-local',
    'month', 'week', 'time', 'range', 'color', 'password']);
  const IMPLICIT_ROLE = {A: 'link', BUTTON: 'button', SELECT: 'combobox', TEXTAREA: 'textbox', SUMMARY: 'button'};
  const INPUT_ROLE = {checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton',
    search: 'searchbox', button: 'button', submit: 'button', reset: 'button', image: 'button', file: 'button'};

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

  const clip = (s, max) => (s.length > max ? s.slice(0, max - 1) + '…' : s);
  const WEAK_MAX_INSIDE = 5;  // controls inside a weakly clickable container before it counts as delegation
  const MELT_MAX = 200;  // longest descendant text that becomes an element's name
  const norm = (s) => s.replace(/\s+/g, ' ').trim();
  const NON_BLANK = /\S/;

  // A container collects items; adjacent inline text is glued into one string until a block boundary.
  // `pos` holds two numbers per item (see the header) when POSITIONS.
  const container = () => ({items: [], pos: [], open: false});
  function pushText(c, text, node) {
    if (c.open) c.items[c.items.length - 1] += text;
    else if (NON_BLANK.test(text)) {
      c.items.push(text);
      c.open = true;
      if (POSITIONS) {  // a run of glued text lies where its first text node does
        range.selectNodeContents(node);
        const r = range.getBoundingClientRect();
        c.pos.push(Math.floor(r.top), Math.ceil(r.bottom));
      }
    }
  }
  function pushItem(c, item, box) {
    c.items.push(item);
    c.open = false;
    if (POSITIONS) c.pos.push(box[0], box[1]);
  }
  // The finished items and their positions.
  function finish(c) {
    const items = [], pos = [];
    for (let i = 0; i < c.items.length; i++) {
      const item = c.items[i];
      if (typeof item === 'string') { const t = norm(item); if (!t) continue; items.push(clip(t, TEXT_MAX)); }
      else items.push(item);
      if (POSITIONS) pos.push(c.pos[2 * i], c.pos[2 * i + 1]);
    }
    return {items, pos};
  }
  const boxAt = (f, i) => (POSITIONS ? [f.pos[2 * i], f.pos[2 * i + 1]] : null);
  // Where a container lies: its own box and everything inside it; KEEP if anything inside must stay.
  function span(el, pos) {
    if (!POSITIONS) return null;
    const r = el.getBoundingClientRect();
    let top = Math.floor(r.top), bottom = Math.ceil(r.bottom);
    for (let i = 0; i < pos.length; i += 2) {
      const t = pos[i];
      if (t === null) return KEEP;
      if (t < top) top = t;
      if (pos[i + 1] > bottom) bottom = pos[i + 1];
    }
    return [top, bottom];
  }
  // Items that carry no interactive element melt into text (used for an interactive element's name).
  function hasInteractive(item) { return typeof item !== 'string' && (Array.isArray(item) || item.k !== undefined || item.i === 1); }
  function interactiveOnly(f) {
    const items = [], pos = [];
    for (let i = 0; i < f.items.length; i++) {
      if (!hasInteractive(f.items[i])) continue;
      items.push(f.items[i]);
      if (POSITIONS) pos.push(f.pos[2 * i], f.pos[2 * i + 1]);
    }
    return {items, pos};
  }
  function textOf(items, into) {
    for (const item of items) {
      if (typeof item === 'string') into.push(item);
      else if (!Array.isArray(item)) { if (item.x) into.push(item.x); if (item.c) textOf(item.c, into); }
    }
    return into;
  }

  function describe(el) {
    const id = el.id ? '#' + el.id : '';
    const cls = typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\s+/).slice(0, 2).join('.') : '';
    return clip(el.tagName.toLowerCase() + id + cls, 60);
  }
  function hintFor(el) {
    const title = el.getAttribute('title');
    if (title && title.trim()) return clip(norm(title), VALUE_MAX);
    const svgTitle = el.querySelector('svg title');
    if (svgTitle && svgTitle.textContent.trim()) return clip(norm(svgTitle.textContent), VALUE_MAX);
    if (el.id) return clip(el.id, VALUE_MAX);
    if (typeof el.className === 'string' && el.className.trim()) return clip(el.className.trim().split(/\s+/).slice(0, 3).join(' '), VALUE_MAX);
    return '';
  }

  // Text of a <label> without the text of the control it labels (a <select> inside would add options).
  function labelText(label, control) {
    let text = '';
    const walker = document.createTreeWalker(label, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode(node) {
        if (node === control) return NodeFilter.FILTER_REJECT;
        if (node.nodeType === 1) return SKIP.has(node.tagName) || node.tagName === 'SELECT' || node.tagName === 'TEXTAREA'
          ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
        return NodeFilter.FILTER_ACCEPT;
      },
    });
    for (let n = walker.nextNode(); n; n = walker.nextNode()) text += n.data + ' ';
    return norm(text);
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

  function nextId(tag) {
    const n = counters[tag] || 0;
    counters[tag] = n + 1;
    return tag + '-' + n;
  }
  const idTag = (tagName) => tagName.toLowerCase().replace(/[^a-z0-9]/g, '') || 'el';
  // An element reserves its slot before its children are walked, so ids follow document order even
  // though a weakly clickable container is only confirmed (or dropped) after its children.
  const slots = [];
  function numberAndStamp() {
    for (const slot of slots) {
      if (slot === null) continue;
      const el = slot[0];
      const id = nextId(slot[1]);
      if (el.getAttribute(MARK) !== id) el.setAttribute(MARK, id);
      el[PASS] = pass;
      marks.push(el);
    }
  }

  function pushAria(a, el) {
    for (const key of ['aria-expanded', 'aria-checked', 'aria-selected', 'aria-pressed']) {
      const v = el.getAttribute(key);
      if (v !== null) a.push(key, v);
    }
    for (const key of ['aria-current', 'aria-invalid']) {
      const v = el.getAttribute(key);
      if (v !== null && v !== 'false') a.push(key, v);
    }
  }

  // Attributes in the documented order: type, role, name, placeholder, value, checked, selected, href,
  // aria-*, disabled, then flags, hint.
  function attributes(el, tag, type, control) {
    const a = [];
    const source = control || el;
    if (tag === 'INPUT' || control) a.push('type', type);
    const role = el.getAttribute('role');
    if (role && role !== IMPLICIT_ROLE[tag]) a.push('role', role);
    const name = source.getAttribute('name');
    if (name) a.push('name', clip(name, VALUE_MAX));
    const placeholder = el.getAttribute('placeholder');
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
        if (el.value) a.push('value', clip(el.value, VALUE_MAX));
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
    } else if (tag === 'OPTION' && el.selected) {
      a.push('selected', true);
    }
    if (tag === 'A') {
      const href = el.getAttribute('href');
      if (href && href !== '#' && !href.startsWith('javascript:')) a.push('href', clip(href, VALUE_MAX));
    }
    if (tag === 'SUMMARY' && el.parentElement && el.parentElement.tagName === 'DETAILS') {
      a.push('aria-expanded', el.parentElement.open ? 'true' : 'false');
    }
    pushAria(a, el);
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
    }
    return a;
  }

  function emitElement(c, el, tag, opts2) {
    const type = opts2.type || (tag === 'INPUT' ? (el.type || 'text') : null);
    const slot = slots.length;
    slots.push(null);
    const a = attributes(el, tag, type, opts2.control);
    if (opts2.contentEditable) a.push('contenteditable', true);
    if (opts2.scrollable) a.push('scrollable', true);
    if (opts2.hidden) a.push('hidden', true);
    let children = {items: [], pos: []};
    let text = opts2.name !== undefined ? opts2.name : ownName(el, tag, type);
    if (opts2.walk) {
      const inner = container();
      walkChildren(el, inner, opts2.pointer, opts2.visible);
      const f = finish(inner);
      if (opts2.weak && slots.length - slot - 1 > WEAK_MAX_INSIDE) {
        // A listener or pointer cursor on a container of many controls is event delegation, not a
        // control: keep its content in place and drop the container.
        c.open = false;
        for (let i = 0; i < f.items.length; i++) pushItem(c, f.items[i], boxAt(f, i));
        return;
      }
      if (!text && !f.items.length && !hasSize(el)) return;  // empty and zero-size: nothing to see
      const melted = opts2.scrollable || text ? '' : norm(textOf(f.items, []).join(' '));
      if (opts2.scrollable || melted.length > MELT_MAX) {
        children = f;  // too much content to squeeze into a name: show it under the element
      } else {
        if (!text) text = melted;
        children = interactiveOnly(f);
      }
    }
    if (!text && tag !== 'INPUT' && tag !== 'SELECT' && tag !== 'TEXTAREA') {
      const hint = hintFor(el);
      if (hint) a.push('hint', hint);
    }
    const role = el.getAttribute('role') || IMPLICIT_ROLE[tag]
      || (tag === 'INPUT' || opts2.control ? INPUT_ROLE[type] || 'textbox' : null);
    const g = idTag(opts2.idTag || tag);
    const item = [g, a, clip(text, TEXT_MAX), role || ''];
    if (children.items.length) {
      item.push(children.items);
      if (POSITIONS) item.push(children.pos);
    }
    slots[slot] = [el, g];
    pushItem(c, item, opts2.hidden || el === focused ? KEEP : span(el, children.pos));
  }

  // Upload targets stay visible to the model even when the page hides the real <input type=file>.
  function hiddenFileInputs(el, c) {
    if (el.tagName === 'INPUT') {
      if (el.type === 'file') emitElement(c, el, 'INPUT', {hidden: true});
      return;
    }
    for (const input of el.querySelectorAll('input[type=file]')) emitElement(c, input, 'INPUT', {hidden: true});
  }

  function walkChildren(parent, c, pointer, visible) {
    const root = parent.shadowRoot;  // open shadow roots only; closed ones are unreachable by design
    if (root) indexLabels(root);
    for (let node = (root || parent).firstChild; node; node = node.nextSibling) visit(node, c, pointer, visible);
  }

  function walkStructure(el, c, kind, label, pointer, visible) {
    const inner = container();
    walkChildren(el, inner, pointer, visible);
    const f = finish(inner);
    c.open = false;
    if (kind === 'h' || kind === 'alert' || kind === 'status') {
      const text = norm(textOf(f.items, []).join(' '));
      const children = interactiveOnly(f);
      if (!text && children.items.length === 1) { pushItem(c, children.items[0], boxAt(children, 0)); return; }
      if (!text && !children.items.length) return;
      const item = {t: kind === 'h' ? label : kind, x: clip(text, TEXT_MAX)};
      if (children.items.length) {
        item.c = children.items;
        item.i = 1;
        if (POSITIONS) item.p = children.pos;
      }
      pushItem(c, item, span(el, children.pos));
      return;
    }
    if (!f.items.length) return;
    if (f.items.length === 1 && !label) { pushItem(c, f.items[0], boxAt(f, 0)); return; }
    const item = {t: kind, x: label || '', c: f.items};
    if (POSITIONS) item.p = f.pos;
    if (f.items.some(hasInteractive)) item.i = 1;
    pushItem(c, item, span(el, f.pos));
  }

  function visit(node, c, pointer, visible) {
    const nodeType = node.nodeType;
    if (nodeType === 3) { if (visible) pushText(c, node.data, node); return; }
    if (nodeType !== 1) return;
    const el = node;
    const tag = el.tagName;
    if (SKIP.has(tag)) return;
    if (tag === 'SLOT') {
      const assigned = el.assignedNodes();
      if (assigned.length) for (const n of assigned) visit(n, c, pointer, visible);
      else walkChildren(el, c, pointer, visible);
      return;
    }
    // Most elements of a big page carry no attributes at all: skip every attribute lookup for them.
    const attrs = el.hasAttributes();
    if (attrs && el.getAttribute('aria-hidden') === 'true') { hiddenFileInputs(el, c); return; }
    const style = getComputedStyle(el);
    const display = style.display;
    if (display === 'none') { hiddenFileInputs(el, c); return; }
    if (display === 'contents') { walkChildren(el, c, pointer, visible); return; }
    const selfVisible = style.visibility === 'visible';
    const cursorPointer = style.cursor === 'pointer';
    // Overflow matters only for elements with content: scroll containers, and zero-size clipping boxes.
    const overflow = el.firstChild !== null && display !== 'inline' ? style.overflowY : null;  // n/a to inline boxes
    if ((overflow === 'hidden' || overflow === 'clip') && !hasSize(el)) { hiddenFileInputs(el, c); return; }
    const role = attrs ? el.getAttribute('role') : null;
    const inline = display.startsWith('inline');
    if (!inline) c.open = false;
    else if (c.open) c.items[c.items.length - 1] += ' ';  // element boundary: keep words apart

    if (tag === 'INPUT' && el.type === 'hidden') return;
    if (tag === 'svg' || tag === 'IMG' || tag === 'CANVAS' || tag === 'VIDEO') {
      if (!selfVisible) return;
      const alt = tag === 'IMG' ? norm(el.getAttribute('alt') || '') : '';
      if (isInteractive(el, tag, role, attrs, cursorPointer, pointer, overflow)) {
        if (hasSize(el)) emitElement(c, el, tag, {walk: false, name: alt});
      } else if (alt) {
        pushItem(c, {t: 'img', x: clip(alt, TEXT_MAX)}, span(el, []));
      }
      return;
    }
    if (tag === 'IFRAME' || tag === 'FRAME') {
      if (!selfVisible || !hasSize(el)) return;
      const item = {t: 'iframe', x: clip(norm(el.getAttribute('title') || el.getAttribute('name') || ''), TEXT_MAX)};
      const key = el.getAttribute(FRAME_KEY);
      if (key) { item.k = key; }
      let box = null;
      if (POSITIONS) {
        box = span(el, []);
        item.y = Math.round(el.getBoundingClientRect().top + el.clientTop);
        if (el === focused) box = KEEP;  // the focus is inside this frame
      }
      pushItem(c, item, box);
      return;
    }
    if (tag === 'LABEL' && selfVisible) {
      const control = el.control;
      if (control && control.type !== 'file' && !isRendered(control) && (control.type === 'checkbox' || control.type === 'radio')) {
        // The real checkbox is hidden behind a styled label: the label stands in for it.
        if (hasSize(el)) emitElement(c, el, 'LABEL', {type: control.type, control, idTag: 'label', walk: true, pointer: cursorPointer, visible: true});
        return;
      }
      if (control && (control.type === 'file' || isRendered(control))) {
        // The control carries this label's text as its name (a file input is kept even when hidden);
        // keep only the elements inside the label.
        const inner = container();
        walkChildren(el, inner, cursorPointer, false);
        const f = finish(inner);
        for (let i = 0; i < f.items.length; i++) if (typeof f.items[i] !== 'string') pushItem(c, f.items[i], boxAt(f, i));
        if (!inline) c.open = false;
        return;
      }
      walkStructure(el, c, 'label', '', cursorPointer, visible && selfVisible);
      return;
    }
    if (tag === 'DETAILS' && !el.open) {
      for (let child = el.firstElementChild; child; child = child.nextElementSibling) {
        if (child.tagName === 'SUMMARY') visit(child, c, pointer, visible);
      }
      return;
    }

    const interactive = selfVisible ? isInteractive(el, tag, role, attrs, cursorPointer, pointer, overflow) : 0;
    if (interactive) {
      const leaf = tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA';
      // A container's size is checked only if it shows nothing (see emitElement): visible text has a box.
      if (!leaf || hasSize(el)) {
        const editable = el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable);
        emitElement(c, el, tag, {
          walk: !leaf, pointer: cursorPointer, visible: selfVisible, contentEditable: editable,
          scrollable: isScrollable(el, tag, overflow), weak: interactive === 1,
        });
        if (!inline) c.open = false;
        return;
      }
      if (tag === 'INPUT' && el.type === 'file') { emitElement(c, el, tag, {hidden: true}); return; }
    } else if (tag === 'INPUT' && el.type === 'file') {
      emitElement(c, el, tag, {hidden: true});
      return;
    }

    const heading = HEADINGS[tag] || (role === 'heading' ? 'h' + (el.getAttribute('aria-level') || '2') : null);
    if (heading) { walkStructure(el, c, 'h', heading, cursorPointer, selfVisible); return; }
    const kind = (role && ROLE_CONTAINERS[role]) || CONTAINERS[tag];
    if (kind) {
      const label = kind === 'form' || kind === 'dialog' || kind === 'fieldset' || kind === 'group' || kind === 'nav'
        ? containerLabel(el, tag) : '';
      walkStructure(el, c, kind, label, cursorPointer, selfVisible);
      return;
    }
    if (tag === 'BR') { pushText(c, ' ', node); return; }
    if (tag === 'LEGEND' && el.parentElement && el.parentElement.tagName === 'FIELDSET') return;  // the fieldset's label
    walkChildren(el, c, cursorPointer, selfVisible);
    if (!inline) c.open = false;
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

  function isScrollable(el, tag, overflow) {
    if (tag === 'BODY' || tag === 'HTML' || overflow === null) return false;
    return (overflow === 'auto' || overflow === 'scroll') && el.scrollHeight > el.clientHeight + 1;
  }

  // 0: not interactive; 2: surely (native control, widget role, editable, scroll container);
  // 1: probably (tabindex, click listener, pointer cursor) - dropped again if it wraps many controls.
  function isInteractive(el, tag, role, attrs, cursorPointer, parentPointer, overflow) {
    if (NATIVE.has(tag)) {
      return tag !== 'A' || el.hasAttribute('href') || cursorPointer || (listeners !== null && listeners.has(el)) ? 2 : 0;
    }
    if (tag === 'BODY' || tag === 'HTML') return 0;
    let weak = false;
    if (attrs) {
      if (role && WIDGET_ROLES.has(role)) return 2;
      if (el.hasAttribute('contenteditable') && el.isContentEditable) return 2;
      const tabindex = el.getAttribute('tabindex');
      weak = (tabindex !== null && parseInt(tabindex, 10) >= 0) || el.hasAttribute('onclick');
    }
    if (isScrollable(el, tag, overflow)) return 2;
    if (weak || (listeners !== null && listeners.has(el)) || el.onclick !== null  // handler set as a property
      || (cursorPointer && !parentPointer)) return 1;
    return 0;
  }

  const result = {title: document.title, url: location.href, items: [], scroll: null};
  if (document.body) {
    indexLabels(document);
    const root = container();
    const bodyStyle = getComputedStyle(document.body);
    walkChildren(document.body, root, bodyStyle.cursor === 'pointer', bodyStyle.visibility === 'visible');
    const f = finish(root);
    result.items = f.items;
    if (POSITIONS) result.pos = f.pos;
  }
  numberAndStamp();
  const previous = window[MARKS];
  if (previous) for (const el of previous) if (el[PASS] !== pass) el.removeAttribute(MARK);
  for (const el of document.querySelectorAll('[' + MARK + ']')) if (el[PASS] !== pass) el.removeAttribute(MARK);
  window[MARKS] = marks;
  const scroller = document.scrollingElement || document.documentElement;
  result.scroll = {y: scroller.scrollTop, h: scroller.scrollHeight, vh: window.innerHeight};
  return JSON.stringify(result);
}
