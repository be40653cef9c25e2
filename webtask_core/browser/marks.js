// Draw (show=true) or remove (show=false) numbered boxes over the interactive elements of the last
// observation that are in this frame's viewport. The overlay lives in a shadow root on a fixed,
// pointer-events:none host at the top z-index, so the page's CSS cannot restyle it and clicks pass.
({mark, show}) => {
  const HOST_ID = '__webtask_marks__';
  const old = document.getElementById(HOST_ID);
  if (old) old.remove();
  if (!show) return 0;
  const marks = window[Symbol.for('webtask.marks')] || [];
  const host = document.createElement('div');
  host.id = HOST_ID;
  host.style.cssText = 'position:fixed;inset:0;pointer-events:none;z-index:2147483647;margin:0;padding:0;border:0;background:none;display:block';
  const root = host.attachShadow({mode: 'closed'});
  const COLOURS = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#008080', '#9a6324', '#800000'];
  const vw = window.innerWidth, vh = window.innerHeight;
  let drawn = 0;
  // DOM calls rather than innerHTML, so pages enforcing Trusted Types accept the overlay.
  const box = (css) => { const d = document.createElement('div'); d.style.cssText = css; root.appendChild(d); return d; };
  for (const el of marks) {
    if (!el.isConnected) continue;
    const id = el.getAttribute(mark);
    if (!id) continue;
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0 || r.bottom < 0 || r.right < 0 || r.top > vh || r.left > vw) continue;
    const colour = COLOURS[drawn % COLOURS.length];
    box('position:fixed;left:' + r.left + 'px;top:' + r.top + 'px;width:' + r.width + 'px;height:' + r.height
      + 'px;outline:2px solid ' + colour + ';box-sizing:border-box');
    const labelTop = r.top >= 14 ? r.top - 14 : r.top;
    box('position:fixed;left:' + Math.max(r.left, 0) + 'px;top:' + labelTop + 'px;background:' + colour
      + ';color:#fff;font:bold 11px/14px monospace;padding:0 3px;white-space:nowrap').textContent = id;
    drawn++;
  }
  document.documentElement.appendChild(host);
  return drawn;
}
