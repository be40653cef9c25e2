// Init script: runs in every frame before the page's own code. It remembers which elements got a
// click-like (or drag-and-drop) event listener, so an observation can treat a <span> with a JS handler
// as interactive, and when the page last changed after its load.
// The wrapper is a Proxy so Function.prototype.toString still reports native code.
(() => {
  const KEY = Symbol.for('webtask.listeners');
  if (window[KEY]) return;
  const withListener = new WeakSet();
  Object.defineProperty(window, KEY, { value: withListener });
  // Clicks, and the two ends of a drag: an item that starts one, a zone that takes a drop (files).
  const CLICKY = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchstart', 'dblclick',
    'dragstart', 'drop']);
  // When the page last added or removed nodes after its load (a widget still building itself): the
  // settle after a navigation waits while that is recent (stabilise.py). Nodes only: an animation's
  // style changes are no building.
  const CHANGED = Symbol.for('webtask.changed');
  window.addEventListener('load', () => {
    new MutationObserver(() => { window[CHANGED] = performance.now(); }).observe(document, {childList: true, subtree: true});
  }, {once: true});
  // Closed shadow roots, kept as the page makes them (attachShadow({mode: 'closed'}) hands the root
  // only to the page's own code): the observation walks into them as into open ones, as the browser's
  // own tools do.
  const closedRoots = new WeakMap();
  Object.defineProperty(window, Symbol.for('webtask.closedRoots'), { value: closedRoots });
  const shadowProto = Element.prototype;
  shadowProto.attachShadow = new Proxy(shadowProto.attachShadow, {
    apply(target, thisArg, args) {
      const root = Reflect.apply(target, thisArg, args);
      if (args[0] && args[0].mode === 'closed') closedRoots.set(thisArg, root);
      return root;
    },
  });
  // A closed root declared in HTML a script parses is made without attachShadow: a flag tells the
  // next observation to fetch it through CDP (declared_roots.py). The HTML the page loaded with is
  // looked at from Python, in its source.
  const DECLARED = Symbol.for('webtask.declaredRoots');
  const CLOSED_TEMPLATE = /shadowrootmode\s*=\s*["']?closed/i;
  const watchParse = (owner, name) => {
    const original = owner[name];
    if (typeof original !== 'function') return;
    owner[name] = new Proxy(original, {
      apply(target, thisArg, args) {
        if (args.some((html) => CLOSED_TEMPLATE.test(String(html)))) window[DECLARED] = true;
        return Reflect.apply(target, thisArg, args);
      },
    });
  };
  watchParse(Element.prototype, 'setHTMLUnsafe');
  watchParse(ShadowRoot.prototype, 'setHTMLUnsafe');
  watchParse(Document.prototype, 'write');
  watchParse(Document.prototype, 'writeln');
  watchParse(Document, 'parseHTMLUnsafe');
  const proto = EventTarget.prototype;
  proto.addEventListener = new Proxy(proto.addEventListener, {
    apply(target, thisArg, args) {
      if (CLICKY.has(args[0]) && thisArg instanceof Element) withListener.add(thisArg);
      return Reflect.apply(target, thisArg, args);
    },
  });
})();
