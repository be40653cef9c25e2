"""Running one action on a session's active tab: act, let the page settle, say what happened.

The plumbing every `BrowserTab` action shares: the wait for the repaint after the last screenshot,
the settle (navigation, load, network; stabilise.py), tabs the action opened, navigations the domain
policy blocked, and one bound on the whole so a page stuck in a script cannot hang the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from webtask_core.browser.bounded import within
from webtask_core.browser.domains import DomainPolicy
from webtask_core.browser.failures import is_closed_error, translate_errors
from webtask_core.browser.models import BrowserConfig
from webtask_core.browser.motion import pointer_off_page, settle_motion
from webtask_core.browser.screenshot import wait_repainted
from webtask_core.browser.stabilise import NetworkTracker, settle
from webtask_core.browser.tabs import TabSet
from webtask_core.errors import ActionError, BrowserCrashedError

__all__ = ["ActionRunner", "GRACE_S", "Pointer"]

# What an action does with the mouse: "keyboard" acts by keys or value (the pointer is put aside first),
# "mouse" leaves it on the page where it acted, "hover" rests it on an element on purpose, None: neither.
Pointer = Literal["keyboard", "mouse", "hover"] | None

GRACE_S = 2.0  # on top of Playwright's own timeouts, before we give up on a page that does not answer
_REPAINT_WAIT_S = 0.5  # the longest an action waits for the page to repaint after a screenshot
_NEW_TAB_POLL_S = 0.02


class ActionRunner:
    """Runs the actions of one session (its tabs, network tracker, domain policy and timeouts).

    ``require_alive`` raises when the session cannot act (crashed, closed). An operation that clicks
    with the mouse sets ``click_navigated`` when the click started a navigation, which the settle
    then waits for, and ``click_opened`` when it opened a new tab, whose arrival the action waits for."""

    def __init__(self, tabs: TabSet, network: NetworkTracker, policy: DomainPolicy, config: BrowserConfig,
                 require_alive: Callable[[], None]) -> None:
        self._tabs = tabs
        self._network = network
        self._policy = policy
        self._config = config
        self._require_alive = require_alive
        self.click_navigated = False  # the current action's mouse click started a navigation
        self.click_opened = False  # the current action's mouse click opened a new tab
        self.hold_still = False  # the next action waits for the page to hold still first (BrowserTab.hold_still_first)
        self.pointer_rests: Literal["aside", "mouse", "hover"] = "aside"  # where the last action left the mouse
        self._repaint: asyncio.Future[None] | None = None  # since the last screenshot

    def screenshot_taken(self, page: Page) -> None:
        """The next action waits (briefly) for `page` to repaint first: the screenshot's boxes are
        drawn and removed in the page. After a real model call it is long done."""
        self._repaint = asyncio.ensure_future(wait_repainted(page))

    def close(self) -> None:
        if self._repaint is not None:
            self._repaint.cancel()
            self._repaint = None

    async def run(
        self,
        what: str,
        operation: Callable[[Page], Awaitable[str]],
        *,
        timeout_s: float | None = None,
        report_navigation: bool = True,
        quick: bool = False,
        pointer: Pointer = None,
    ) -> str:
        """Run one action on the active page, let the page settle, say what happened (``quick``: an
        action that sets a value, see ``settle``; ``pointer``: what it does with the mouse, see
        ``put_pointer_aside``)."""
        self._require_alive()
        page = await self._tabs.ensure_active()
        if pointer == "keyboard":
            await self.put_pointer_aside(page)
        elif pointer is not None:
            self.pointer_rests = pointer  # from its first move on, even if it fails after
        await self.take_hold_still(page)
        navigations, pages, blocked = self._tabs.navigations(page), list(self._tabs.pages), len(self._policy.blocked)
        self._tabs.notes.clear()
        timeout = timeout_s or self._config.action_timeout_s
        opened: list[Page] = []

        async def act_and_settle() -> str:
            started = time.monotonic()
            self.click_navigated = self.click_opened = False
            await self._after_repaint()
            message = await operation(page)
            await settle(
                page, self._network, navigated=lambda: self._tabs.navigations(page) != navigations,
                timeout_s=self._config.settle_timeout_s, started=started, expect_navigation=self.click_navigated,
                quick=quick,
            )
            if self.click_opened:
                await self._wait_new_tab(pages, blocked, time.monotonic() + self._config.settle_timeout_s)
            opened.extend(new for new in self._tabs.pages if new not in pages)
            await self._settle_new_tabs(opened)
            return message

        # Playwright bounds its own waits, but not a script evaluation in a page whose main thread is
        # stuck; this bounds the whole action so nothing can hang.
        limit = timeout + self._config.settle_timeout_s * 2 + GRACE_S
        try:
            async with translate_errors(what, timeout):
                message = await within(act_and_settle(), limit)
        except TimeoutError as error:
            raise ActionError(f"{what}: the page did not respond within {limit:g} s") from error
        except ActionError:
            await self._policy.raise_if_blocked(page, blocked, self._config.navigation_timeout_s)
            raise
        except BrowserCrashedError:
            self._require_alive()  # a more precise reason when we know it
            if page.is_closed():
                # Only this tab went away (the page closed itself): not a crash.
                return "; ".join([what, *(self._tabs.notes or ["the tab closed"])])
            raise
        await self._policy.raise_if_blocked(page, blocked, self._config.navigation_timeout_s)
        parts = [message]
        if page.is_closed():
            pass  # TabSet's note says so
        elif report_navigation and self._tabs.navigations(page) != navigations:
            parts.append(f"page navigated to {page.url}")
        for new in opened:
            if not new.is_closed():
                parts.append(f"opened tab {self._tabs.index_of(new)}: {new.url} (use switch_tab to look at it)")
        parts.extend(self._tabs.notes)
        return "; ".join(parts)

    async def put_pointer_aside(self, page: Page) -> None:
        """Before keys are typed: take the mouse off the page, as a hand leaves it to type, unless it was
        put on an element on purpose (hover). Where a click left it, what its hover shows (a field's
        comment button, a suggestion list's highlighted item Enter would pick) depends on how far the
        page moved under it since: on another item's page, with other texts, that is somewhere else, so a
        replayed step would see controls its recording did not. Off the page the hover is the same for both."""
        if self.pointer_rests != "mouse":
            return
        self.pointer_rests = "aside"
        async with translate_errors("move the mouse off the page", self._config.action_timeout_s):
            await pointer_off_page(page)

    async def take_hold_still(self, page: Page) -> None:
        """Hold still now if the next action was to (an action on an element does it in its probe)."""
        if self.hold_still:
            self.hold_still = False
            await settle_motion(page)

    async def _wait_new_tab(self, pages: list[Page], blocked: int, deadline: float) -> None:
        """Until the tab the click opened is here, or its first navigation was blocked (that tab is
        never reported), bounded. Both come as events of their own after the click: on a busy machine
        (load 20) later than the settle's frame, and the blocked navigation went unreported."""
        while time.monotonic() < deadline:
            if len(self._policy.blocked) > blocked or any(new not in pages for new in self._tabs.pages):
                return
            await asyncio.sleep(_NEW_TAB_POLL_S)

    async def _settle_new_tabs(self, opened: list[Page]) -> None:
        for new in opened:
            try:
                await new.wait_for_load_state("domcontentloaded", timeout=self._config.settle_timeout_s * 1000 or 1)
            except PlaywrightError as error:
                if is_closed_error(error) and not new.is_closed():
                    raise
                # Still loading, or closed itself again: the report says what it shows now.

    async def _after_repaint(self) -> None:
        repaint, self._repaint = self._repaint, None
        if repaint is not None:
            with contextlib.suppress(TimeoutError):  # a busy page: act anyway, as before
                await asyncio.wait_for(repaint, timeout=_REPAINT_WAIT_S)
