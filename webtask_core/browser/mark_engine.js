// A Playwright selector engine (registered as "webtask-mark"): `webtask-mark=button-3` is the element
// the last observation of this frame stamped with that id, found among the elements it stamped
// (window[Symbol.for('webtask.marks')]), so an element inside a closed shadow root is found too.
({
  query(root, id) {
    return this.queryAll(root, id)[0] || null;
  },
  queryAll(root, id) {
    const marks = window[Symbol.for('webtask.marks')] || [];
    return marks.filter((el) => el.isConnected && el.getAttribute('data-wt-id') === id);
  },
})
