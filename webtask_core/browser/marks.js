// Prepare this frame for a screenshot (show=true) or undo it (show=false), in one round trip.
// Prepare: numbered boxes over the interactive elements of the last observation that are in the
// viewport (when `marks`), opaque magenta boxes over every password field (open shadow roots
// included) and over the marked elements listed in `masks`, and a hidden text caret. The overlay
// lives in a closed shadow root on a fixed, pointer-events:none host at the top z-index, so the
// page's CSS cannot restyle it and clicks pass through. `labelScale` enlarges labels and outlines
// for a screenshot taken below full size, so they stay legible there.
// Returns the viewport (scroll offsets and size, in CSS pixels) and the `masks` ids it could not find.
async ({mark, show, marks, masks, labelScale}) => {
  const HOST_ID = '__webtask_marks__';
  const CARET = Symbol.for('webtask.caret');
  const old = document.getElementById(HOST_ID);
  if (old) old.remove();
  const hidden = window[CARET];
  if (hidden) {
    hidden.element.style.setProperty('caret-color', hidden.value, hidden.priority);
    delete window[CARET];
  }
  if (!show) return null;

  const host = document.createElement('div');
  host.id = HOST_ID;
  host.style.cssText = 'position:fixed;inset:0;pointer-events:none;z-index:2147483647;margin:0;padding:0;border:0;background:none;display:block';
  const root = host.attachShadow({mode: 'closed'});
  const vw = window.innerWidth, vh = window.innerHeight;
  // DOM calls rather than innerHTML, so pages enforcing Trusted Types accept the overlay.
  const box = (css) => { const d = document.createElement('div'); d.style.cssText = css; root.appendChild(d); return d; };
  const inView = (r) => r.width > 0 && r.height > 0 && r.bottom >= 0 && r.right >= 0 && r.top <= vh && r.left <= vw;

  // Masks first, so a box label may sit on top of a mask but nothing of a masked field shows.
  const secret = [];
  const roots = [];
  const collect = (r) => {  // a TreeWalker does not enter shadow roots: walk each one found
    roots.push(r);
    const walker = document.createTreeWalker(r, NodeFilter.SHOW_ELEMENT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const inner = node.shadowRoot || (closedRoots && closedRoots.get(node));
      if (inner) collect(inner);
    }
  };
  const closedRoots = window[Symbol.for('webtask.closedRoots')];
  collect(document);  // open shadow roots, and closed ones listeners.js kept when the page made them
  for (const r of roots) for (const el of r.querySelectorAll('input[type=password]')) secret.push(el);
  const all = window[Symbol.for('webtask.marks')] || [];
  const wanted = new Set(masks);
  const found = new Set();
  for (const el of all) {
    const id = el.isConnected ? el.getAttribute(mark) : null;
    if (id !== null && wanted.has(id)) { secret.push(el); found.add(id); }
  }
  for (const el of secret) {
    const r = el.getBoundingClientRect();
    if (inView(r)) {
      box('position:fixed;left:' + r.left + 'px;top:' + r.top + 'px;width:' + r.width + 'px;height:' + r.height
        + 'px;background:#ff00ff');
    }
  }

  if (marks) {
    const COLOURS = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#008080', '#9a6324', '#800000'];
    const font = Math.round(11 * labelScale), line = Math.round(14 * labelScale), edge = Math.round(2 * labelScale);
    let drawn = 0;
    for (const el of all) {
      if (!el.isConnected) continue;
      const id = el.getAttribute(mark);
      if (!id) continue;
      const r = el.getBoundingClientRect();
      if (!inView(r)) continue;
      const colour = COLOURS[drawn % COLOURS.length];
      box('position:fixed;left:' + r.left + 'px;top:' + r.top + 'px;width:' + r.width + 'px;height:' + r.height
        + 'px;outline:' + edge + 'px solid ' + colour + ';box-sizing:border-box');
      // Wide elements (text fields, selects, text areas) get the id inside their top-right corner: their
      // own label usually sits just above-left, where the id would hide it. Others get it above-left.
      const width = id.length * font * 0.62 + 6 * labelScale;
      let labelLeft = Math.max(r.left, 0), labelTop = r.top >= line ? r.top - line : r.top;
      if (r.width >= 2.5 * width && r.height >= line + 2 * edge) {
        labelLeft = Math.max(Math.min(r.right, vw) - width - edge, labelLeft);
        labelTop = Math.max(r.top, 0) + edge;
      }
      box('position:fixed;left:' + labelLeft + 'px;top:' + labelTop + 'px;background:' + colour
        + ';color:#fff;font:bold ' + font + 'px/' + line + 'px monospace;padding:0 ' + Math.round(3 * labelScale)
        + 'px;white-space:nowrap').textContent = id;
      drawn++;
    }
  }
  document.documentElement.appendChild(host);

  // The blinking caret would make two pictures of the same page differ.
  let active = document.activeElement;
  while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
  if (active && active !== document.body && active.style) {
    window[CARET] = {
      element: active,
      value: active.style.getPropertyValue('caret-color'),
      priority: active.style.getPropertyPriority('caret-color'),
    };
    active.style.setProperty('caret-color', 'transparent', 'important');
  }
  // Web fonts still loading would be drawn in a fallback font; a font that never loads is not waited for.
  if (document.fonts && document.fonts.status !== 'loaded') {
    await Promise.race([document.fonts.ready, new Promise((done) => setTimeout(done, 500))]);
  }
  return {
    x: window.scrollX, y: window.scrollY, width: vw, height: vh,
    missing: masks.filter((id) => !found.has(id)),
  };
}
