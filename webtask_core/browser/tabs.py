"""The tabs of one session: which exist, which is active, what happened in them during an action."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from playwright.async_api import BrowserContext, Dialog, Frame, Page
from playwright.async_api import Error as PlaywrightError

from webtask_core.browser.bounded import within
from webtask_core.browser.failures import first_line, is_closed_error
from webtask_core.browser.models import TabInfo
from webtask_core.errors import BrowserCrashedError, TransientError

__all__ = ["TabSet"]

logger = logging.getLogger(__name__)

_TITLE_S = 2.0  # how long another tab's title is waited for (its script may be stuck)


class TabSet:
    """Tracks every page of a context in opening order, including tabs the page opens itself."""

    def __init__(self, context: BrowserContext) -> None:
        self._context = context
        self.pages: list[Page] = []
        self.active: Page | None = None
        self.crashed: str | None = None
        self.notes: list[str] = []  # things worth telling the model about the current action
        self._navigations: dict[Page, int] = {}
        self._navigated_event = asyncio.Event()
        context.on("page", self.add)

    def add(self, page: Page) -> None:
        if page in self.pages:
            return
        self.pages.append(page)
        self._navigations[page] = 0
        if self.active is None:
            self.active = page
        page.on("framenavigated", lambda frame: self._navigated(page, frame))
        page.on("close", lambda _: self._closed(page))
        page.on("crash", lambda _: self._crashed(page))
        page.on("dialog", self._dialog)

    def navigations(self, page: Page) -> int:
        """How many main-frame navigations `page` has had (same-document ones included)."""
        return self._navigations.get(page, 0)

    def index_of(self, page: Page) -> int:
        return self.pages.index(page)

    def _navigated(self, page: Page, frame: Frame) -> None:
        if frame is page.main_frame:
            self._navigations[page] = self._navigations.get(page, 0) + 1
            self._navigated_event.set()

    async def wait_navigation(self, page: Page, after: int, timeout_s: float) -> bool:
        """Wait until `page` has had more than `after` main-frame navigations; False on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.navigations(page) <= after:
            remaining = deadline - loop.time()
            if remaining <= 0 or page.is_closed():
                return False
            self._navigated_event.clear()
            try:
                await asyncio.wait_for(self._navigated_event.wait(), timeout=remaining)
            except TimeoutError:
                return False
        return True

    def _closed(self, page: Page) -> None:
        if page in self.pages:
            self.pages.remove(page)
        if self.active is page:
            self.active = self.pages[-1] if self.pages else None
            self.notes.append("the tab closed" + (f"; now on tab {len(self.pages) - 1}" if self.pages else ""))

    def _crashed(self, page: Page) -> None:
        self.crashed = f"the page {page.url} crashed"

    async def _dialog(self, dialog: Dialog) -> None:
        # A person would answer the dialog to get on with the task: accept alerts and confirmations,
        # dismiss prompts (there is nothing sensible to type into them), and say so.
        kind, text = dialog.type, " ".join(dialog.message.split())[:200]
        try:
            if kind == "prompt":
                await dialog.dismiss()
                self.notes.append(f'the page asked "{text}" in a prompt dialog, which was dismissed')
            else:
                await dialog.accept()
                self.notes.append(f'the page showed a {kind} dialog "{text}", which was accepted')
        except PlaywrightError as error:
            if not is_closed_error(error):
                raise
            logger.debug("dialog closed with its page: %s", error.message)

    async def infos(self, active: Page, active_title: str) -> list[TabInfo]:
        """Every open tab's index, URL and title (`active`'s title is known already)."""
        pages = [page for page in self.pages if not page.is_closed()]

        async def title(page: Page) -> str:
            if page is active:
                return active_title
            try:
                return await within(page.title(), _TITLE_S)
            except TimeoutError:
                return ""  # a tab stuck in a script answers nothing; the look at the active one goes on
            except PlaywrightError as error:
                if is_closed_error(error) and not page.is_closed():
                    raise
                return ""  # navigating or just closed: the title is not known right now

        titles = await asyncio.gather(*(title(page) for page in pages))
        return [
            TabInfo(index=index, url=page.url, title=text, active=page is active)
            for index, (page, text) in enumerate(zip(pages, titles, strict=True))
        ]

    async def ensure_active(self) -> Page:
        """The active page; a fresh blank tab if the page closed every tab."""
        if self.active is None or self.active.is_closed():
            live = [page for page in self.pages if not page.is_closed()]
            self.active = live[-1] if live else None
        if self.active is None:
            try:
                page = await self._context.new_page()
            except PlaywrightError as error:
                if is_closed_error(error):  # Chromium died under us (killed, crashed): relaunch, not a bug
                    raise BrowserCrashedError(f"opening a tab: {first_line(error)}") from error
                raise
            self.add(page)
            self.active = page
        return self.active

    async def storage_state(self, limit_s: float) -> dict[str, Any]:
        """Cookies and local storage of every origin (Playwright's storage_state dict). Reading local
        storage waits on the tabs, and one stuck in a script would make it wait forever: TransientError
        after ``limit_s``; a PlaywrightError is the caller's to translate."""
        try:
            return dict(await within(self._context.storage_state(), limit_s))
        except TimeoutError as error:
            raise TransientError(f"reading the storage state: a page did not respond within {limit_s:g} s") from error
