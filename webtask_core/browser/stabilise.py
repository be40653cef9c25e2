"""Waiting, after an action, until the page has settled: load state and network quiet, bounded.

Never a fixed sleep: each wait ends as soon as its condition holds, and all of them together end at
the settle deadline whatever the page does (long polling, endless animations).
"""

from __future__ import annotations

import asyncio
import time

from playwright.async_api import BrowserContext, Page, Request
from playwright.async_api import Error as PlaywrightError

from webtask_core.browser.failures import is_closed_error

__all__ = ["NetworkTracker", "settle"]

# The network must stay quiet this long to count as idle: a click handler often fires its fetch a
# moment after the click returns.
QUIET_S = 0.1

_NEXT_FRAME = """() => new Promise((done) => {
  requestAnimationFrame(() => setTimeout(done, 0));
  setTimeout(done, 100);
})"""


class NetworkTracker:
    """Counts in-flight requests of one browser context."""

    def __init__(self) -> None:
        self._inflight: set[Request] = set()
        self._changed = asyncio.Event()
        self.last_activity = time.monotonic()

    def attach(self, context: BrowserContext) -> None:
        context.on("request", self._started)
        context.on("requestfinished", self._ended)
        context.on("requestfailed", self._ended)

    @property
    def inflight(self) -> int:
        return len(self._inflight)

    def _started(self, request: Request) -> None:
        self._inflight.add(request)
        self._touch()

    def _ended(self, request: Request) -> None:
        self._inflight.discard(request)
        self._touch()

    def _touch(self) -> None:
        self.last_activity = time.monotonic()
        self._changed.set()

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


async def settle(page: Page, tracker: NetworkTracker, *, navigated: bool, timeout_s: float) -> None:
    """Let `page` settle after an action: load (if it navigated), network quiet, one painted frame."""
    if timeout_s <= 0 or page.is_closed():
        return
    deadline = time.monotonic() + timeout_s
    try:
        if navigated:
            await page.wait_for_load_state("load", timeout=max(1.0, (deadline - time.monotonic()) * 1000))
        await tracker.wait_quiet(deadline)
        remaining = deadline - time.monotonic()
        if remaining > 0.05:
            await asyncio.wait_for(page.evaluate(_NEXT_FRAME), timeout=remaining)
    except (PlaywrightError, TimeoutError) as error:
        # A page that never finishes loading is still usable; only a dead one is an error.
        if is_closed_error(error):
            raise
