// The page's own select widgets (Tom Select, Choices.js, Select2, Shoelace's sl-select and the like):
// what select_option needs to open one, find an option in its list, and see what the widget shows.
// One function, by `op`, for the marked element `id` (the state between calls lives on the window):
//   'find'    the widget around the element: {ok, expanded, multiple, shown}; remembers which options
//             already showed (a chosen item the widget displays is one), to prefer those that appear
//   'options' waits up to `waitMs` for options to show (with `want`, for one whose text holds it: the
//             list filtered by what was typed); {options: [{text, disabled, fresh}, ...], typeable}
//             (typeable: the focus is in a text field of the widget, where typing filters the list)
//   'option'  the element of option `index` of the last 'options' answer (for Playwright to click)
//   'shown'   {shown, expanded}: the text the widget shows now (its input's value included, the open
//             list left out) and whether it says its list is open
({mark, id, op, index, waitMs, want}) => {
  const KEY = Symbol.for('webtask.listbox');
  const norm = (s) => (s || '').replace(/\u200b/g, '').replace(/\s+/g, ' ').trim();
  const parentOf = (n) => n.assignedSlot || n.parentElement || (n.parentNode && n.parentNode.host) || null;
  const visible = (n) => n.checkVisibility({visibilityProperty: true, opacityProperty: true})
    && n.getClientRects().length > 0 && n.getBoundingClientRect().width > 0;
  const BOX_ROLES = ['combobox', 'listbox'];
  const POPUPS = ['listbox', 'true', 'menu'];
  const isBox = (n) => n.nodeType === 1 && (BOX_ROLES.includes(n.getAttribute('role')) || POPUPS.includes(n.getAttribute('aria-haspopup')));

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
  function byIds(el, ids) {
    if (!ids) return null;
    const root = el.getRootNode();
    for (const one of ids.split(/\s+/)) {
      const found = root.getElementById ? root.getElementById(one) : document.getElementById(one);
      if (found) return found;
    }
    return null;
  }
  // Text a person reads in the widget: visible text and the values of its fields, not its open list.
  function shownText(region, skip) {
    const parts = [];
    const one = (n) => {
      if (n.nodeType === 3) { parts.push(n.data); return; }
      if (n.nodeType !== 1 || skip.includes(n) || n.tagName === 'SCRIPT' || n.tagName === 'STYLE') return;
      if (!n.checkVisibility({visibilityProperty: true, opacityProperty: true})) return;
      if ((n.tagName === 'INPUT' && n.type !== 'password' && n.type !== 'hidden') || n.tagName === 'TEXTAREA') {
        parts.push(' ' + n.value + ' ');
        return;
      }
      if (n.tagName === 'SLOT') {
        const assigned = n.assignedNodes({flatten: true});
        if (assigned.length) { for (const a of assigned) one(a); return; }
      }
      parts.push(' ');
      for (let c = (n.shadowRoot || n).firstChild; c; c = c.nextSibling) one(c);
      parts.push(' ');
    };
    one(region);
    return norm(parts.join('')).slice(0, 300);
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
    const popup = byIds(combobox, combobox.getAttribute('aria-controls') || combobox.getAttribute('aria-owns'));
    // A select the widget stands in for, inside it or just before it, says whether it takes several.
    let original = region.querySelector('select');
    for (let n = region, depth = 0; !original && n && depth < 3; n = parentOf(n), depth++) {
      const before = n.previousElementSibling;
      if (before && before.tagName === 'SELECT') original = before;
    }
    const flagged = [combobox, popup, region].some((n) => n && n.getAttribute('aria-multiselectable') === 'true');
    const seen = new WeakSet();
    for (const scope of [popup, region]) if (scope) for (const o of optionsUnder(scope, [], {left: 5000})) if (visible(o)) seen.add(o);
    const state = {el, combobox, region, popup, seen, list: [], skip: popup ? [popup] : []};
    window[KEY] = state;
    return {ok: true, expanded: expandedOf(state), multiple: flagged ? true : original ? original.multiple : null,
      shown: shownText(region, state.skip)};
  }

  const state = window[KEY];
  if (!state || !state.el.isConnected) return op === 'option' ? null : {gone: true};
  function expandedOf(s) {
    const says = s.combobox.getAttribute('aria-expanded');
    if (says !== null) return says === 'true';
    return !!(s.popup && visible(s.popup));
  }

  if (op === 'shown') return {shown: shownText(state.region, state.skip), expanded: expandedOf(state)};
  if (op === 'option') {
    const option = state.list[index];
    if (!option || !option.isConnected) return null;
    option.scrollIntoView({block: 'nearest', behavior: 'instant'});
    // The list it sits in is the widget's open list, left out of what the widget shows from now on.
    const list = option.closest('[role=listbox]');
    if (list && list !== state.combobox && !list.contains(state.region) && !state.skip.includes(list)) state.skip.push(list);
    return option;
  }
  // 'options': those showing in the widget's list (else in the widget, else anywhere on the page: a
  // list the widget appended to <body>), the ones that appeared since 'find' first.
  const collect = () => {
    let found = [];
    for (const scope of [state.popup, state.region, document.body]) {
      if (!scope) continue;
      found = optionsUnder(scope, [], {left: 20000}).filter((o) => o.closest('[role=listbox]') !== state.combobox && visible(o));
      if (found.length) break;
    }
    const fresh = found.filter((o) => !state.seen.has(o));
    return fresh.length ? fresh : found;
  };
  return new Promise((done) => {
    const started = performance.now();
    const look = () => {
      const found = collect();
      const fold = (t) => norm(t).toLowerCase();
      const ready = want ? found.some((o) => fold(o.innerText || o.textContent).includes(fold(want))) : found.length > 0;
      if (ready || performance.now() - started >= waitMs) {
        state.list = found.slice(0, 500);
        let focused = document.activeElement;
        while (focused && focused.shadowRoot && focused.shadowRoot.activeElement) focused = focused.shadowRoot.activeElement;
        const inWidget = (n) => { for (let a = n; a; a = parentOf(a)) if (a === state.region || a === state.popup) return true; return false; };
        const typeable = !!focused && inWidget(focused) && (focused.isContentEditable
          || (focused.tagName === 'INPUT' && ['text', 'search', ''].includes(focused.type || '') && !focused.readOnly));
        done({typeable, options: state.list.map((o) => ({
          text: norm(o.innerText || o.textContent).slice(0, 120),
          disabled: o.getAttribute('aria-disabled') === 'true' || o.hasAttribute('disabled')
            || o.getAttribute('data-disabled') === 'true' || /(^|[\s_-])disabled(\s|$)/.test(typeof o.className === 'string' ? o.className : ''),
          fresh: !state.seen.has(o),
        }))});
        return;
      }
      setTimeout(look, 30);
    };
    look();
  });
}
