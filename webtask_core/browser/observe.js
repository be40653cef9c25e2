// One pass over this frame's document. Returns a JSON string {title, url, scroll, items} and stamps
// a data-wt-id mark on every interactive element. Ids are numbered from 0 in this frame
// (tag-N per tag); Python renumbers them across frames and restamps when they differ.
//
// An item is a string (a run of text), an array (an interactive element) or an object:
//   element:    [tag, [key, value|true, ...], text, role, children?, pos?, view?]   (its id is tag-N, N
//               counted per tag in document order within this frame; Python recounts the same way)
//   structure:  {t: "h1"|"label"|"form"|"table"|"row"|"list"|"dialog"|"alert"|"img"|"group"|"item"|
//               "article"|..., x, c}   ("group", "item", "article": a plain container that groups two
//               or more things, one of them at least a control; see walkGroup)
//   frame:      {t: "iframe", x: title, k: frame key}   (Python inserts the child frame's items)
//
// Positions: every list of items may come with a parallel flat list of where each item lies,
// [top0, bottom0, top1, bottom1, ...] in CSS pixels from this frame's viewport top (result.pos for the
// top level; index 5 of an element with children; `p` of a structure; `y` of a frame is its content's
// top, to offset the child frame's positions). A container spans its own box and its children's
// (content may overflow its box). null, null means "never elide": a hidden file input, the focused
// element (a focused frame) and every container holding one. They are measured everywhere with
// opts.positions (a tree budget is set), and always inside a scroll box, whose element item then
// carries at index 6 `view`: [top, bottom] of the box's visible area, to tell which of its items are
// out of view (index 5 is null when the pass measures nothing else).
(opts) => {
  const MARK = opts.mark;
  const FRAME_KEY = opts.frameAttribute;
  const TEXT_MAX = opts.textMax;
  const VALUE_MAX = opts.valueMax;
  const MARKS = Symbol.for('webtask.marks');
  const STAMP = opts.stamp !== false;  // false: a look that leaves the last observation's marks alone
  const listeners = window[Symbol.for('webtask.listeners')] || null;
  const POSITIONS = opts.positions === true;
  const KEEP = [null, null];
  let focused = POSITIONS ? document.activeElement : null;
  while (focused && focused.shadowRoot && focused.shadowRoot.activeElement) focused = focused.shadowRoot.activeElement;
  const range = document.createRange();
  let measuring = POSITIONS;  // true while the walk is inside a scroll box, even without a budget

  // Marks are rewritten only where they change (attribute writes are the costliest part of a pass);
  // marks from an earlier observation that this pass did not renew are removed at the end.
  const PASS = Symbol.for('webtask.pass');
  const pass = (window[PASS] || 0) + 1;
  if (STAMP) window[PASS] = pass;
  const marks = [];
  const counters = Object.create(null);

  // @include observe_names.js
  // @include observe_widgets.js

  const WEAK_MAX_INSIDE = 8;  // controls inside a weakly clickable container before it counts as delegation
  const MELT_MAX = 200;  // longest descendant text that becomes an element's name
  // A plain container of more items than this (counted through all depths) is a region of the page,
  // not a unit like a row or a card: its items stay in place instead of under a group line.
  const GROUP_MAX_ITEMS = 40;
  const NON_BLANK = /\S/;
  // Text already set apart by a space needs no style asked (a char code: /\s$/ would scan the string).
  const spaceFirst = (text) => text.charCodeAt(0) <= 32;
  const spaceLast = (text) => text.charCodeAt(text.length - 1) <= 32;
  const CONTAINERS = {FORM: 'form', FIELDSET: 'fieldset', TABLE: 'table', TR: 'row', UL: 'list', OL: 'list',
    NAV: 'nav', DIALOG: 'dialog'};
  const ROLE_CONTAINERS = {dialog: 'dialog', alertdialog: 'dialog', alert: 'alert', status: 'status',
    navigation: 'nav', list: 'list', listbox: 'list', menu: 'list', tablist: 'list', row: 'row', table: 'table',
    grid: 'table', form: 'form', radiogroup: 'group', group: 'group', tree: 'tree'};
  const HEADINGS = {H1: 'h1', H2: 'h2', H3: 'h3', H4: 'h4', H5: 'h5', H6: 'h6'};
  const GROUP_KINDS = {LI: 'item', ARTICLE: 'article'};  // what a group line says; else "group"
  const GROUP_ROLES = {listitem: 'item', article: 'article'};
  const GRAB_CURSORS = new Set(['grab', 'move']);
  const parentCursor = (el) => {
    const parent = el.parentElement || (el.parentNode && el.parentNode.host);
    return parent ? getComputedStyle(parent).cursor : '';
  };
  const parked = (position) => position === 'absolute' || position === 'fixed';
  let pushed = 0;  // items pushed so far, at any depth: a container's size is the difference

  // A container collects items; adjacent inline text is glued into one string until a block boundary.
  // `pos` holds two numbers per item (see the header) when the container is measured (`m`). `gap`:
  // text that follows is set apart by a space (true), or is if the style of the inline element just
  // ended has a margin or padding on its right (asked only when text does follow).
  const container = () => ({items: [], pos: [], open: false, gap: false, m: measuring});
  function pushText(c, text, node) {
    if (c.open) {
      const gap = c.gap;
      c.items[c.items.length - 1] += gap && (gap === true || (!spaceFirst(text) && gapAfter(gap))) ? ' ' + text : text;
      c.gap = false;
    } else if (NON_BLANK.test(text)) {
      c.items.push(text);
      c.open = true;
      c.gap = false;
      pushed++;
      if (c.m) {  // a run of glued text lies where its first text node does
        range.selectNodeContents(node);
        const r = range.getBoundingClientRect();
        c.pos.push(Math.floor(r.top), Math.ceil(r.bottom));
      }
    }
  }
  function pushItem(c, item, box) {
    c.items.push(item);
    c.open = false;
    pushed++;
    if (c.m) c.pos.push(box[0], box[1]);
  }
  // The finished items and their positions.
  function finish(c) {
    const items = [], pos = [];
    for (let i = 0; i < c.items.length; i++) {
      const item = c.items[i];
      if (typeof item === 'string') { const t = norm(item); if (!t) continue; items.push(clip(t, TEXT_MAX)); }
      else items.push(item);
      if (c.m) pos.push(c.pos[2 * i], c.pos[2 * i + 1]);
    }
    return {items, pos, m: c.m};
  }
  const boxAt = (f, i) => (f.m ? [f.pos[2 * i], f.pos[2 * i + 1]] : null);
  // Where a container lies: its own box and everything inside it; KEEP if anything inside must stay.
  function span(el, pos) {
    if (!measuring) return null;
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
  // An item holding an interactive element (itself one, a frame, or a structure around one).
  function hasInteractive(item) { return typeof item !== 'string' && (Array.isArray(item) || item.k !== undefined || item.i === 1); }
  function interactiveOnly(f) {
    const items = [], pos = [];
    for (let i = 0; i < f.items.length; i++) {
      if (!hasInteractive(f.items[i])) continue;
      items.push(f.items[i]);
      if (f.m) pos.push(f.pos[2 * i], f.pos[2 * i + 1]);
    }
    return {items, pos, m: f.m};
  }
  // The text of the items that hold no interactive element (what melts into an element's name).
  function textOf(items, into) {
    for (const item of items) {
      if (typeof item === 'string') into.push(item);
      else if (!hasInteractive(item)) { if (item.x) into.push(item.x); if (item.c) textOf(item.c, into); }
    }
    return into;
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

  // Hints given so far, in walk order: a container compares its own with those of the controls inside.
  const hints = [];

  function emitElement(c, el, tag, opts2) {
    const type = opts2.type || (tag === 'INPUT' ? (el.type || 'text') : null);
    const slot = slots.length;
    const start = pushed;
    slots.push(null);
    const editable = opts2.contentEditable === true;
    const a = attributes(el, tag, type, opts2.control, editable && opts2.code === undefined);
    if (opts2.code) a.push('value', clip(opts2.code.replace(/\n+$/, ''), VALUE_MAX));
    if (editable) a.push('contenteditable', true);
    if (opts2.draggable || (tag !== 'A' && tag !== 'IMG' && el.getAttribute('draggable') === 'true')) a.push('draggable', true);
    let view = null;
    if (opts2.scrollable) {
      a.push('scrollable', scrolledRange(el));
      const top = el.getBoundingClientRect().top + el.clientTop;
      view = [Math.ceil(top), Math.floor(top + el.clientHeight)];  // what shows wholly, in whole pixels
    }
    if (opts2.hidden) a.push('hidden', true);
    let children = {items: [], pos: [], m: false};
    let text = opts2.name !== undefined ? opts2.name
      : (editable || (el.getAttribute('role') === 'textbox' && tag !== 'INPUT' && tag !== 'TEXTAREA')) && fieldName(el)
      || ownName(el, tag, type);
    if (!text && opts2.name === undefined && (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA')) {
      // In a table: its column's header; in a widget standing for a hidden field (a tag input): that field's label.
      text = cellHeader(el) || (tag === 'INPUT' && type === 'text' ? fieldName(el) : '');
    }
    const hintsBefore = hints.length;
    if (opts2.walk) {
      const outer = measuring;
      if (view) measuring = true;  // to tell which of the box's items are out of its view
      const inner = container();
      walkChildren(el, inner, opts2.pointer, opts2.visible);
      measuring = outer;
      // A wrapper inside (the row of a tree item) adds nothing to the element's own line: it groups.
      const f = foldGroups(finish(inner), true);
      if (opts2.weak && slots.length - slot - 1 > WEAK_MAX_INSIDE) {
        // A listener or pointer cursor on a container of many controls is event delegation, not a
        // control: drop it, and treat it as the plain container it is.
        const at = c.items.length, counted = pushed;
        c.open = false;
        for (let i = 0; i < f.items.length; i++) pushItem(c, f.items[i], boxAt(f, i));
        pushed = counted;  // moved, not new: they were counted when walked
        groupTail(c, el, 'group', at, start);
        return;
      }
      if (!text && !f.items.length && !hasSize(el)) return;  // empty and zero-size: nothing to see
      let controls = 0;
      for (const item of f.items) if (hasInteractive(item)) controls++;
      if (view) {
        children = f;  // a scroll box's content: each on its line
      } else if (editable) {
        // Its text is its value. Nothing inside gets a mark: an editor would keep the attribute in
        // the content it saves (TinyMCE does), and a link in the text is written as [text](href).
        for (let k = slot + 1; k < slots.length; k++) slots[k] = null;
      } else if (controls && f.items.length - controls >= 2) {
        children = f;  // texts set apart around controls: each on its line
      } else {
        const melted = text ? '' : norm(textOf(f.items, []).join(' '));
        if (melted.length > MELT_MAX) {
          children = f;  // too much content to squeeze into a name: show it under the element
        } else {
          if (!text) text = melted;
          children = interactiveOnly(f);
        }
      }
    }
    // An element with no name of its own gets a hint, unless the text under it says what it is, or a
    // control inside already has the same hint (a toggle sharing its container's class keeps it).
    if (!text && tag !== 'INPUT' && tag !== 'SELECT' && tag !== 'TEXTAREA' && children.items.every(hasInteractive)
      && !(text = iconName(el))) {
      const hint = hintFor(el);
      if (hint && hints.indexOf(hint, hintsBefore) === -1) {
        a.push('hint', hint);
        hints.push(hint);
      }
    }
    const role = el.getAttribute('role') || IMPLICIT_ROLE[tag]
      || (tag === 'INPUT' || opts2.control ? INPUT_ROLE[type] || 'textbox' : null);
    if (text && text.length <= 2) dayMarks(el, a);
    const g = idTag(opts2.idTag || tag);
    const item = [g, a, clip(text, TEXT_MAX), role || ''];
    if (children.items.length) {
      item.push(children.items);
      if (children.m) item.push(children.pos);
      if (view) { if (!children.m) item.push(null); item.push(view); }
    }
    slots[slot] = [el, g];
    pushItem(c, item, opts2.hidden || el === focused ? KEEP : span(el, children.pos));
  }

  // A plain container whose items were just pushed to `c` from index `at` on (`start`: the item count
  // before it): when it groups two or more things, one of them at least a control, and is small enough
  // to be a unit (a row, a card, a post, a field with its label), they move under one group line of
  // its own. Otherwise they stay in place: a single item needs no container, a region of the page is
  // not one thing.
  function groupTail(c, el, kind, at, start) {
    const n = c.items.length - at;
    if (n < 2 || pushed - start > GROUP_MAX_ITEMS) return;
    let controls = false;
    for (let i = at; i < c.items.length && !controls; i++) controls = hasInteractive(c.items[i]);
    if (!controls) return;
    const f = foldGroups(finish({items: c.items.splice(at), pos: c.m ? c.pos.splice(2 * at) : [], m: c.m}));
    const item = {t: kind, c: f.items, i: 1, g: 1};  // g: a plain container's group (see emitElement)
    if (f.m) item.p = f.pos;
    pushItem(c, item, span(el, f.pos));
  }
  // Plain groups inside a group (or an element) that add nothing to it fold into it: a bar of controls
  // only, and the one part holding controls beside mere decoration (a card's body beside its picture;
  // in an element, beside anything). Articles and list items stay: they are units of their own.
  const foldable = (item) => item.g === 1 && item.t === 'group';
  function foldGroups(f, inElement = false) {
    let groups = 0, others = false;
    for (const item of f.items) { if (foldable(item)) groups++; else if (hasInteractive(item)) others = true; }
    if (!groups) return f;
    const foldOne = groups === 1 && (inElement || !others);
    const items = [], pos = [];
    for (let i = 0; i < f.items.length; i++) {
      const item = f.items[i];
      if (foldable(item) && (foldOne || item.c.every(Array.isArray))) {
        for (let j = 0; j < item.c.length; j++) {
          items.push(item.c[j]);
          if (f.m) pos.push(item.p[2 * j], item.p[2 * j + 1]);
        }
      } else {
        items.push(item);
        if (f.m) pos.push(f.pos[2 * i], f.pos[2 * i + 1]);
      }
    }
    return {items, pos, m: f.m};
  }

  // Upload targets stay visible to the model even when the page hides the real <input type=file>.
  // Not those of a closed dialog (a modal's upload field is there once the modal opens).
  const DIALOGS = 'dialog, [role=dialog], [role=alertdialog], [aria-modal=true]';
  const inClosedDialog = (input) => { const dialog = input.closest(DIALOGS); return dialog !== null && !dialog.checkVisibility(); };
  function hiddenFileInputs(el, c) {
    if (el.tagName === 'INPUT') {
      if (el.type === 'file' && !inClosedDialog(el)) emitElement(c, el, 'INPUT', {hidden: true});
      return;
    }
    for (const input of el.querySelectorAll('input[type=file]')) if (!inClosedDialog(input)) emitElement(c, input, 'INPUT', {hidden: true});
  }

  const closedRoots = window[Symbol.for('webtask.closedRoots')] || null;
  function walkChildren(parent, c, pointer, visible) {
    // Open shadow roots, and closed ones listeners.js kept when the page made them.
    const root = parent.shadowRoot || (closedRoots !== null ? closedRoots.get(parent) : undefined);
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
        if (children.m) item.p = children.pos;
      }
      pushItem(c, item, span(el, children.pos));
      return;
    }
    if (!f.items.length) return;
    // A dialog keeps its line whatever it holds: the model must see that a modal is open, in every look.
    if (f.items.length === 1 && !label && kind !== 'dialog') { pushItem(c, f.items[0], boxAt(f, 0)); return; }
    const item = {t: kind, x: label || '', c: f.items};
    if (f.m) item.p = f.pos;
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
    const cursor = style.cursor;
    const cursorPointer = cursor === 'pointer';
    // An item one drags (a sortable list's <li>) shows a grab cursor that its parent does not.
    const grab = (cursor === 'grab' || cursor === 'move') && !GRAB_CURSORS.has(parentCursor(el));
    // Overflow matters only for elements with content: scroll containers, and zero-size clipping boxes.
    const overflow = el.firstChild !== null && display !== 'inline' ? style.overflowY : null;  // n/a to inline boxes
    if ((overflow === 'hidden' || overflow === 'clip') && !hasSize(el)) { hiddenFileInputs(el, c); return; }
    const role = attrs ? el.getAttribute('role') : null;
    const inline = display.startsWith('inline');
    // What cannot be seen nor clicked: a list whose drop-down says it is closed (its options may still
    // be laid out, fading or parked), a box parked off the page (left: -9999px) where no scroll reaches
    // (a positioned box is never inline; one with no attribute is parked by no class or style).
    if ((role === 'listbox' && closedList(el)) || (attrs && !inline && parked(style.position) && offPage(el))) {
      hiddenFileInputs(el, c);
      return;
    }
    if (!inline) c.open = false;
    else if (c.open && !spaceLast(c.items[c.items.length - 1]) && gapBefore(style)) {
      c.gap = true;  // the page sets it apart: so does the text
    }

    if (tag === 'INPUT' && el.type === 'hidden') return;
    if (tag === 'svg' || tag === 'IMG' || tag === 'CANVAS' || tag === 'VIDEO') {
      if (!selfVisible) return;
      const alt = tag === 'IMG' ? norm(el.getAttribute('alt') || '') : '';
      if (isInteractive(el, tag, role, attrs, cursorPointer, pointer, overflow, grab)) {
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
      if (measuring) {
        box = span(el, []);
        item.y = Math.round(el.getBoundingClientRect().top + el.clientTop);
        if (el === focused) box = KEEP;  // the focus is inside this frame
      }
      pushItem(c, item, box);
      return;
    }
    if (tag === 'LABEL' && selfVisible) {
      const control = el.control;
      const shown = control && isRendered(control) && !replacedOriginal(control, control.tagName, null);
      if (control && control.type !== 'file' && !shown && (control.type === 'checkbox' || control.type === 'radio')) {
        // The real checkbox is hidden behind a styled label: the label stands in for it.
        if (hasSize(el)) emitElement(c, el, 'LABEL', {type: control.type, control, idTag: 'label', walk: true, pointer: cursorPointer, visible: true});
        return;
      }
      if (control && (control.type === 'file' || shown)) {
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

    if (tag === 'DIV' && selfVisible && attrs && el.CodeMirror !== undefined) {
      const code = codeEditorText(el);
      if (code !== null) {  // CodeMirror 5: one text field, its lines as its value
        emitElement(c, el, tag, {walk: false, contentEditable: true, name: fieldName(el) || ownName(el, tag, null), code});
        c.open = false;
        return;
      }
    }
    const interactive = selfVisible ? isInteractive(el, tag, role, attrs, cursorPointer, pointer, overflow, grab) : 0;
    if (interactive) {
      const leaf = tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA';
      // A container's size is checked only if it shows nothing (see emitElement): visible text has a box.
      if (!leaf || (hasSize(el) && !(attrs && replacedOriginal(el, tag, style)))) {
        const editable = el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable);
        emitElement(c, el, tag, {
          walk: !leaf, pointer: cursorPointer, visible: selfVisible, contentEditable: editable,
          scrollable: isScrollable(el, tag, overflow), weak: interactive === 1, draggable: grab,
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
      const label = kind === 'form' || kind === 'dialog' || kind === 'fieldset' || kind === 'group' || kind === 'nav' || kind === 'tree'
        ? containerLabel(el, tag) : '';
      walkStructure(el, c, kind, label, cursorPointer, selfVisible);
      return;
    }
    if (tag === 'BR') { pushText(c, ' ', node); return; }
    if (tag === 'LEGEND' && el.parentElement && el.parentElement.tagName === 'FIELDSET') return;  // the fieldset's label
    if (inline) {  // its text flows on with the text around it
      walkChildren(el, c, cursorPointer, selfVisible);
      if (c.open && c.gap !== true) c.gap = style;  // its right side, asked if text follows
      return;
    }
    const at = c.items.length, start = pushed;
    walkChildren(el, c, cursorPointer, selfVisible);
    c.open = false;
    groupTail(c, el, GROUP_KINDS[tag] || (role && GROUP_ROLES[role]) || 'group', at, start);
  }

  const result = {title: document.title, url: location.href, items: [], scroll: null};
  if (document.body) {
    indexLabels(document);
    const root = container();
    const body = document.body;
    const bodyStyle = getComputedStyle(body);
    if (body.isContentEditable) {
      // A rich-text editor's iframe (TinyMCE, CKEditor 4): its whole body is the text field.
      emitElement(root, body, 'BODY', {walk: true, pointer: bodyStyle.cursor === 'pointer',
        visible: bodyStyle.visibility === 'visible', contentEditable: true, name: editorName(body)});
    } else {
      walkChildren(body, root, bodyStyle.cursor === 'pointer', bodyStyle.visibility === 'visible');
    }
    const f = finish(root);
    result.items = f.items;
    if (f.m) result.pos = f.pos;
  }
  if (STAMP) {
    numberAndStamp();
    const previous = window[MARKS];
    if (previous) for (const el of previous) if (el[PASS] !== pass) el.removeAttribute(MARK);
    for (const el of document.querySelectorAll('[' + MARK + ']')) if (el[PASS] !== pass) el.removeAttribute(MARK);
    window[MARKS] = marks;
  }
  const scroller = document.scrollingElement || document.documentElement;
  result.scroll = {y: scroller.scrollTop, h: scroller.scrollHeight, vh: window.innerHeight};
  return JSON.stringify(result);
}
