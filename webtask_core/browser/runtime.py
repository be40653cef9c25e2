"""The tab a task runs in, kept alive: opened in the right browser, snapshotted after every good
step, reopened after a crash. What the Agent and the Prefect flow both run their tasks in.

Where the tab comes from, by what the caller gave:

- nothing: a Chromium of the runtime's own, launched on first use, relaunched when it died;
- a :class:`SharedBrowser` (or one active in an ``async with SharedBrowser():`` block on this event
  loop): a context in the one shared Chromium, which relaunches itself once when it died;
- a :class:`Browser`: a context in the caller's browser (never closed or relaunched here);
- a :class:`BrowserTab`: the caller's tab itself (never closed or reopened here).

After every successful step the runtime keeps a snapshot of the storage state (cookies, local
storage) and the URL, so a tab reopened after a crash is still logged in and on the same page.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from webtask_core.browser.launch import Browser
from webtask_core.browser.models import BrowserConfig
from webtask_core.browser.tab import BrowserTab
from webtask_core.errors import ActionError, BrowserCrashedError, ConfigError, TransientError

if TYPE_CHECKING:
    from webtask_core.browser.tracing import TraceRecorder

__all__ = ["BrowserRuntime", "SharedBrowser", "active_shared_browser"]

logger = logging.getLogger(__name__)

# Pages not worth going back to after a reopen.
_BLANK_URLS = ("", "about:blank")
# Reading local storage waits on the page, which may be stuck in a script: a snapshot is bounded.
_SNAPSHOT_TIMEOUT_S = 3.0


class SharedBrowser:
    """One Chromium for every runtime opened inside ``async with SharedBrowser():`` on this event loop.

    Tasks created in the block (and Prefect's in-process subflows) inherit it through a context
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

    async def __aenter__(self) -> SharedBrowser:
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
        """Playwright objects belong to one event loop: a runtime on another loop must not use it."""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    async def browser(self) -> Browser:
        """The running Chromium: launched on first use, relaunched (once, under the lock) when dead.
        Tasks that find it dead at the same moment wait for one relaunch and share it."""
        async with self._lock:
            if self._closed:
                raise BrowserCrashedError("the shared browser was closed (its block ended)")
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
    """``async with BrowserRuntime(...) as runtime``: ``open`` opens the tab, ``current_tab`` is the
    Worker's tab provider, ``ensure_alive`` / ``reopen`` replace a failed tab, ``snapshot`` keeps
    what a reopened tab resumes from, ``close`` leaves nothing of the runtime's own running.

    Give at most one of ``browser`` (a caller's Browser), ``tab`` (a caller's BrowserTab) and
    ``shared``; with none, the active SharedBrowser of this event loop, else a Chromium of its own.
    ``tracer``: a Playwright trace of every tab it opens, saved when the tab is closed.
    """

    def __init__(
        self,
        config: BrowserConfig | None = None,
        *,
        browser: Browser | None = None,
        tab: BrowserTab | None = None,
        shared: SharedBrowser | None = None,
        storage_state: dict[str, Any] | None = None,
        allowed_domains: Sequence[str] | None = None,
        block_requests: bool = False,
        tracer: TraceRecorder | None = None,
    ):
        if sum(given is not None for given in (browser, tab, shared)) > 1:
            raise ConfigError("browser", "give at most one of a Browser, a BrowserTab and a SharedBrowser")
        self.config = config or BrowserConfig()
        self.allowed_domains = list(allowed_domains) if allowed_domains else None
        self.block_requests = block_requests
        self.tracer = tracer
        self.storage_state_snapshot: dict[str, Any] | None = storage_state
        self.url_snapshot: str = ""
        self.relaunches = 0
        self._callers_browser = browser
        self._callers_tab = tab
        self.shared = shared if shared is not None else (None if browser or tab else active_shared_browser())
        self._own_browser: Browser | None = None  # only when neither shared nor the caller's
        self._tab: BrowserTab | None = tab

    async def __aenter__(self) -> BrowserRuntime:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        if exc_type is not None and self.tracer is not None:
            self.tracer.keep = True  # whatever its owner decided before, a run ending on an error keeps its trace
        await self.close()

    # ---- the tab the worker uses ----

    def current_tab(self) -> BrowserTab:
        if self._tab is None:
            raise BrowserCrashedError("the task has no browser tab (it was closed or never opened)")
        return self._tab

    @property
    def has_tab(self) -> bool:
        return self._tab is not None

    @property
    def is_alive(self) -> bool:
        return self._tab is not None and self._tab.is_alive

    @property
    def can_reopen(self) -> bool:
        """False for a caller's tab: it is the caller's to replace."""
        return self._callers_tab is None

    # ---- lifecycle ----

    async def open(self, url: str | None = None) -> BrowserTab:
        """The task's tab (opened with the snapshot's storage state when there is none yet), at ``url``.

        A bad ``url`` is a ConfigError("start_url"). A browser that dies meanwhile (a shared one can
        die under another task) gets one more try in a relaunched browser before the error goes out.
        """
        for attempt in (1, 2):
            try:
                if self._tab is None:
                    await self._start_tab()
                if url:
                    await self.current_tab().navigate(url)
                break
            except ActionError as exc:
                raise ConfigError("start_url", f"cannot open {url!r}: {exc}") from exc
            except BrowserCrashedError as exc:
                if attempt == 2 or not self.can_reopen:
                    raise
                logger.warning("The browser died while the task's tab opened (%s); trying again", exc)
                await self._discard_dead()
                self.relaunches += 1
        self.url_snapshot = self.current_tab().url
        return self.current_tab()

    async def ensure_alive(self, fallback_url: str | None = None) -> bool:
        """Reopen a dead tab (relaunching a dead browser of our own) at the snapshot's URL, else at
        ``fallback_url``. Returns True when it reopened."""
        if self.is_alive:
            return False
        if not self.can_reopen:
            raise BrowserCrashedError("the browser tab passed to the agent died; it cannot be reopened here")
        logger.warning("The browser died")
        await self.reopen(fallback_url)
        return True

    async def reopen(self, fallback_url: str | None = None, *, blank: bool = False) -> None:
        """Replace the tab (relaunching a dead browser of our own) at the snapshot's URL, unless
        ``blank`` or the old tab is alive but stuck on that very URL (a script spinning there)."""
        if not self.can_reopen:
            raise BrowserCrashedError("the browser tab passed to the agent failed; it cannot be reopened here")
        target = "" if blank else (self.url_snapshot if self.url_snapshot not in _BLANK_URLS else (fallback_url or ""))
        old = self._tab
        if old is not None and old.is_alive and target not in _BLANK_URLS and old.url == target:
            target = ""
        logger.warning("Reopening the task's tab at %s", target or "about:blank")
        await self._discard_dead()
        await self._start_tab()
        self.relaunches += 1
        if target not in _BLANK_URLS:
            try:
                await self.current_tab().navigate(target)
            except ActionError as exc:  # the model will see where the tab is
                logger.warning("%s could not be opened again: %s", target, exc)

    async def snapshot(self) -> None:
        """Remember cookies, local storage and the URL after a successful step (a caller's tab is
        never reopened here, so it needs none). Bounded; a failure only costs the next reopen an
        older snapshot."""
        if not self.can_reopen or self._tab is None:
            return
        tab = self._tab
        try:
            self.storage_state_snapshot = await asyncio.wait_for(tab.storage_state(), timeout=_SNAPSHOT_TIMEOUT_S)
            self.url_snapshot = tab.url
        except (TransientError, TimeoutError) as error:
            logger.warning("could not save the browser state after the step: %s", error or "timed out")

    async def final_state(self) -> tuple[dict[str, Any] | None, str]:
        """The storage state and URL to save at the end: live when the tab runs, else the snapshot."""
        if self.is_alive:
            await self.snapshot()
        return self.storage_state_snapshot, self.url_snapshot

    async def close(self) -> None:
        """Close the tab and Chromium when they are the runtime's own; safe after a crash and when repeated."""
        try:
            await self._close_tab()
        finally:
            await self._close_own_browser()

    # ---- helpers ----

    async def _start_tab(self) -> None:
        await self._open_tab()
        if self.tracer is not None and self._tab is not None:
            await self.tracer.start(self._tab)

    async def _open_tab(self) -> None:
        if self._callers_tab is not None:
            self._tab = self._callers_tab
            return
        if self.shared is not None:
            browser = await self.shared.browser()
        elif self._callers_browser is not None:
            browser = self._callers_browser
        else:
            if self._own_browser is None:
                self._own_browser = await Browser.launch(self.config)
            browser = self._own_browser
        self._tab = await browser.new_tab(
            storage_state=self.storage_state_snapshot,
            allowed_domains=self.allowed_domains,
            block_requests=self.block_requests,
        )

    async def _discard_dead(self) -> None:
        """Drop the tab, and our own Chromium if that died (a shared one relaunches itself)."""
        await self._close_tab()
        if self._own_browser is not None and not self._own_browser.is_alive:
            await self._close_own_browser()

    async def _close_tab(self) -> None:
        tab, self._tab = self._tab, None
        if tab is not None and self.tracer is not None:
            await self.tracer.stop(tab)  # before the context closes: its trace goes with it
        if tab is not None and tab is not self._callers_tab:
            await tab.close()  # safe after a crash

    async def _close_own_browser(self) -> None:
        browser, self._own_browser = self._own_browser, None
        if browser is not None:
            await browser.close()
