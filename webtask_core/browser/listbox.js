// The page's own select widgets (Tom Select, Choices.js, Slim Select, Shoelace's sl-select, a country
// button with its searchable list...): what select_option needs to open one, find an option in its
// list, and see what the widget shows. One function, by `op`, for the marked element `id` (the state
// between calls lives on the window):
//   'find'    the widget around the element: {ok, expanded, multiple, shown}; remembers which options
//             already showed (a chosen item the widget displays is one), to prefer those that appear
//   'opener'  where a person clicks to open it when the element itself is covered (the chosen tags of
//             a multiple select lie over its input): {x, y} in this frame's viewport, or null
//   'options' waits up to `waitMs` for options to show (with `want`, for one whose text holds it: the
//             list filtered by what was typed); with `scan`, scrolls a list that renders only the rows
//             in view (a virtual list) until the option whose text is `want` shows, or its end.
//             {options: [{text, disabled, fresh}, ...], typeable, seen} (typeable: the focus is in a
//             text field of the widget, where typing filters the list; seen: how many options the
//             scroll went past in all, and the first of their texts)
//   'option'  the element of option `index` of the last 'options' answer (for Playwright to click)
//   'shown'   {shown, expanded}: the text the widget shows now (its input's value included, the open
//             list left out; the control that opened its list too) and whether it says its list is open
({mark, id, op, index, waitMs, want, scan}) => {
  const KEY = Symbol.for('webtask.listbox');
  const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]/g;
  const norm = (s) => (s || '').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();
  const fold = (t) => norm(t).toLowerCase();
  const parentOf = (n) => n.assignedSlot || n.parentElement || (n.parentNode && n.parentNode.host) || null;
  const visible = (n) => n.checkVisibility({visibilityProperty: true, opacityProperty: true})
    && n.getClientRects().length > 0 && n.getBoundingClientRect().width > 0;
  const BOX_ROLES = ['combobox', 'listbox'];
  const POPUPS = ['listbox', 'true', 'menu'];
  const byIds = (el, ids) => {
    if (!ids) return null;
    const root = el.getRootNode();
    for (const one of ids.split(/\s+/)) {
      const found = root.getElementById ? root.getElementById(one) : document.getElementById(one);
      if (found) return found;
    }
    return null;
  };
  const controls = (n) => n.getAttribute('aria-controls') || n.getAttribute('aria-owns');
  // A button that opens a list it controls (intl-tel-input's country button) is a select too.
  const opensList = (n) => {
    if (!n.hasAttribute('aria-expanded')) return false;
    const popup = byIds(n, controls(n));
    return !!popup && (popup.getAttribute('role') === 'listbox' || !!popup.querySelector('[role=listbox], [role=option]'));
  };
  const isBox = (n) => n.nodeType === 1 && (BOX_ROLES.includes(n.getAttribute('role'))
    || POPUPS.includes(n.getAttribute('aria-haspopup')) || opensList(n));

  // Every [role=option] under `root`, through open shadow roots and the elements slotted into them.
  function optionsUnder(root, into, budget) {
    const visit = (node) => {
      for (let n = node.firstElementChild; n && budget.left > 0; n = n.nextElementSibling) {
        budget.left--;
        if (n.getAttribute('role') === 'option') into.push(n);
        if (n.shadowRoot) visit(n.shadowRoot);
        if (n.tagName === 'SLOT') for (const a of n.assignedElements({flatten: true})) { if (a.getAttribute('role') === 'option') into.push(a); visit(a); }
        visit(n);
      }
    };
    visit(root);
    return into;
  }
  // Text a person reads in the widget: visible text and the values of its fields, not its open list.
  // A <slot> (display: contents, no box of its own) reads as what is projected into it.
  function shownText(region, skip) {
    const parts = [];
    const one = (n) => {
      if (n.nodeType === 3) { parts.push(n.data); return; }
      if (n.nodeType !== 1 || skip.includes(n) || n.tagName === 'SCRIPT' || n.tagName === 'STYLE') return;
      if (n.tagName === 'SLOT') {
        const assigned = n.assignedNodes({flatten: true});
        if (assigned.length) { for (const a of assigned) one(a); return; }
      }
      const contents = getComputedStyle(n).display === 'contents';
      if (!contents && !n.checkVisibility({visibilityProperty: true, opacityProperty: true})) return;
      if ((n.tagName === 'INPUT' && n.type !== 'password' && n.type !== 'hidden') || n.tagName === 'TEXTAREA') {
        parts.push(' ' + n.value + ' ');
        return;
      }
      parts.push(' ');
      for (let c = (n.shadowRoot || n).firstChild; c; c = c.nextSibling) one(c);
      parts.push(' ');
    };
    one(region);
    return norm(parts.join('')).slice(0, 300);
  }
  const textOf = (o) => norm(o.innerText || o.textContent).slice(0, 120);
  // The box that scrolls the options (a virtual list renders only the rows in its view).
  const scroller = (options) => {
    for (let n = options.length ? parentOf(options[0]) : null; n && n !== document.body; n = parentOf(n)) {
      const s = getComputedStyle(n);
      if (/^(auto|scroll)$/.test(s.overflowY) && n.scrollHeight > n.clientHeight + 1) return n;
    }
    return null;
  };
  const frame = () => new Promise((done) => { requestAnimationFrame(() => setTimeout(done, 0)); setTimeout(done, 60); });
  // After a scroll, the rows the list renders for where it now is: a virtual list renders them a
  // moment after the scroll event, so until they differ from those before the scroll (`before`, at
  // most 2 s: a busy page), then until they hold still for a frame (at most 0.6 s more).
  const still = async (read, before) => {
    let end = performance.now() + 2000;
    const same = (a, b) => a.length === b.length && a.every((o, i) => o === b[i] && textOf(o) === textOf(b[i]) && o.isConnected);
    const texts = (list) => list.map(textOf).join('\n');
    let last = read();
    while (before && texts(last) === before && performance.now() < end) { await frame(); last = read(); }
    end = performance.now() + 600;
    for (;;) {
      await frame();
      const now = read();
      if (same(now, last) || performance.now() > end) return now;
      last = now;
    }
  };
  // The control that opened the popup the combobox sits in (a search field inside a country list):
  // what the widget shows is on that control.
  function ownerOf(combobox) {
    for (let a = combobox, depth = 0; a && depth < 8; a = parentOf(a), depth++) {
      if (!a.id || a === combobox) continue;
      const root = a.getRootNode();
      const owner = root.querySelector('[aria-controls~="' + CSS.escape(a.id) + '"][aria-expanded], [aria-owns~="' + CSS.escape(a.id) + '"][aria-expanded]');
      if (owner && owner !== combobox && !a.contains(owner)) return owner;
    }
    return null;
  }

  if (op === 'find') {
    let el = null;
    for (const candidate of window[Symbol.for('webtask.marks')] || []) {
      if (candidate.isConnected && candidate.getAttribute(mark) === id) { el = candidate; break; }
    }
    if (!el) return {ok: false, gone: true};
    let combobox = null;
    for (let n = el, depth = 0; n && depth < 4 && !combobox; n = parentOf(n), depth++) if (isBox(n)) combobox = n;
    if (!combobox) {
      const sel = '[role=combobox], [role=listbox], [aria-haspopup=listbox], [aria-haspopup=true]';
      combobox = (el.shadowRoot && el.shadowRoot.querySelector(sel)) || el.querySelector(sel);
    }
    if (!combobox) return {ok: false};
    const region = combobox.tagName === 'INPUT' ? parentOf(combobox) : combobox;
    const popup = byIds(combobox, controls(combobox));
    const owner = ownerOf(combobox);
    // A select the widget stands in for, inside it or just before it, says whether it takes several.
    let original = region.querySelector('select');
    for (let n = region, depth = 0; !original && n && depth < 3; n = parentOf(n), depth++) {
      const before = n.previousElementSibling;
      if (before && before.tagName === 'SELECT') original = before;
    }
    const flagged = [combobox, popup, region].some((n) => n && n.getAttribute('aria-multiselectable') === 'true');
    const seen = new WeakSet();
    for (const scope of [popup, region]) if (scope) for (const o of optionsUnder(scope, [], {left: 5000})) if (visible(o)) seen.add(o);
    const state = {el, combobox, region, owner, popup, seen, list: [], skip: popup && !popup.contains(region) ? [popup] : []};
    window[KEY] = state;
    return {ok: true, expanded: expandedOf(state), multiple: flagged ? true : original ? original.multiple : null,
      shown: shownOf(state)};
  }

  const state = window[KEY];
  if (!state || !state.el.isConnected) return op === 'option' ? null : {gone: true};
  // Open when it says so and its list (when it names one) shows: a widget may leave
  // aria-expanded="true" behind when it closes (virtual-select-plugin).
  function popupShows(s) { return !!s.popup && visible(s.popup) && s.popup.getBoundingClientRect().height > 0; }
  function expandedOf(s) {
    const says = (s.owner || s.combobox).getAttribute('aria-expanded');
    if (says === 'false') return false;
    if (s.popup) return popupShows(s);
    return says === 'true';
  }
  // The text of the widget, and of the control that opened its list (an owner); one that shows no
  // word (a flag, a dial code) says in its aria-label what it holds.
  function shownOf(s) {
    const parts = [];
    for (const n of [s.owner, s.combobox]) {
      if (!n) continue;
      const text = shownText(n === s.combobox ? s.region : n, s.skip);
      parts.push(/\p{L}/u.test(text) ? text : text + ' ' + (n.getAttribute('aria-label') || ''));
    }
    return norm(parts.join(' ')).slice(0, 300);
  }

  // closing: it says it is closed while its list still shows (an animation on its way out).
  if (op === 'shown') {
    const expanded = expandedOf(state);
    return {shown: shownOf(state), expanded, closing: !expanded && popupShows(state)};
  }
  if (op === 'opener') {
    // A point of the widget's box that reaches the widget itself, not a control inside it (a tag's
    // remove button, a clear button): where a person clicks to open it.
    const box = state.combobox.getBoundingClientRect().width > 0 ? state.region : state.combobox;
    const r = box.getBoundingClientRect();
    const deepHit = (x, y) => {
      let hit = document.elementFromPoint(x, y);
      while (hit && hit.shadowRoot) { const inner = hit.shadowRoot.elementFromPoint(x, y); if (!inner || inner === hit) break; hit = inner; }
      return hit;
    };
    const CONTROL = /^(BUTTON|A|SELECT|TEXTAREA)$|^SL-ICON-BUTTON$/;
    const takes = (hit) => {
      let inside = false;
      for (let n = hit; n; n = parentOf(n)) {
        if (n === state.combobox) return true;
        if (n === box) { inside = true; break; }
        if (CONTROL.test(n.tagName) || n.getAttribute('role') === 'button') return false;
      }
      return inside;
    };
    for (const fy of [0.5, 0.3, 0.7]) {
      for (const fx of [0.97, 0.9, 0.8, 0.7, 0.5, 0.3]) {
        const x = r.left + r.width * fx, y = r.top + r.height * fy;
        if (takes(deepHit(x, y))) return {x, y};
      }
    }
    return null;
  }
  if (op === 'option') {
    const option = state.list[index];
    if (!option || !option.isConnected) return null;
    // Scrolled into view only when cut: a virtual list re-renders its rows on every scroll.
    const r = option.getBoundingClientRect(), box = scroller([option]);
    const b = box ? box.getBoundingClientRect() : {top: 0, bottom: innerHeight};
    if (r.top < b.top || r.bottom > b.bottom) option.scrollIntoView({block: 'nearest', behavior: 'instant'});
    // The list it sits in is the widget's open list, left out of what the widget shows from now on.
    const list = option.closest('[role=listbox]');
    if (list && list !== state.combobox && !list.contains(state.region) && !state.skip.includes(list)) state.skip.push(list);
    return option;
  }
  // 'options': those showing in the widget's list (else in the widget, else anywhere on the page: a
  // list the widget appended to <body>), the ones that appeared since 'find' first.
  const collect = (all = false) => {
    let found = [];
    for (const scope of [state.popup, state.region, document.body]) {
      if (!scope) continue;
      found = optionsUnder(scope, [], {left: 20000}).filter((o) => o.closest('[role=listbox]') !== state.combobox && visible(o));
      if (found.length) break;
    }
    const fresh = all ? [] : found.filter((o) => !state.seen.has(o));
    return fresh.length ? fresh : found;
  };
  const answer = (found, seenTexts) => {
    state.list = found.slice(0, 500);
    let focused = document.activeElement;
    while (focused && focused.shadowRoot && focused.shadowRoot.activeElement) focused = focused.shadowRoot.activeElement;
    const inWidget = (n) => { for (let a = n; a; a = parentOf(a)) if (a === state.region || a === state.popup || (state.owner && a === state.owner)) return true; return false; };
    const typeable = !!focused && inWidget(focused) && (focused.isContentEditable
      || (focused.tagName === 'INPUT' && ['text', 'search', ''].includes(focused.type || '') && !focused.readOnly));
    return {typeable, seen: seenTexts ? {count: seenTexts.size, first: Array.from(seenTexts).slice(0, 8)} : null,
      options: state.list.map((o) => ({
        text: textOf(o),
        disabled: o.getAttribute('aria-disabled') === 'true' || o.hasAttribute('disabled')
          || o.getAttribute('data-disabled') === 'true' || /(^|[\s_-])disabled(\s|$)/.test(typeof o.className === 'string' ? o.className : ''),
        fresh: !state.seen.has(o),
        selected: o.getAttribute('aria-selected') === 'true' || o.getAttribute('aria-checked') === 'true',
      }))};
  };
  return new Promise((done) => {
    const started = performance.now();
    const look = async () => {
      const found = collect();
      const ready = want ? found.some((o) => fold(o.innerText || o.textContent).includes(fold(want))) : found.length > 0;
      if (!ready && performance.now() - started < waitMs) { setTimeout(look, 30); return; }
      const box = scan && found.length ? scroller(found) : null;
      const exact = (list) => list.some((o) => fold(o.innerText || o.textContent) === fold(want));
      if (!box || exact(found)) { done(answer(found, null)); return; }
      // Scroll the list from its top to its end, a view at a time, until the option shows.
      const texts = new Set();
      const top = box.scrollTop;
      box.scrollTop = 0;
      let left = box.scrollTop, resets = 0;  // where the scan left the list, and how often it began again
      let current = await still(() => collect(true));
      for (let steps = 0; steps < 400; steps++) {
        for (const o of current) texts.add(textOf(o));
        if (exact(current)) {
          // Wholly into view before it is clicked (the rows are rendered anew when the list moves).
          current.find((o) => fold(o.innerText || o.textContent) === fold(want)).scrollIntoView({block: 'nearest', behavior: 'instant'});
          done(answer(await still(() => collect(true)), texts));
          return;
        }
        const before = box.scrollTop;
        if (before !== left && resets++ < 2) {
          // The widget scrolled by itself (to its chosen option, once open): start again from the top.
          box.scrollTop = 0;
          left = box.scrollTop;
          current = await still(() => collect(true), current.map(textOf).join('\n'));
          continue;
        }
        // A view at a time, plus the rows rendered below it (already read): the next rows rendered
        // start above where these end, so none is skipped.
        const below = current.length ? current[current.length - 1].getBoundingClientRect().bottom - box.getBoundingClientRect().bottom : 0;
        box.scrollTop = before + Math.max(box.clientHeight * 0.8 + Math.max(below, 0), 20);
        left = box.scrollTop;
        if (left === before) break;
        current = await still(() => collect(true), current.map(textOf).join('\n'));
      }
      box.scrollTop = top;
      done(answer(await still(() => collect()), texts));
    };
    look();
  });
}
