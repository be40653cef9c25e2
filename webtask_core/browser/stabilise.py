"""Waiting, after an action, until the page has settled: load state and network quiet, bounded.

Never a fixed sleep: each wait ends as soon as its condition holds, and all of them together end at
the settle deadline whatever the page does (long polling, endless animations). Network quiet is
waited for only when the action set the network going: a request still in flight, or one that
started after the action (after the new document's load, when it navigated). An action that
requested nothing costs one painted frame, not a quiet window.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

from playwright.async_api import BrowserContext, Frame, Page, Request
from playwright.async_api import Error as PlaywrightError

from webtask_core.browser.failures import is_closed_error

__all__ = ["NetworkTracker", "settle"]

# Once requests are involved, the network must stay quiet this long to count as idle: a response
# handler often fires the next request a moment after the previous one ends.
QUIET_S = 0.1

# How often to look whether a navigation in flight has committed (its request's events wake us sooner).
_COMMIT_CHECK_S = 0.02
# A navigation an action is known to have started must show its request within this long; one that
# never does was handed to another program (mailto:) or dropped by the browser.
_REQUEST_APPEARS_S = 0.5

# Then the timeouts due within 100 ms of being set that are still pending (listeners.js): a widget
# that draws what the action asked for on a short timer (jquery-datetimepicker's next month 10 ms
# after the click) has drawn it when the page is looked at next. Bounded: a page that keeps setting
# short timers is waited for once, not for ever.
SHORT_TIMERS_MAX_MS = 150
_SHORT_TIMERS = (".then(() => new Promise((done) => { const short = window[Symbol.for('webtask.shortTimers')]; "
                 f"(short ? short({SHORT_TIMERS_MAX_MS}) : Promise.resolve(0)).then(done, done); }}))")
# One round trip that ends after the page's next painted frame (bounded, for a page whose rendering
# is throttled). Event handlers and zero-delay timers queued by the action run first, and the request
# events they caused reach us before its answer.
_NEXT_FRAME = """() => new Promise((framed) => {
  const bound = setTimeout(framed, 100);  // cleared once done: our own timer is no short timer of the page's
  requestAnimationFrame(() => setTimeout(() => { clearTimeout(bound); framed(); }, 0));
})""" + _SHORT_TIMERS
# One turn of the event loop: the handlers and zero-delay timers an action queued have run.
_NEXT_TASK = "() => new Promise((turned) => setTimeout(turned, 0))" + _SHORT_TIMERS
# After a load event: one turn of the event loop, so the load handlers' zero-delay timers have run
# (and the requests they start are seen). No painted frame: reading the page does not need one, and a
# screenshot waits for its own; a frame here cost 8-20 ms on every navigating step. Then, only when
# the page added or removed nodes less than `quietMs` ago (a widget still building itself: an editor
# with its toolbar but not yet its iframe), until it has not for that long, or `capMs` (listeners.js
# notes the changes).
_AFTER_LOAD = """([quietMs, capMs]) => new Promise((done) => setTimeout(() => {
  const KEY = Symbol.for('webtask.changed');
  const end = performance.now() + capMs;
  const look = () => {
    const now = performance.now(), since = now - (window[KEY] === undefined ? -Infinity : window[KEY]);
    if (since >= quietMs || now >= end) done(); else setTimeout(look, Math.min(quietMs - since, end - now));
  };
  look();
}, 0))"""
BUILD_QUIET_S = 0.1  # a page that added no node for this long after its load is no longer building
BUILD_MAX_S = 1.5  # the longest the settle waits for a page that keeps building


def _frame_of(request: Request) -> Frame | None:
    try:
        return request.frame
    except PlaywrightError:  # a service worker's request belongs to no frame
        return None


async def _redirected(request: Request) -> bool:
    """True if `request` was answered with a redirect whose next request has not been seen yet."""
    if request.redirected_to is not None:
        return False  # the next hop is known (and tracked) already
    try:
        response = await request.response()
    except PlaywrightError as error:
        if is_closed_error(error):
            raise
        return False
    return response is not None and 300 <= response.status < 400


class NetworkTracker:
    """Counts in-flight requests of one browser context and when the last one started."""

    def __init__(self) -> None:
        self._inflight: set[Request] = set()
        self._changed = asyncio.Event()
        self.last_activity = time.monotonic()
        self.last_started = float("-inf")
        self._navigations: deque[tuple[float, Request]] = deque(maxlen=32)  # (started, request), latest last

    def attach(self, context: BrowserContext) -> None:
        context.on("request", self._started)
        context.on("requestfinished", self._ended)
        context.on("requestfailed", self._ended)

    @property
    def inflight(self) -> int:
        return len(self._inflight)

    def busy_since(self, moment: float) -> bool:
        """True if a request is in flight, or one started at or after `moment` (time.monotonic())."""
        return bool(self._inflight) or self.last_started >= moment

    def _started(self, request: Request) -> None:
        self._inflight.add(request)
        self.last_started = time.monotonic()
        if request.is_navigation_request():
            self._navigations.append((self.last_started, request))
        self._touch()

    def _ended(self, request: Request) -> None:
        self._inflight.discard(request)
        self._touch()

    def _touch(self) -> None:
        self.last_activity = time.monotonic()
        self._changed.set()

    def navigation_pending(self, page: Page) -> bool:
        """True while a document request of `page`'s main frame is in flight."""
        main = page.main_frame
        return any(request.is_navigation_request() and _frame_of(request) is main for request in self._inflight)

    def _latest_navigation(self, page: Page, since: float) -> Request | None:
        main = page.main_frame
        for at, request in reversed(self._navigations):
            if at < since:
                return None
            if _frame_of(request) is main:
                return request
        return None

    async def wait_navigation(
        self, page: Page, navigated: Callable[[], bool], deadline: float, *, expected: bool = False,
        since: float = float("-inf"),
    ) -> None:
        """Until the main frame commits a navigation (bounded): while its document request runs, and,
        when the action is known to have started one (`expected`) at `since`, until its request has
        been seen and ended without a commit (blocked, failed, a download, 204 No Content)."""
        appear_by = time.monotonic() + _REQUEST_APPEARS_S
        while not navigated():
            now = time.monotonic()
            if now >= deadline:
                return
            if not self.navigation_pending(page):
                latest = self._latest_navigation(page, since)
                if latest is None:
                    if not expected or now >= appear_by:
                        return  # nothing started; after appear_by: a link handed to another program
                elif not await _redirected(latest):
                    return  # its request ended without a commit
                # else: a redirect answered, and the request of its next hop is still to show up
            self._changed.clear()
            try:
                # Woken by any request starting or ending; the commit itself is checked on a short beat.
                await asyncio.wait_for(self._changed.wait(), timeout=min(deadline - now, _COMMIT_CHECK_S))
            except TimeoutError:
                continue

    async def wait_quiet(self, deadline: float) -> bool:
        """Wait until no request is in flight for QUIET_S, or the deadline; True if it got quiet."""
        while True:
            now = time.monotonic()
            if now >= deadline:
                return False
            if not self._inflight and now - self.last_activity >= QUIET_S:
                return True
            self._changed.clear()
            wait = deadline - now
            if not self._inflight:
                wait = min(wait, QUIET_S - (now - self.last_activity))
            try:
                await asyncio.wait_for(self._changed.wait(), timeout=max(wait, 0.001))
            except TimeoutError:
                continue


async def settle(
    page: Page,
    tracker: NetworkTracker,
    *,
    navigated: bool | Callable[[], bool],
    timeout_s: float,
    started: float | None = None,
    expect_navigation: bool = False,
    quick: bool = False,
) -> None:
    """Let `page` settle after an action that began at `started` (time.monotonic(); None: just now).

    `navigated` says whether the page's main frame has committed a navigation since the action began
    (a callable is asked again as things happen). A navigation the action started but that has not
    committed yet (`expect_navigation`: a link or form clicked with the mouse), or one whose request
    is seen running, is waited for until it commits or its request ends. Then: load (if it
    navigated) and one task turn, and network quiet only if the action caused requests that are
    still running or started after the document loaded. ``quick``: the action set a value (fill,
    select, check, upload): its input and change handlers have run once a task turn has passed, and
    a painted frame adds nothing (it cost ~16 ms a field)."""
    if timeout_s <= 0 or page.is_closed():
        return
    has_navigated: Callable[[], bool] = navigated if callable(navigated) else (lambda: navigated)
    deadline = time.monotonic() + timeout_s
    since = time.monotonic() if started is None else started
    try:
        if not has_navigated():
            if not expect_navigation:  # the request of a navigation the action started shows up
                await _next_frame(page, deadline, _NEXT_TASK if quick else _NEXT_FRAME)
            await tracker.wait_navigation(page, has_navigated, deadline, expected=expect_navigation, since=since)
        if has_navigated():
            await page.wait_for_load_state("load", timeout=max(1.0, (deadline - time.monotonic()) * 1000))
            # The new document's own requests ended with its load; what starts after it is the page's
            # scripts fetching more.
            since = time.monotonic()
            cap_s = min(BUILD_MAX_S, deadline - time.monotonic() - 0.05)
            await _next_frame(page, deadline, _AFTER_LOAD, [BUILD_QUIET_S * 1000, cap_s * 1000])
        if tracker.busy_since(since):
            await tracker.wait_quiet(deadline)
            await _next_frame(page, deadline)  # the responses' handlers have updated the page
    except (PlaywrightError, TimeoutError) as error:
        # A page that never finishes loading is still usable; only a dead one is an error.
        if is_closed_error(error):
            raise


async def _next_frame(page: Page, deadline: float, script: str = _NEXT_FRAME, arg: object = None) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0.05:
        return
    try:
        await asyncio.wait_for(page.evaluate(script, arg), timeout=remaining)
    except PlaywrightError as error:
        if is_closed_error(error):
            raise
        # The document went away under the script: a navigation, which the caller looks for next.
