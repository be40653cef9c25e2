// Init script: runs in every frame before the page's own code. It remembers which elements got a
// click-like event listener, so an observation can treat a <span> with a JS handler as interactive.
// The wrapper is a Proxy so Function.prototype.toString still reports native code.
(() => {
  const KEY = Symbol.for('webtask.listeners');
  if (window[KEY]) return;
  const withListener = new WeakSet();
  Object.defineProperty(window, KEY, { value: withListener });
  const CLICKY = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'touchstart', 'dblclick']);
  const proto = EventTarget.prototype;
  proto.addEventListener = new Proxy(proto.addEventListener, {
    apply(target, thisArg, args) {
      if (CLICKY.has(args[0]) && thisArg instanceof Element) withListener.add(thisArg);
      return Reflect.apply(target, thisArg, args);
    },
  });
})();
