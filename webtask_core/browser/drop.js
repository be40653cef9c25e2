// Drop files onto an element as a person dragging them from the desktop would: dragenter, dragover and,
// when the page takes the drag (it cancels dragover, as every drop zone must), drop, each carrying the
// files in a DataTransfer. The events go to what lies at the probed point (the zone's own text or
// icon), from where they bubble as real ones do. `input` holds the files (set by Playwright).
// Returns whether the page took the drop.
([el, input, x, y]) => {
  const data = new DataTransfer();
  for (const file of input.files) data.items.add(file);
  let at = document.elementFromPoint(x, y);
  while (at && at.shadowRoot) {
    const inner = at.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === at) break;
    at = inner;
  }
  const inside = (node) => { for (let n = node; n; n = n.parentNode || n.host) if (n === el) return true; return false; };
  if (!at || !inside(at)) at = el;
  const fire = (type) => {
    const event = new DragEvent(type, {bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y,
      dataTransfer: data});
    at.dispatchEvent(event);
    return event.defaultPrevented;
  };
  fire('dragenter');
  if (!fire('dragover')) { fire('dragleave'); return false; }
  fire('drop');
  return true;
}
