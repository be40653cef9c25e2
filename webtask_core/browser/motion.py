"""Waiting, before a replayed action, for what a person waits for: overlays opening or closing.

A person does not click while a modal is still fading in or a date picker is about to open after
the focus reached its field; a replay, running its calls back to back, would. :func:`settle_motion`
waits (bounded) until no animation or transition that ends within the bound runs on a visible element
and no node was added or removed for a short quiet time (``listeners.js`` notes the page's changes), in
every frame. An animation that outlasts the bound (a spinner, a badge pinging for 25 s) is not waited
for, and a page that never stops changing ends at the bound. A frame that has nothing scheduled (no
timeout due soon, no interval ticking faster than every 0.1 s, no animation-frame callback:
``listeners.js`` counts them) and nothing moving holds still already: nothing in it can run to change it, so there is
no quiet time to wait (it cost 0.15 s before every replayed call, about 1.5 s a replayed listing).
:func:`click_neutral_ground` and :func:`scroll_to_middle` are what a person does with something in
the way: a click where nothing is (a picker), a scroll (a sticky footer over the field).
"""

from __future__ import annotations

import asyncio
from functools import cache

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

from webtask_core.browser.failures import is_closed_error, translate_errors
from webtask_core.browser.scripts import MARK_ATTRIBUTE

__all__ = ["settle_motion", "settle_building", "BUILD_WINDOW_S",
           "still_first", "STILL_ARGS", "click_neutral_ground", "scroll_to_middle",
           "page_age_s", "pointer_off_page", "MOTION_QUIET_S", "MOTION_MAX_S"]

MOTION_QUIET_S = 0.15  # no node added or removed, no overlay moving, for this long (from the call on)
MOTION_MAX_S = 1.5  # the longest a replayed action waits for the page to hold still

_STILL = """([quietMs, capMs]) => new Promise((done) => {
  const KEY = Symbol.for('webtask.changed');
  const pending = window[Symbol.for('webtask.pending')];
  // nothing due to run (counted before our own timer below is set): nothing can change the page
  const idle = () => typeof pending === 'function' && pending() === 0;
  const start = performance.now(), end = start + capMs;
  // a script animating styles frame by frame (jQuery's fade): a frame still to run, a style changed just now
  const scripted = () => typeof pending === 'function' && pending() > 0
    && performance.now() - (window[Symbol.for('webtask.styled')] ?? -Infinity) < 50;
  const moving = () => scripted() || document.getAnimations().some((animation) => {
    if (animation.playState !== 'running') return false;
    const timing = animation.effect && animation.effect.getComputedTiming ? animation.effect.getComputedTiming() : {};
    // One that ends after the bound is no overlay on its way, and waiting for it is in vain: a spinner
    // never ends; Wagtail's badge pings 5 times over 25 s (it cost 1.5 s before every replayed call).
    const left = (timing.endTime - (timing.localTime || 0)) / Math.abs(animation.playbackRate || 1);
    if (!(left <= end - performance.now())) return false;
    const target = animation.effect && animation.effect.target;
    return !target || !target.isConnected || target.getClientRects().length > 0;
  });
  const look = () => {
    const now = performance.now();
    // quiet from now on too: a picker that opens a moment after its field got the focus shows first
    const changed = window[KEY] === undefined ? start : Math.max(window[KEY], start);
    if ((!moving() && (idle() || now - changed >= quietMs)) || now >= end) done(now < end);
    else setTimeout(look, 25);
  };
  look();
})"""


@cache
def still_first(script: str) -> str:
    """``script`` (an in-page function of one argument) run once its frame holds still, in the same
    round trip: the new function takes ``[STILL_ARGS, argument]``. What an action does right after
    holding still (its element's probe) need not cost a round trip of its own."""
    return f"async ([still, argument]) => {{ await ({_STILL})(still); return await ({script})(argument); }}"


STILL_ARGS = (MOTION_QUIET_S * 1000, MOTION_MAX_S * 1000)  # what still_first's script waits with


async def settle_motion(page: Page, *, quiet_s: float = MOTION_QUIET_S, max_s: float = MOTION_MAX_S,
                        besides: Frame | None = None) -> bool:
    """Wait until every frame of ``page`` holds still (see the module docstring); False when the
    bound ran out first. A frame that goes away meanwhile is no reason to fail. ``besides``: a
    frame held still by other means (a script of :func:`still_first` running in it)."""
    frames = [frame for frame in page.frames if not frame.is_detached() and frame is not besides]
    if not frames:
        return True

    return await _in_every_frame(page, frames, _STILL, [quiet_s * 1000, max_s * 1000], "hold still", max_s)


async def _in_every_frame(page: Page, frames: list[Frame], script: str, arg: object, what: str, max_s: float) -> bool:
    """Run a waiting ``script`` in each of ``frames`` at once; True when every frame's said True. A
    frame navigating or gone has nothing to wait for; a main thread stuck in a script is no reason to
    stop the run (False)."""

    async def wait(frame: Frame) -> bool:
        try:
            return bool(await frame.evaluate(script, arg))
        except PlaywrightError as error:
            if is_closed_error(error) and frame is page.main_frame:
                raise
            return True

    async with translate_errors(f"wait for the page to {what}", max_s + 1.0):
        try:
            results = await asyncio.wait_for(asyncio.gather(*(wait(frame) for frame in frames)), max_s + 1.0)
        except TimeoutError:
            return False
    return all(results)


# Until no timeout the page set while it was young is still to run (listeners.js: a widget its script
# builds a moment after the load) and no node was added or removed for `quietMs`. Bounded by `capMs`
# from the call, and, while such a timeout is pending, from when the latest of them is due (the page's
# own clock: they are all due within BUILD_WINDOW_S of its load), so a step that began looking early
# still covers the build. `pendingOnly`: a page with none pending is taken at once.
_BUILT = """([quietMs, capMs, pendingOnly]) => new Promise((done) => {
  const building = window[Symbol.for('webtask.building')], due = window[Symbol.for('webtask.buildingDue')];
  const start = performance.now();
  let end = start + capMs, first = true;
  const look = () => {
    const now = performance.now(), changed = window[Symbol.for('webtask.changed')] ?? -Infinity;
    const waiting = typeof building === 'function' ? building() : 0;
    if (waiting && typeof due === 'function') end = Math.max(end, due() + capMs);
    if (pendingOnly && !waiting && first) done(true);
    else if ((!waiting && now - changed >= quietMs) || now >= end) done(!waiting);
    else { first = false; setTimeout(look, 25); }
  };
  look();
})"""
# The timeouts listeners.js counts as building are set in a page's first 2.5 s to run within 3 s.
BUILD_WINDOW_S = 5.5


async def settle_building(page: Page, *, quiet_s: float = MOTION_QUIET_S, max_s: float = 3.0,
                          pending_only: bool = False) -> bool:
    """Wait until no frame of ``page`` has a widget still to build (see ``_BUILT``): what a recorded step
    does before it reads a fresh page, so a replay that looks later finds what the recording found.
    ``pending_only``: a frame with no such timeout pending is taken as it is. False when the bound ran
    out first."""
    frames = [frame for frame in page.frames if not frame.is_detached()]
    return await _in_every_frame(page, frames, _BUILT, [quiet_s * 1000, max_s * 1000, pending_only],
                                 "finish building", max_s + BUILD_WINDOW_S)


# A point of the page no control, overlay or text field takes: the body or a plain container's
# margin, looked for along the page's edges inside the viewport (what a person clicks to close a
# picker). None when every point is taken.
_NEUTRAL = """() => {
  const taken = (el) => !el || el.closest('a,button,input,select,textarea,label,summary,[role],[tabindex],'
    + '[contenteditable],[onclick],dialog,iframe');
  const w = innerWidth, h = innerHeight;
  const points = [];
  for (const y of [8, h * 0.25, h * 0.5, h * 0.75, h - 8]) for (const x of [4, w - 12, w * 0.5]) points.push([x, y]);
  for (const [x, y] of points) {
    const el = document.elementFromPoint(x, y);
    if (!el || taken(el)) continue;
    const style = getComputedStyle(el);
    if (style.position === 'fixed' || style.position === 'absolute') continue;  // an overlay's own ground
    return [x, y];
  }
  return null;
}"""


async def click_neutral_ground(page: Page) -> bool:
    """Click a point of the page that nothing takes (see ``_NEUTRAL``); False when there is none."""
    async with translate_errors("click where nothing is", MOTION_MAX_S):
        point = await page.main_frame.evaluate(_NEUTRAL)
        if not point:
            return False
        await page.mouse.click(float(point[0]), float(point[1]))
    return True


async def pointer_off_page(page: Page) -> None:
    """Take the mouse off the page, as a hand leaves it to type: nothing is hovered any more (a point
    outside the viewport hits no element)."""
    await page.mouse.move(-1, -1)


_MIDDLE = """([mark, id]) => {
  const el = document.querySelector(`[${mark}="${CSS.escape(id)}"]`);
  if (!el) return false;
  el.scrollIntoView({block: 'center', inline: 'nearest'});
  return true;
}"""


async def scroll_to_middle(page: Page, element_id: str) -> bool:
    """Scroll the element the last observation named ``element_id`` to the middle of the view (out
    from under a sticky footer or header); False when no frame has it."""
    async with translate_errors(f"scroll {element_id} to the middle", MOTION_MAX_S):
        for frame in page.frames:
            if not frame.is_detached() and await frame.evaluate(_MIDDLE, [MARK_ATTRIBUTE, element_id]):
                return True
    return False


async def page_age_s(page: Page) -> float | None:
    """Seconds since the page's document began loading (None: no document to ask, it is closing
    or navigating): a page a moment old may still be drawing what its script adds."""
    try:
        age_ms = await page.evaluate("performance.now()")
    except PlaywrightError:
        return None  # closed, or its document went away under the question (it navigated)
    return float(age_ms) / 1000.0 if isinstance(age_ms, int | float) else None
