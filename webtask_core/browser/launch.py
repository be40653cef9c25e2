"""Browser: one Playwright + Chromium per process, handing out a fresh context per task."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from playwright.async_api import Browser as PlaywrightBrowser
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Playwright, StorageState, async_playwright

from webtask_core.browser import observe
from webtask_core.browser.chromium import CHROMIUM_ARGS, find_chromium
from webtask_core.browser.domains import DomainPolicy
from webtask_core.browser.failures import first_line, is_closed_error
from webtask_core.browser.models import BrowserConfig
from webtask_core.browser.scripts import MARK_ENGINE, kept_script, load_script
from webtask_core.browser.tab import BrowserTab
from webtask_core.errors import BrowserCrashedError, ConfigError
from webtask_core.scratch import owned_temp_folder, remove_stale_folders

__all__ = ["Browser"]

logger = logging.getLogger(__name__)

_LAUNCH_TIMEOUT_MS = 60_000
_WORKDIR_PREFIX = "webtask-browser-"


async def _start_playwright(workdir: Path) -> Playwright:
    """Start Playwright's driver with TMPDIR pointing into `workdir` (it copies os.environ at start)."""
    tempfile.gettempdir()  # fix Python's own temp dir before TMPDIR changes for a moment
    previous = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(workdir)
    try:
        return await async_playwright().start()
    finally:
        if previous is None:
            del os.environ["TMPDIR"]
        else:
            os.environ["TMPDIR"] = previous


async def _remove_folder(folder: Path) -> None:
    """Remove the browser's temp folder; after a crash, dying child processes may still write to it."""
    for _ in range(40):
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            return
        await asyncio.sleep(0.05)
    logger.warning("could not remove the browser's temporary folder %s", folder)


def _check_storage_state(state: object) -> StorageState | None:
    if state is None:
        return None
    if not isinstance(state, dict):
        raise ConfigError("storage_state", f"must be the dict storage_state() returned, got {type(state).__name__}")
    for key in ("cookies", "origins"):
        if not isinstance(state.get(key, []), list):
            raise ConfigError("storage_state", f"{key!r} must be a list")
    return {"cookies": state.get("cookies", []), "origins": state.get("origins", [])}


class Browser:
    """A running Chromium. ``await Browser.launch(config)``, then ``new_tab()`` per task."""

    def __init__(self, playwright: Playwright, browser: PlaywrightBrowser, config: BrowserConfig, workdir: Path):
        self._playwright = playwright
        self._browser = browser
        self.config = config
        self._workdir = workdir
        self._sessions: list[BrowserTab] = []
        self._closed = False

    @classmethod
    async def launch(cls, config: BrowserConfig | None = None) -> Browser:
        """Start Chromium (headless unless config says otherwise) with CHROMIUM_ARGS."""
        config = config or BrowserConfig()
        if config.executable_path is not None and not os.access(config.executable_path, os.X_OK):
            raise ConfigError("executable_path", f"{config.executable_path!r} is not an executable file")
        if not config.headless and sys.platform.startswith("linux") and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
        ):
            raise ConfigError(
                "headless", "headed Chromium needs a display but DISPLAY is not set; use headless=True or xvfb-run"
            )
        executable = config.executable_path or find_chromium(headless=config.headless)
        # Everything Playwright and Chromium put in the temp dir (the profile, Chromium's own scratch
        # folders) goes into one folder of ours, so close() can remove it even after a crash.
        # A Chromium killed with its process (SIGKILL) left its folder behind: remove those first.
        remove_stale_folders(_WORKDIR_PREFIX)
        workdir = owned_temp_folder(_WORKDIR_PREFIX)
        try:
            playwright = await _start_playwright(workdir)
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        try:
            await playwright.selectors.register(MARK_ENGINE, script=load_script("mark_engine.js"))
            browser = await playwright.chromium.launch(
                executable_path=executable,
                headless=config.headless,
                args=[*CHROMIUM_ARGS, *config.extra_args],
                env={**os.environ, "TMPDIR": str(workdir)},
                timeout=_LAUNCH_TIMEOUT_MS,
            )
        except PlaywrightError as error:
            await playwright.stop()
            shutil.rmtree(workdir, ignore_errors=True)
            raise BrowserCrashedError(f"Chromium at {executable} did not start: {first_line(error)}") from error
        except BaseException:
            await playwright.stop()
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        return cls(playwright, browser, config, workdir)

    @property
    def is_alive(self) -> bool:
        return not self._closed and self._browser.is_connected()

    @property
    def version(self) -> str:
        return self._browser.version

    async def new_tab(
        self,
        storage_state: dict[str, Any] | None = None,
        allowed_domains: Sequence[str] | None = None,
        block_requests: bool = False,
    ) -> BrowserTab:
        """A fresh BrowserContext with one tab, optionally restoring cookies / local storage and
        restricting top-level navigations (and with `block_requests` every request) to `allowed_domains`."""
        state = _check_storage_state(storage_state)
        policy = DomainPolicy(allowed_domains, block_requests)
        if not self.is_alive:
            raise BrowserCrashedError("the browser is not running (it crashed or was closed); relaunch it")
        width, height = self.config.viewport
        try:
            context = await self._browser.new_context(
                viewport={"width": width, "height": height},
                storage_state=state,
                # A service worker would answer requests before the domain route sees them.
                service_workers="block" if policy.active else "allow",
            )
            context.set_default_timeout(self.config.action_timeout_s * 1000)
            context.set_default_navigation_timeout(self.config.navigation_timeout_s * 1000)
            # One init script (one round trip): the listeners' notes, the observation's pass and the
            # element probe kept ready.
            await context.add_init_script(script="\n".join(
                (load_script("listeners.js"), observe.init_script(), kept_script("probe.js").init)))
            await policy.install(context)
            session = BrowserTab(self, context, self.config, policy)
            await session._open_first_tab()
            await policy.ready()
        except PlaywrightError as error:
            if is_closed_error(error) or not self._browser.is_connected():
                raise BrowserCrashedError(f"opening a browser session: {first_line(error)}") from error
            raise
        self._sessions.append(session)
        return session

    def _forget(self, session: BrowserTab) -> None:
        if session in self._sessions:
            self._sessions.remove(session)

    async def close(self) -> None:
        """Close every session, Chromium and Playwright's driver. Safe after a crash and when repeated."""
        if self._closed:
            return
        self._closed = True
        try:
            for session in list(self._sessions):
                await session.close()
            await self._browser.close()
        except PlaywrightError as error:
            if not is_closed_error(error):
                raise
        finally:
            await self._playwright.stop()
            await _remove_folder(self._workdir)

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
