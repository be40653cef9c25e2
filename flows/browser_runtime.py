"""The flow run's browser: one Chromium and one tab for the task, relaunched after a crash.

The browser lives in the flow-run process, on the flow's event loop. After every successful step
the runtime keeps a snapshot of the storage state (cookies, local storage) and the URL, so a step
retried after a crash can start a fresh Chromium that is still logged in, on the same page.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from webtask_core.browser import Browser, BrowserConfig, BrowserSession
from webtask_core.errors import ActionError, BrowserCrashedError, ConfigError

__all__ = ["BrowserRuntime"]

logger = logging.getLogger("webtask.flows.browser")

# Pages not worth going back to after a relaunch.
_BLANK_URLS = ("", "about:blank")


class BrowserRuntime:
    """``async with BrowserRuntime(config, ...) as runtime``: ``open`` launches, ``current_session``
    is the Worker's session provider, ``ensure_alive`` relaunches, ``close`` leaves nothing running."""

    def __init__(
        self,
        config: BrowserConfig | None = None,
        *,
        storage_state: dict[str, Any] | None = None,
        allowed_domains: Sequence[str] | None = None,
    ):
        self.config = config or BrowserConfig()
        self.allowed_domains = list(allowed_domains) if allowed_domains else None
        self.storage_state_snapshot: dict[str, Any] | None = storage_state
        self.url_snapshot: str = ""
        self.relaunches = 0
        self._browser: Browser | None = None
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
        """Launch Chromium, open the task's tab with the stored storage state, go to ``url``."""
        await self._start_session()
        if url:
            try:
                await self.current_session().navigate(url)
            except ActionError as exc:
                raise ConfigError("start_url", f"cannot open {url!r}: {exc}") from exc
        self.url_snapshot = self.current_session().url
        return self.current_session()

    async def ensure_alive(self, fallback_url: str | None = None) -> bool:
        """Relaunch what died (the tab, or the whole browser), restore storage state and URL.

        The URL is the snapshot's (after the last successful step), else ``fallback_url`` (the last
        URL the task saw). Returns True when it relaunched.
        """
        if self.is_alive:
            return False
        target = self.url_snapshot if self.url_snapshot not in _BLANK_URLS else (fallback_url or "")
        logger.warning("The browser died; relaunching it at %s", target or "about:blank")
        await self._close_session()
        if self._browser is not None and not self._browser.is_alive:
            await self._close_browser()
        await self._start_session()
        self.relaunches += 1
        if target not in _BLANK_URLS:
            try:
                await self.current_session().navigate(target)
            except ActionError as exc:  # e.g. the page is gone now: the model will see where it is
                logger.warning("After the relaunch, %s could not be opened again: %s", target, exc)
        return True

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
        """Close the tab and Chromium; safe after a crash and when repeated."""
        try:
            await self._close_session()
        finally:
            await self._close_browser()

    # ---- helpers ----

    async def _start_session(self) -> None:
        if self._browser is None:
            self._browser = await Browser.launch(self.config)
        self._session = await self._browser.new_session(
            storage_state=self.storage_state_snapshot, allowed_domains=self.allowed_domains
        )

    async def _close_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()  # safe after a crash

    async def _close_browser(self) -> None:
        browser, self._browser = self._browser, None
        if browser is not None:
            await browser.close()
