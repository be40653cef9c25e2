"""Actions on the active page as a whole (not on an element id): navigate, go back, scroll, wait.

Each returns a short sentence saying what happened; the session settles the page and reports
navigations and new tabs around it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from webtask_core.browser.actions import quote_for_model
from webtask_core.browser.bounded import clean_up
from webtask_core.browser.failures import is_closed_error
from webtask_core.browser.scripts import marked
from webtask_core.browser.stabilise import NetworkTracker
from webtask_core.browser.tabs import TabSet
from webtask_core.errors import ActionError
from webtask_core.limits import SETTLED_QUIET_S, WAIT_FOR_MAX_S

__all__ = ["check_url", "goto", "go_back", "open_tab", "scroll_page", "check_wait_for", "wait_for", "wait_settled",
           "wait_changed", "stop_loading"]

_PAGE_SCROLL = """(dy) => {
  const s = document.scrollingElement || document.documentElement;
  const before = s.scrollTop;
  window.scrollBy({top: dy * window.innerHeight, behavior: 'instant'});
  return [before, s.scrollTop, s.scrollHeight, window.innerHeight];
}"""


# Resolves at the frame's next DOM change, or after `ms`.
_NEXT_MUTATION = """(ms) => new Promise((done) => {
  const observer = new MutationObserver(() => { observer.disconnect(); done(true); });
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  setTimeout(() => { observer.disconnect(); done(false); }, ms);
})"""
_RECHECK_S = 0.1


def check_url(url: object) -> str:
    """The URL, trimmed, if it is one the model may navigate to (http, https, about:blank)."""
    cleaned = url.strip() if isinstance(url, str) else url
    if not isinstance(cleaned, str) or not (cleaned.startswith(("http://", "https://")) or cleaned == "about:blank"):
        raise ActionError(f"navigate: {url!r} is not an http(s) URL; give a full address like https://example.com/")
    return cleaned


async def goto(page: Page, tabs: TabSet, url: str, timeout_s: float) -> str:
    navigations = tabs.navigations(page)
    try:
        response = await page.goto(url, wait_until="domcontentloaded", timeout=timeout_s * 1000)
    except PlaywrightTimeoutError:
        # The navigation goes on after the timeout, and until it ends every script evaluation in
        # the tab waits for it (the next observation would hang): stop it, as the Stop button does.
        await stop_loading(page)
        raise
    except PlaywrightError as error:
        if "net::ERR_" in error.message and "ERR_ABORTED" not in error.message:
            # Chromium commits its error page a moment after goto fails; wait for it, so the history
            # (go_back) and the next observation see the tab as it really is.
            await tabs.wait_navigation(page, navigations, timeout_s=2.0)
        raise
    status = f" (HTTP {response.status})" if response is not None and response.status >= 400 else ""
    return f"navigated to {page.url}{status}"


async def stop_loading(page: Page) -> None:
    """Stop whatever the tab is loading (Chromium's Page.stopLoading); a closed tab has nothing to stop."""
    try:
        cdp = await page.context.new_cdp_session(page)
        try:
            await cdp.send("Page.stopLoading")
        finally:
            await clean_up(cdp.detach())
    except PlaywrightError as error:
        if not (is_closed_error(error) or page.is_closed()):
            raise


async def go_back(page: Page, tabs: TabSet, timeout_s: float) -> str:
    url, navigations = page.url, tabs.navigations(page)
    for attempt in range(20):
        try:
            response = await page.go_back(wait_until="domcontentloaded", timeout=timeout_s * 1000)
            break
        except PlaywrightError as error:
            # Right after a failed navigation Chromium is still swapping in its error page and has no
            # page to ask for the history; it has one again within a moment.
            if "not attached to an active page" not in error.message.lower() or attempt == 19:
                raise
            await asyncio.sleep(0.05)
    if response is None and page.url == url and tabs.navigations(page) == navigations:
        raise ActionError("go_back: there is no previous page in this tab")
    return f"went back to {page.url}"


def open_tab(tabs: TabSet, tab_index: object) -> Page:
    """Make tab ``tab_index`` (0-based, among the open ones) the active one; an index with no tab is
    refused, naming the open tabs."""
    pages = [page for page in tabs.pages if not page.is_closed()]
    if not isinstance(tab_index, int) or not 0 <= tab_index < len(pages):
        listing = ", ".join(f"{index}: {page.url}" for index, page in enumerate(pages))
        raise ActionError(f"switch_tab: there is no tab {tab_index!r}; open tabs are {listing}")
    tabs.active = pages[tab_index]
    return pages[tab_index]


async def scroll_page(page: Page, direction: str, amount: float) -> str:
    sign = 1 if direction == "down" else -1
    before, after, height, viewport = await page.evaluate(_PAGE_SCROLL, sign * amount)
    if abs(after - before) < 1:
        if height <= viewport + 1:
            return "the page itself does not scroll; to scroll a list or panel, give its element_id"
        return f"already at the {'bottom' if sign > 0 else 'top'} of the page; nothing moved"
    percent = round(100 * after / (height - viewport))
    return (
        f"scrolled {direction} {amount:g} viewport(s); now scrolled {percent}% "
        f"(page is {height / viewport:.1f} viewports tall)"
    )


def check_wait_for(text: str | None, element_id: str | None, timeout_s: object) -> None:
    """wait_for's arguments: text or an element id (or neither: the page settling), a timeout in range."""
    if text is not None and element_id is not None:
        raise ActionError("wait_for: give text or element_id, not both (neither: wait for the page to settle)")
    if text is not None and not text.strip():
        raise ActionError(
            "wait_for: text is empty; give the text to wait for, or leave it out to wait for the page to settle"
        )
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not 0 < timeout_s <= WAIT_FOR_MAX_S:
        raise ActionError(
            f"wait_for: timeout_s must be more than 0 and at most {WAIT_FOR_MAX_S:g} seconds, got {timeout_s!r}"
        )


async def wait_for(page: Page, text: str | None, element: tuple[Frame, str] | None, timeout_s: float) -> str:
    """Wait until `text` (in any frame) or the marked element is visible; ActionError on timeout."""
    started = time.monotonic()
    deadline = started + timeout_s
    if element is not None:
        frame, element_id = element
        what = element_id
        waits = [_visible(frame, frame.locator(marked(element_id)).first, deadline)]
    else:
        what = f"text {quote_for_model(text or '')}"
        waits = [_visible(frame, frame.get_by_text(text or "").first, deadline) for frame in page.frames]
    if not await _first_success(waits):
        raise ActionError(f"wait_for: {what} did not appear within {timeout_s:g} s")
    return f"{what} appeared after {time.monotonic() - started:.1f} s"


async def wait_settled(page: Page, tracker: NetworkTracker, timeout_s: float) -> str:
    """Until the page is loaded, no request runs and its DOM has not changed for SETTLED_QUIET_S, or
    `timeout_s`. Not settling in time is no error: the page is as it is (a ticking clock never settles)."""
    started = time.monotonic()
    deadline = started + timeout_s
    why = f"a wait shorter than {SETTLED_QUIET_S:g} s cannot see it stay unchanged that long"
    looked = False  # a round ended with the DOM's answer (why says what it was)
    while deadline - time.monotonic() > SETTLED_QUIET_S:
        try:
            await page.wait_for_load_state("load", timeout=(deadline - time.monotonic()) * 1000)
        except PlaywrightTimeoutError:
            why = "it was still loading"
            break
        if not await tracker.wait_quiet(deadline - SETTLED_QUIET_S):
            # Out of time with none in flight: a request ended a moment ago, or (after a round) the
            # content changing is what used the time up, and the reason stays that.
            if tracker.inflight or not looked:
                why = (f"{tracker.inflight} request(s) were still running" if tracker.inflight
                       else "a request had only just ended")
            break
        looked = True
        try:
            changed = await asyncio.wait_for(
                page.evaluate(_NEXT_MUTATION, SETTLED_QUIET_S * 1000), timeout=SETTLED_QUIET_S + _RECHECK_S
            )
        except TimeoutError:
            changed = True  # a page too busy to answer is not settled
        except PlaywrightError as error:
            if is_closed_error(error):
                raise
            changed = True  # its document went away under the question: it navigated
        if not changed and not tracker.inflight:
            return (f"the page settled after {time.monotonic() - started:.1f} s "
                    f"(loaded, no request running, no change for {SETTLED_QUIET_S:g} s)")
        why = "its content kept changing" if changed else "a request started"
    return f"the page had not settled after {timeout_s:g} s ({why}); the next page state shows it as it is now"


async def wait_changed(page: Page, tracker: NetworkTracker, timeout_s: float) -> str:
    """Until the page's DOM changes (a widget its script builds a moment after the load), then until
    it settles; all within `timeout_s`. A page that does not change is no error."""
    started = time.monotonic()
    try:
        changed = await asyncio.wait_for(page.evaluate(_NEXT_MUTATION, timeout_s * 1000), timeout=timeout_s + _RECHECK_S)
    except TimeoutError:
        changed = False
    except PlaywrightError as error:
        if is_closed_error(error):
            raise
        changed = True  # it navigated under the question
    if not changed:
        return f"the page did not change in {timeout_s:g} s"
    remaining = timeout_s - (time.monotonic() - started)
    return await wait_settled(page, tracker, max(remaining, SETTLED_QUIET_S + _RECHECK_S))


async def _visible(frame: Frame, locator: Locator, deadline: float) -> None:
    """Return once `locator` is visible; PlaywrightTimeoutError at the deadline.

    Checks again whenever the frame's DOM changes (and at least every _RECHECK_S, for changes a
    MutationObserver does not see: CSS, shadow roots), so it answers within a few milliseconds of the
    page, where Playwright's own wait backs off to polling every 500 ms."""
    while True:
        try:
            if await locator.is_visible():
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            wait_s = min(_RECHECK_S, remaining)
            try:
                # Bounded here too: a page that replaced setTimeout must not make this wait forever.
                await asyncio.wait_for(frame.evaluate(_NEXT_MUTATION, wait_s * 1000), timeout=wait_s + _RECHECK_S)
            except TimeoutError:
                continue
        except PlaywrightError as error:
            if is_closed_error(error) or frame.is_detached():
                raise
            # The frame is navigating (its document went away under the check): look again once the
            # next one is there.
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            await asyncio.sleep(min(_RECHECK_S / 2, remaining))
    raise PlaywrightTimeoutError(f"not visible within the time given ({locator})")


async def _first_success(waits: Sequence[Awaitable[None]]) -> bool:
    """True as soon as one wait succeeds; False if all of them time out."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        for next_done in asyncio.as_completed(tasks):
            try:
                await next_done
                return True
            except PlaywrightTimeoutError:
                continue
            except PlaywrightError as error:
                if is_closed_error(error):
                    raise
                continue  # a frame that went away while we waited in it
        return False
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
