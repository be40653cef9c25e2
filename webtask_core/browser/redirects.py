"""Stopping server redirects onto hosts `allowed_domains` refuses, before the redirected request leaves.

Playwright's routes see only the first request of a redirect chain, so an allowed page that answers
``302 Location: https://elsewhere/?data=…`` (an open redirect, a "partner link") would otherwise
reach the other host. Chromium's Fetch domain, at the response stage, shows every hop's redirect
response before it is followed: one CDP session per tab pauses document responses (every response
when the page's own requests are guarded too, `block_requests`), and a redirect whose target the
policy refuses is aborted there (the tab stays where it was). The first request of
a tab opened by the page can slip past (its session attaches a moment later); the request listener
in :mod:`domains` still notices that one and takes the tab off the foreign host.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urljoin

from playwright.async_api import BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from webtask_core.browser.failures import first_line, is_closed_error

__all__ = ["RedirectGuard"]

logger = logging.getLogger(__name__)

_REDIRECT_STATUSES = {301, 302, 303, 307, 308}
_DOCUMENTS = {"patterns": [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"}]}
# Every response: an allowed image, script or fetch URL that redirects elsewhere is a request to
# elsewhere. One round trip per response, paid only by sessions that block the page's own requests.
_EVERYTHING = {"patterns": [{"urlPattern": "*", "requestStage": "Response"}]}


class RedirectGuard:
    """Watches every tab of a context. ``refuses(url, main_frame)`` decides; ``on_block(url, page)`` records.
    With ``every_resource``, the redirects of a page's subresources are checked too, not only documents'."""

    def __init__(
        self, refuses: Callable[[str, bool], bool], on_block: Callable[[str, Page], None], *, every_resource: bool = False
    ):
        self._refuses = refuses
        self._on_block = on_block
        self._patterns = _EVERYTHING if every_resource else _DOCUMENTS
        self._tasks: set[asyncio.Task[None]] = set()
        self._watching: set[asyncio.Task[None]] = set()

    def attach(self, context: BrowserContext) -> None:
        context.on("page", self._on_page)

    async def ready(self) -> None:
        """Wait until every tab opened so far is watched (call it before the first navigation)."""
        while self._watching:
            await asyncio.gather(*list(self._watching))

    def _on_page(self, page: Page) -> None:
        self._spawn(self._watch(page), self._watching)

    def _spawn(self, coroutine: Coroutine[Any, Any, None], into: set[asyncio.Task[None]]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coroutine)
        into.add(task)
        task.add_done_callback(into.discard)
        return task

    async def _watch(self, page: Page) -> None:
        try:
            cdp = await page.context.new_cdp_session(page)
            tree = await cdp.send("Page.getFrameTree")
            main_frame = tree["frameTree"]["frame"]["id"]
            cdp.on("Fetch.requestPaused", lambda event: self._spawn(self._paused(cdp, page, main_frame, event), self._tasks))
            await cdp.send("Fetch.enable", self._patterns)
        except PlaywrightError as error:
            if page.is_closed() or is_closed_error(error):
                return  # the tab (or the browser) went away first: nothing to watch
            raise

    async def _paused(self, cdp: CDPSession, page: Page, main_frame: str, event: dict[str, Any]) -> None:
        request_id = event["requestId"]
        target = _redirect_target(event)
        # The tab's own document (not an image or a script of it, not a child frame's document).
        main = event.get("frameId") == main_frame and event.get("resourceType") == "Document"
        try:
            if target is not None and self._refuses(target, main):
                if main:
                    self._on_block(target, page)
                # "Aborted" cancels the navigation and keeps the current page (no error page).
                reason = "Aborted" if main else "BlockedByClient"
                await cdp.send("Fetch.failRequest", {"requestId": request_id, "errorReason": reason})
            else:
                await cdp.send("Fetch.continueRequest", {"requestId": request_id})
        except PlaywrightError as error:
            # The tab closed, or the request was cancelled meanwhile (its id is no longer valid).
            if page.is_closed() or is_closed_error(error) or "invalid" in error.message.lower():
                return
            logger.warning("redirect guard: could not answer a paused request on %s: %s", page.url, first_line(error))


def _redirect_target(event: dict[str, Any]) -> str | None:
    if event.get("responseStatusCode") not in _REDIRECT_STATUSES:
        return None
    for header in event.get("responseHeaders") or []:
        if header.get("name", "").lower() == "location" and header.get("value"):
            return urljoin(event["request"]["url"], header["value"])
    return None
