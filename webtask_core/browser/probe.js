// Probe one marked element before acting on it, in a single round trip: is it still there, can it
// take the action, and which point of it can be clicked without hitting something that covers it.
// `rect` is its box in this frame's viewport (to tell whether it moved between two probes).
// `point` is relative to the element's box (what Playwright's `position` wants); `client` is the same
// point in this frame's viewport (where the mouse goes).
async ({mark, id, scroll, nextFrame, watchNavigation}) => {
  // With `watchNavigation` (just before a click), note the next navigation this document starts and
  // the next form it submits (a submission navigates a moment later, in a task of its own), so the
  // caller can tell a click that navigates from one that does not; and the click itself and any
  // window.open, so it can tell one that opens a new tab (whose first request comes later still).
  if (watchNavigation) {
    const NOTE = Symbol.for('webtask.navigation');
    if (!(NOTE in window)) {
      if (window.navigation) {
        navigation.addEventListener('navigate', (event) => { if (window[NOTE] && !window[NOTE].navigate) window[NOTE].navigate = event; });
      }
      window.addEventListener('submit', (event) => { if (window[NOTE] && !window[NOTE].submit) window[NOTE].submit = event; }, true);
      window.addEventListener('click', (event) => { if (window[NOTE] && !window[NOTE].click) window[NOTE].click = event; }, true);
      window.open = new Proxy(window.open, {
        apply(target, thisArg, args) {
          const opened = Reflect.apply(target, thisArg, args);
          if (opened && window[NOTE]) window[NOTE].opened = true;
          return opened;
        },
      });
    }
    window[NOTE] = {navigate: null, submit: null, click: null, opened: false};
  }
  const marks = window[Symbol.for('webtask.marks')] || [];
  let el = null;
  for (const candidate of marks) {
    if (candidate.isConnected && candidate.getAttribute(mark) === id) { el = candidate; break; }
  }
  if (!el) return {found: false};

  const tag = el.tagName;
  const control = tag === 'LABEL' ? el.control : null;
  const target = control || el;
  const targetTag = target.tagName;
  const type = targetTag === 'INPUT' ? (target.type || 'text') : null;
  // An editor fill writes into by its own means (browser/editors.py): a code editor takes the text as
  // is (CodeMirror 5 draws its text and types through a hidden textarea; CodeMirror 6, Ace, Monaco),
  // a rich-text region takes formatted text.
  const code = (el.CodeMirror && typeof el.CodeMirror.getValue === 'function')
    || !!(el.closest && el.closest('.cm-editor, .ace_editor, .monaco-editor'));
  const info = {
    found: true,
    editor: code ? 'code' : target.isContentEditable ? 'rich' : null,
    tag: tag.toLowerCase(),
    type,
    disabled: (target.matches(':disabled')) || el.getAttribute('aria-disabled') === 'true',
    readonly: !!target.readOnly && (targetTag === 'INPUT' || targetTag === 'TEXTAREA'),
    editable: targetTag === 'TEXTAREA' || target.isContentEditable || code
      || (targetTag === 'INPUT' && !['checkbox', 'radio', 'file', 'submit', 'button', 'reset', 'image', 'hidden'].includes(type)),
    checkable: type === 'checkbox' || type === 'radio'
      || ['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(el.getAttribute('role')),
    checked: type === 'checkbox' || type === 'radio' ? target.checked : el.getAttribute('aria-checked') === 'true',
    multiple: !!target.multiple,
    options: null,
    visible: false,
    offscreen: false,
    point: null,
    client: null,
    rect: null,
    navigationApi: !!window.navigation,
    cover: null,  // what covers it (no point of it reaches the mouse)
    through: null,  // or: the element around it that takes the mouse at its place
    pointerEvents: null,
    clipper: null,  // the ancestor that hides it wholly (offscreen)
  };
  if (targetTag === 'SELECT') {
    info.options = Array.from(target.options, (o) => [o.label.replace(/\s+/g, ' ').trim(), o.value, o.disabled]);
  }
  // A widget on a scale (a slider's handle) that is not a native input: what its ARIA says it holds.
  const role = el.getAttribute('role');
  info.role = role;
  if ((role === 'slider' || role === 'spinbutton') && targetTag !== 'INPUT') {
    info.range = {now: el.getAttribute('aria-valuenow'), min: el.getAttribute('aria-valuemin'),
      max: el.getAttribute('aria-valuemax'), text: el.getAttribute('aria-valuetext'),
      vertical: el.getAttribute('aria-orientation') === 'vertical'};
  }

  // With `nextFrame`, while anything on the page is animating, measure on the next frame: compared
  // with the previous probe, that tells a moving element from a still one.
  if (nextFrame && document.getAnimations().some((a) => a.playState === 'running')) {
    await new Promise((done) => { requestAnimationFrame(() => done()); setTimeout(done, 100); });
    if (!el.isConnected) return {found: false};
  }
  // The part of the element that shows: every ancestor that clips its overflow (a scroll box, a
  // carousel with hidden overflow) cuts it down, and so does the viewport. `by`: the ancestor that
  // hides it wholly, if one does.
  const parentOf = (n) => n.assignedSlot || n.parentElement || (n.parentNode && n.parentNode.host) || null;
  const showing = (r) => {
    let left = r.left, top = r.top, right = r.right, bottom = r.bottom, by = null;
    for (let a = parentOf(el); a && a !== document.body && a !== document.documentElement; a = parentOf(a)) {
      const s = getComputedStyle(a);
      const clipX = s.overflowX !== 'visible', clipY = s.overflowY !== 'visible';
      if ((clipX || clipY) && s.display !== 'inline' && s.display !== 'contents') {
        const box = a.getBoundingClientRect();
        const boxLeft = box.left + a.clientLeft, boxTop = box.top + a.clientTop;
        if (clipX) { left = Math.max(left, boxLeft); right = Math.min(right, boxLeft + a.clientWidth); }
        if (clipY) { top = Math.max(top, boxTop); bottom = Math.min(bottom, boxTop + a.clientHeight); }
        if (!by && (right - left < 1 || bottom - top < 1)) by = a;
      }
      if (s.position === 'fixed') break;  // nothing further up scrolls or clips it
    }
    return {
      left: Math.max(left, 0), top: Math.max(top, 0), right: Math.min(right, window.innerWidth),
      bottom: Math.min(bottom, window.innerHeight), by,
    };
  };
  const whole = (part, r) => part.left <= r.left + 1 && part.top <= r.top + 1 && part.right >= r.right - 1
    && part.bottom >= r.bottom - 1;
  const describe = (node) => {
    if (!node) return 'nothing (outside the page)';
    const idPart = node.id ? '#' + node.id : '';
    const cls = typeof node.className === 'string' && node.className.trim()
      ? '.' + node.className.trim().split(/\s+/).slice(0, 2).join('.') : '';
    const own = node.getAttribute && node.getAttribute(mark);
    return node.tagName.toLowerCase() + idPart + cls + (own ? ' (' + own + ')' : '');
  };

  let rect = el.getBoundingClientRect();
  let part = showing(rect);
  if (scroll && !whole(part, rect)) {
    // Scrolls every scroll box around it as well as the page, as far as each needs.
    el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
    rect = el.getBoundingClientRect();
    part = showing(rect);
  }
  info.rect = [rect.left, rect.top, rect.width, rect.height];
  info.visible = rect.width > 0 && rect.height > 0 && el.checkVisibility({visibilityProperty: true});
  if (!info.visible) return info;

  const {left, right, top, bottom} = part;
  if (right - left < 1 || bottom - top < 1) {
    info.offscreen = true;
    if (part.by) info.clipper = describe(part.by);
    return info;
  }

  const closedRoots = window[Symbol.for('webtask.closedRoots')];
  const shadowOf = (n) => n.shadowRoot || (closedRoots && closedRoots.get(n));
  const deepHit = (x, y) => {
    let hit = document.elementFromPoint(x, y);
    while (hit && shadowOf(hit)) {
      const inner = shadowOf(hit).elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  };
  const inside = (node, ancestor) => {
    for (let n = node; n; n = n.parentNode || n.host) if (n === ancestor) return true;
    return false;
  };
  const reaches = (hit) => {
    if (!hit) return false;
    if (inside(hit, el)) return true;
    if (control && inside(hit, control)) return true;
    if (target.labels) for (const label of target.labels) if (inside(hit, label)) return true;
    return false;
  };
  // A hit on another control inside this one (a nested tree item, a row's star) would go to that
  // control: a point on the element's own part is preferred, that control's only if there is none.
  const nested = el.querySelector('[' + mark + ']') !== null;
  const own = (hit) => {
    if (!reaches(hit)) return false;
    if (!nested) return true;
    for (let n = hit; n && n !== el; n = parentOf(n)) if (n.hasAttribute && n.hasAttribute(mark)) return false;
    return true;
  };
  // What covers the element: from the element hit, up to the outermost ancestor that does not hold
  // the element too (the overlay, not the paragraph inside it), with the start of its text.
  const coverOf = (hit) => {
    let cover = hit;
    for (let n = parentOf(hit); n && n !== document.body && n !== document.documentElement && !inside(el, n); n = parentOf(n)) cover = n;
    const text = (cover.innerText || '').replace(/\s+/g, ' ').trim();
    return describe(cover) + (text ? ' ("' + (text.length > 40 ? text.slice(0, 39) + '…' : text) + '")' : '');
  };

  // The point to click; or what covers the element. A bar fixed or stuck to the screen's edge (a sticky
  // header or footer) covering it: scroll it to the middle of the screen, as a person would, and look again.
  const stuck = (hit) => {
    for (let n = hit; n && n !== document.body && n !== document.documentElement; n = parentOf(n)) {
      const position = getComputedStyle(n).position;
      if (position === 'fixed' || position === 'sticky') return true;
    }
    return false;
  };
  const at = (x, y) => { info.point = [x - rect.left, y - rect.top]; info.client = [x, y]; return info; };
  for (let attempt = 0; ; attempt++) {
    const {left, right, top, bottom} = part;
    const cx = (left + right) / 2, cy = (top + bottom) / 2;
    const centreHit = deepHit(cx, cy);
    if (own(centreHit)) return at(cx, cy);
    // Something else is at the centre: look for a visible point of the element on a 5x5 grid.
    const grid = [];
    for (const fy of [0.5, 0.25, 0.75, 0.1, 0.9]) {
      for (const fx of [0.5, 0.25, 0.75, 0.1, 0.9]) grid.push([left + (right - left) * fx, top + (bottom - top) * fy]);
    }
    for (const [x, y] of grid) if (own(deepHit(x, y))) return at(x, y);
    if (nested) {
      if (reaches(centreHit)) return at(cx, cy);
      for (const [x, y] of grid) if (reaches(deepHit(x, y))) return at(x, y);
    }
    if (centreHit && inside(el, centreHit)) {
      // What the mouse hits there holds the element: nothing covers it, it lets the mouse through.
      info.through = describe(centreHit);
      info.pointerEvents = getComputedStyle(el).pointerEvents;
      return info;
    }
    if (attempt === 0 && scroll && centreHit && stuck(centreHit)) {
      el.scrollIntoView({block: 'center', inline: 'nearest', behavior: 'instant'});
      rect = el.getBoundingClientRect();
      part = showing(rect);
      info.rect = [rect.left, rect.top, rect.width, rect.height];
      continue;
    }
    info.cover = centreHit ? coverOf(centreHit) : describe(null);
    return info;
  }
}
