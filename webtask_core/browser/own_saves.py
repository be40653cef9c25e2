"""Before a submit: the page's own saves have ended.

An editor that saves by itself races a submit made right after the last change. Wagtail's page
editor autosaves 500 ms after the last change (a POST of the whole form); replay clicked Publish
within that window, the autosave reached the server after the publish and saved the page as it was
loaded before it (``form.save(commit=not page.live)``): a published page stored as an unpublished
draft, with every check of the page passed. A person, or a model, takes seconds between the last
change and the submit; replay takes milliseconds. So before a call that submits, wait (bounded)
until the timeouts the page set to run soon have run, then until the requests that write
(POST, PUT, PATCH, DELETE) it has in flight are answered. A page with neither costs one round trip.
"""

from __future__ import annotations

import asyncio
import time

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from webtask_core.browser.stabilise import NetworkTracker

__all__ = ["OWN_SAVE_DELAY_MS", "OWN_SAVES_MAX_S", "wait_for_own_saves"]

# Timeouts due within this long are the page's own work about to start (a debounced autosave: 500 ms
# in Wagtail, 300-1000 ms in most editors); later ones are not waited for.
OWN_SAVE_DELAY_MS = 1000
# The longest a submit waits for the page's own saves: a page that keeps saving is not waited for ever.
OWN_SAVES_MAX_S = 4.0
_READS = frozenset({"GET", "HEAD", "OPTIONS"})
# listeners.js: resolves once the timeouts pending now and due within `withinMs` ran or were
# cleared, with how many ran and how many are still pending at the cap. With `blur`, the focused
# field is left first: the click would leave it, and its "change" then starts a save (a debounced
# autosave) that would race the submit.
_TIMERS_DUE = """([withinMs, capMs, blur]) => {
  const field = document.activeElement;
  if (blur && field && (field.matches('input, textarea, select') || field.isContentEditable)) field.blur();
  const due = window[Symbol.for('webtask.timersDue')];
  return due ? due(withinMs, capMs) : {ran: 0, left: 0};
}"""
# Once the page's saves were answered, one task of the page's: their answers' handlers have run (the
# draft's id an autosave hands back, kept for the submit).
_NEXT_TASK = "() => new Promise((turned) => setTimeout(turned, 0))"
_POLL_S = 0.02
# After a timeout ran, the request it sent reaches us as an event of its own a moment later.
_REQUEST_EVENT_S = 0.05


def _writes(page: Page, network: NetworkTracker) -> int:
    """How many requests that write `page` has in flight (its frames', not another tab's)."""
    count = 0
    for request in network.requests_in_flight:
        if request.method.upper() in _READS:
            continue
        try:
            count += request.frame.page is page
        except PlaywrightError:  # a service worker's request belongs to no page
            continue
    return count


async def wait_for_own_saves(page: Page, network: NetworkTracker, *, blur: bool = False,
                             max_s: float = OWN_SAVES_MAX_S) -> str:
    """Wait until `page`'s soon-due timeouts ran and its writes are answered (bounded by `max_s`);
    ``blur``: leave the focused field first (before a click). Says what it waited for ("" when
    nothing was pending), for the call's log."""
    started = time.monotonic()
    deadline = started + max_s
    waited: list[str] = []
    try:
        timers = await page.evaluate(_TIMERS_DUE, [OWN_SAVE_DELAY_MS, max_s * 1000 / 2, blur])
        if timers["ran"]:
            await asyncio.sleep(_REQUEST_EVENT_S)
        if in_flight := _writes(page, network):
            waited.append(f"{in_flight} save(s) in flight")
            while _writes(page, network) and time.monotonic() < deadline:
                await asyncio.sleep(_POLL_S)
            if _writes(page, network):
                waited.append("still unanswered")
        if timers["ran"] or in_flight:
            await page.evaluate(_NEXT_TASK)
    except PlaywrightError:  # it navigated (its timers went with it) or closed: the call itself will say
        timers = {"ran": 0, "left": 0}
    if timers["left"]:
        waited.append(f"{timers['left']} timer(s) still pending")
    # Said only when the page had something pending: the look itself is no wait for its saves, and on
    # a busy machine its round trip alone takes a tenth of a second and more (it was said then).
    if timers["ran"] or waited:
        elapsed = time.monotonic() - started
        return f"waited {elapsed:.2f} s for the page's own saves" + (f" ({', '.join(waited)})" if waited else "")
    return ""
