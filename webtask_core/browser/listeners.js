// Init script: runs in every frame before the page's own code. It remembers which elements got a
// click-like (or drag-and-drop) event listener, so an observation can treat a <span> with a JS handler
// as interactive, when the page last changed after its load, and whether it has anything scheduled.
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
  // And when a script last changed an element's style or class (a fade driven by animation frames,
  // jQuery's): motion.py counts that as moving while the script still has a frame to run.
  const STYLED = Symbol.for('webtask.styled');
  window.addEventListener('load', () => {
    new MutationObserver(() => { window[CHANGED] = performance.now(); }).observe(document, {childList: true, subtree: true});
    new MutationObserver(() => { window[STYLED] = performance.now(); }).observe(
      document, {attributes: true, attributeFilter: ['style', 'class'], subtree: true});
  }, {once: true});
  // What the page has scheduled to run soon: timeouts due within SOON_MS, intervals that tick more
  // often than every POLL_MS, animation-frame callbacks. A page with none of them, no animation running and
  // no request in flight cannot change by itself (a picker opening a moment after the focus, a
  // modal's fade driven by a script), so a replayed action need not wait for it to hold still
  // (motion.py). Only counted: the callbacks run as the page gave them.
  const PENDING = Symbol.for('webtask.pending');
  const SOON_MS = 1500;
  const POLL_MS = 100;
  const timers = new Set();
  let frames = 0;
  Object.defineProperty(window, PENDING, { value: () => timers.size + frames });
  const soon = (delay) => (Number(delay) || 0) <= SOON_MS;
  // Timeouts due within SHORT_MS of being set (a picker drawing its new month 10 ms after "next
  // month", a widget closing its menu on a zero-delay timer): the settle after an action waits for
  // those pending when it looks (stabilise.py), so the next look reads what the action did.
  const SHORT_MS = 100;
  const short = new Set();
  const originalTimeout = window.setTimeout;
  Object.defineProperty(window, Symbol.for('webtask.shortTimers'), {
    value: (capMs) => new Promise((done) => {
      const waiting = new Set(short), end = performance.now() + capMs;
      const look = () => {
        for (const id of waiting) if (!short.has(id)) waiting.delete(id);
        if (!waiting.size || performance.now() >= end) done(waiting.size);
        else Reflect.apply(originalTimeout, window, [look, 4]);
      };
      look();
    }),
  });
  // When each pending soon timeout is due: before a submit, the page's own work about to start (a
  // debounced autosave 500 ms after the last change) runs first (own_saves.py).
  const dueAt = new Map();
  Object.defineProperty(window, Symbol.for('webtask.timersDue'), {
    value: (withinMs, capMs) => new Promise((done) => {
      const start = performance.now(), end = start + capMs;
      const waiting = new Set([...dueAt].filter(([, at]) => at <= start + withinMs).map(([id]) => id));
      const total = waiting.size;
      const look = () => {
        for (const id of waiting) if (!dueAt.has(id)) waiting.delete(id);
        if (!waiting.size || performance.now() >= end) done({ran: total - waiting.size, left: waiting.size});
        else Reflect.apply(originalTimeout, window, [look, 10]);
      };
      look();
    }),
  });
  // Timeouts the page set while it was young (its first YOUNG_MS) to run within BUILD_MS: a widget
  // its script builds a moment after the load (an editor started on a timer, a menu drawn late). A
  // recorded step waits for those before it reads a fresh page (motion.settle_building), so the
  // recording is not taken half-built; a poll's later timers are set when the page is no longer young.
  const YOUNG_MS = 2500, BUILD_MS = 3000;
  // Each with when it is due (the page's clock): the wait for it is measured from there, not from when
  // the step began looking (a busy machine's step can begin well before the page's build is due).
  const building = new Map();
  Object.defineProperty(window, Symbol.for('webtask.building'), { value: () => building.size });
  Object.defineProperty(window, Symbol.for('webtask.buildingDue'), { value: () => Math.max(0, ...building.values()) });
  const builds = (delay) => performance.now() < YOUNG_MS && (Number(delay) || 0) <= BUILD_MS;
  window.setTimeout = new Proxy(window.setTimeout, {
    apply(target, thisArg, args) {
      const counted = soon(args[1]), built = builds(args[1]);
      if (typeof args[0] !== 'function' || !(counted || built)) return Reflect.apply(target, thisArg, args);
      const callback = args[0];
      let id;
      const run = function (...given) {
        timers.delete(id); short.delete(id); dueAt.delete(id); building.delete(id);
        return Reflect.apply(callback, this, given);
      };
      id = Reflect.apply(target, thisArg, [run, ...args.slice(1)]);
      if (counted) {
        timers.add(id);
        dueAt.set(id, performance.now() + (Number(args[1]) || 0));
      }
      if (built) building.set(id, performance.now() + (Number(args[1]) || 0));
      if ((Number(args[1]) || 0) <= SHORT_MS) short.add(id);
      return id;
    },
  });
  window.setInterval = new Proxy(window.setInterval, {
    apply(target, thisArg, args) {
      const id = Reflect.apply(target, thisArg, args);
      // pending until cleared; one that ticks less often than every 100 ms is a poll (an autosave's
      // check, a clock), not motion: Wagtail's editor checks every 500 ms, which cost 0.15 s a call
      if ((Number(args[1]) || 0) < POLL_MS) timers.add(id);
      return id;
    },
  });
  for (const name of ['clearTimeout', 'clearInterval']) {
    window[name] = new Proxy(window[name], {
      apply(target, thisArg, args) {
        timers.delete(args[0]); short.delete(args[0]); dueAt.delete(args[0]); building.delete(args[0]);
        return Reflect.apply(target, thisArg, args);
      },
    });
  }
  const frameIds = new Set();
  window.requestAnimationFrame = new Proxy(window.requestAnimationFrame, {
    apply(target, thisArg, args) {
      if (typeof args[0] !== 'function') return Reflect.apply(target, thisArg, args);
      const callback = args[0];
      let id;
      const run = function (...given) { if (frameIds.delete(id)) frames -= 1; return Reflect.apply(callback, this, given); };
      id = Reflect.apply(target, thisArg, [run, ...args.slice(1)]);
      frameIds.add(id);
      frames += 1;
      return id;
    },
  });
  window.cancelAnimationFrame = new Proxy(window.cancelAnimationFrame, {
    apply(target, thisArg, args) {
      if (frameIds.delete(args[0])) frames -= 1;
      return Reflect.apply(target, thisArg, args);
    },
  });
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
