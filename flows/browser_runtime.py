"""The flow run's browser: one tab (a BrowserContext) for the task, reopened after a crash.

The browser lives in the flow-run process, on the flow's event loop. After every successful step
the runtime keeps a snapshot of the storage state (cookies, local storage) and the URL, so a step
retried after a crash can open a fresh context that is still logged in, on the same page.

By default each runtime launches its own Chromium. Inside ``async with SharedBrowser():`` every
runtime on that event loop opens its context in the one shared Chromium instead (a batch runs many
listings this way: ~1 s and ~200 MiB less per listing in flight). The shared browser is launched on
first use, never closed by a runtime, and relaunched once under a lock when it died: the listings
whose contexts died with it get ``BrowserCrashedError``, and their step retries reopen a context in
the relaunched browser.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

from webtask_core.browser import Browser, BrowserConfig, BrowserSession
from webtask_core.errors import ActionError, BrowserCrashedError, ConfigError

__all__ = ["BrowserRuntime", "SharedBrowser", "active_shared_browser"]

logger = logging.getLogger("webtask.flows.browser")

# Pages not worth going back to after a relaunch.
_BLANK_URLS = ("", "about:blank")


class SharedBrowser:
    """One Chromium for every ``run-webtask`` run awaited inside ``async with SharedBrowser():``.

    In-process subflows (and asyncio tasks created in the block) inherit it through a context
    variable. Leaving the block closes the browser, whatever happened inside it.
    """

    def __init__(self, config: BrowserConfig | None = None):
        self.config = config or BrowserConfig()
        self.launches = 0  # Chromium launches, the first one included
        self._browser: Browser | None = None
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._token: Any = None
        self._closed = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("running" if self.is_alive else "idle")
        return f"SharedBrowser({state}, launches={self.launches})"

    async def __aenter__(self) -> "SharedBrowser":
        if self._token is not None or self._closed:
            raise RuntimeError("a SharedBrowser can be entered once")
        self._loop = asyncio.get_running_loop()
        self._token = _SHARED.set(self)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            _SHARED.reset(self._token)
        except ValueError:  # exited in another context than entered: still close the browser
            _SHARED.set(None)
        await self.close()

    @property
    def is_alive(self) -> bool:
        return self._browser is not None and self._browser.is_alive

    @property
    def relaunches(self) -> int:
        return max(0, self.launches - 1)

    def serves_this_loop(self) -> bool:
        """Playwright objects belong to one event loop: a run on another loop must not use it."""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    async def browser(self) -> Browser:
        """The running Chromium: launched on first use, relaunched (once, under the lock) when dead.

        Listings that find it dead at the same moment wait for one relaunch and share it.
        """
        async with self._lock:
            if self._closed:
                raise BrowserCrashedError("the shared browser was closed (its batch ended)")
            if self._browser is not None and self._browser.is_alive:
                return self._browser
            if self._browser is not None:
                logger.warning("The shared browser died; relaunching it")
                dead, self._browser = self._browser, None
                await dead.close()  # safe after a crash: frees Playwright's driver and the temp folder
            self._browser = await Browser.launch(self.config)
            self.launches += 1
            return self._browser

    async def close(self) -> None:
        """Close Chromium (and every context still open in it); safe when repeated."""
        async with self._lock:
            self._closed = True
            browser, self._browser = self._browser, None
            if browser is not None:
                await browser.close()


_SHARED: ContextVar[SharedBrowser | None] = ContextVar("webtask_shared_browser", default=None)


def active_shared_browser() -> SharedBrowser | None:
    """The SharedBrowser of the enclosing ``async with`` block, if it serves this event loop."""
    shared = _SHARED.get()
    if shared is None:
        return None
    if not shared.serves_this_loop():
        logger.warning("A SharedBrowser is active but belongs to another event loop; launching a browser of our own")
        return None
    return shared


class BrowserRuntime:
    """``async with BrowserRuntime(config, ...) as runtime``: ``open`` opens the tab, ``current_session``
    is the Worker's session provider, ``ensure_alive`` reopens it, ``close`` leaves nothing running.

    ``shared``: the SharedBrowser to open the context in; default: the active one, if any, else a
    Chromium of this runtime's own.
    """

    def __init__(
        self,
        config: BrowserConfig | None = None,
        *,
        storage_state: dict[str, Any] | None = None,
        allowed_domains: Sequence[str] | None = None,
        block_requests: bool = False,
        shared: SharedBrowser | None = None,
    ):
        self.config = config or BrowserConfig()
        self.allowed_domains = list(allowed_domains) if allowed_domains else None
        self.block_requests = block_requests
        self.storage_state_snapshot: dict[str, Any] | None = storage_state
        self.url_snapshot: str = ""
        self.relaunches = 0
        self.shared = shared if shared is not None else active_shared_browser()
        self._browser: Browser | None = None  # only when not shared: this runtime's own Chromium
        self._session: BrowserSession | None = None

    async def __aenter__(self) -> "BrowserRuntime":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # ---- the session the worker uses ----

    def current_session(self) -> BrowserSession:
        if self._session is None:
            raise BrowserCrashedError("the flow run has no browser session (it was closed or never opened)")
        return self._session

    @property
    def is_alive(self) -> bool:
        return self._session is not None and self._session.is_alive

    # ---- lifecycle ----

    async def open(self, url: str | None) -> BrowserSession:
        """Open the task's tab with the stored storage state and go to ``url``.

        A browser that dies meanwhile (a shared one can die under another listing) gets one more
        try in a relaunched browser before the error goes to the caller.
        """
        for attempt in (1, 2):
            try:
                await self._start_session()
                if url:
                    await self._session.navigate(url)  # type: ignore[union-attr]
                break
            except ActionError as exc:
                raise ConfigError("start_url", f"cannot open {url!r}: {exc}") from exc
            except BrowserCrashedError as exc:
                if attempt == 2:
                    raise
                logger.warning("The browser died while the task's tab opened (%s); trying again", exc)
                await self._discard_dead()
                self.relaunches += 1
        self.url_snapshot = self.current_session().url
        return self.current_session()

    async def ensure_alive(self, fallback_url: str | None = None) -> bool:
        """Reopen what died (the tab, or the whole browser), restore storage state and URL.

        The URL is the snapshot's (after the last successful step), else ``fallback_url`` (the last
        URL the task saw). Returns True when it reopened.
        """
        if self.is_alive:
            return False
        logger.warning("The browser died")
        await self.reopen(fallback_url)
        return True

    async def reopen(self, fallback_url: str | None = None, *, blank: bool = False) -> None:
        """Replace the task's tab (relaunching a dead browser), at the snapshot URL unless ``blank``."""
        target = "" if blank else (self.url_snapshot if self.url_snapshot not in _BLANK_URLS else (fallback_url or ""))
        logger.warning("Reopening the task's tab at %s", target or "about:blank")
        await self._discard_dead()
        await self._start_session()
        self.relaunches += 1
        if target not in _BLANK_URLS:
            try:
                await self.current_session().navigate(target)
            except ActionError as exc:  # the model will see where it is
                logger.warning("%s could not be opened again: %s", target, exc)

    async def snapshot(self) -> None:
        """Remember cookies, local storage and the URL (after a successful step)."""
        session = self.current_session()
        self.storage_state_snapshot = await session.storage_state()
        self.url_snapshot = session.url

    async def final_state(self) -> tuple[dict[str, Any] | None, str]:
        """The storage state and URL to save at the end: live when the browser runs, else the snapshot."""
        if self.is_alive:
            try:
                await self.snapshot()
            except BrowserCrashedError:
                logger.warning("The browser died at the end of the run; saving the last snapshot")
        return self.storage_state_snapshot, self.url_snapshot

    async def close(self) -> None:
        """Close the tab, and Chromium when it is this runtime's own; safe after a crash and when repeated."""
        try:
            await self._close_session()
        finally:
            await self._close_browser()

    # ---- helpers ----

    async def _start_session(self) -> None:
        if self.shared is not None:
            browser = await self.shared.browser()
        else:
            if self._browser is None:
                self._browser = await Browser.launch(self.config)
            browser = self._browser
        self._session = await browser.new_session(
            storage_state=self.storage_state_snapshot,
            allowed_domains=self.allowed_domains,
            block_requests=self.block_requests,
        )

    async def _discard_dead(self) -> None:
        """Drop the dead tab, and this runtime's own Chromium if that died (a shared one relaunches itself)."""
        await self._close_session()
        if self._browser is not None and not self._browser.is_alive:
            await self._close_browser()

    async def _close_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()  # safe after a crash

    async def _close_browser(self) -> None:
        browser, self._browser = self._browser, None
        if browser is not None:
            await browser.close()
