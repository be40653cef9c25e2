"""BrowserTab: one task's browser context — observe the active tab, act on ids, report effects."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from playwright.async_api import BrowserContext, Frame, Page
from playwright.async_api import Error as PlaywrightError

from webtask_core.browser import actions, editors, files, listbox, native_select, page_actions, slider
from webtask_core.browser.action_run import GRACE_S, ActionRunner, Pointer
from webtask_core.browser.actions import ELEMENT_ID, Target, quote_for_model
from webtask_core.browser.bounded import within
from webtask_core.browser.declared_roots import DeclaredRoots
from webtask_core.browser.domains import DomainPolicy
from webtask_core.browser.drag import drag as drag_element
from webtask_core.browser.failures import first_line, is_closed_error, translate_errors
from webtask_core.browser.focus import document_url, focused_frame
from webtask_core.browser.models import BrowserConfig, Observation
from webtask_core.browser.observe import FrameRegistry, snapshot_page
from webtask_core.browser.own_saves import OWN_SAVES_MAX_S, wait_for_own_saves
from webtask_core.browser.screenshot import CdpScreenshots, ImageFormat
from webtask_core.browser.stabilise import NetworkTracker, settle
from webtask_core.browser.tabs import TabSet
from webtask_core.errors import ActionError, BrowserCrashedError, TransientError
from webtask_core.limits import PRESS_TIMES_MAX, SCROLL_MAX, WAIT_FOR_DEFAULT_S

if TYPE_CHECKING:
    from webtask_core.browser.launch import Browser

__all__ = ["BrowserTab"]


T = TypeVar("T")


class BrowserTab:
    """A fresh BrowserContext for one task, starting with one tab. Create with ``Browser.new_tab``."""

    def __init__(self, browser: Browser, context: BrowserContext, config: BrowserConfig, policy: DomainPolicy):
        self._browser = browser
        self._context = context
        self._config = config
        self._policy = policy
        self._tabs = TabSet(context)
        self._network = NetworkTracker()
        self._network.attach(context)
        self._frames = FrameRegistry()
        self._declared = DeclaredRoots(context)
        self._targets: dict[str, Frame] = {}
        self._shots = CdpScreenshots(context)
        self._closed = False
        self._runner = ActionRunner(self._tabs, self._network, policy, config, self._require_alive)
        self._run = self._runner.run  # every action goes through it
        context.on("close", lambda _: self._mark_closed())

    async def _open_first_tab(self) -> None:
        self._tabs.add(await self._context.new_page())

    def _mark_closed(self) -> None:
        self._closed = True

    # --- state -------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        page = self._tabs.active
        return page.url if page is not None and not page.is_closed() else "about:blank"

    @property
    def is_alive(self) -> bool:
        return not self._closed and self._tabs.crashed is None and self._browser.is_alive

    @property
    def page(self) -> Page | None:
        """The active Playwright page, for callers that need Playwright directly (tests, tooling)."""
        return self._tabs.active

    @property
    def blocked_navigations(self) -> list[str]:
        """URLs of top-level navigations stopped by `allowed_domains`, oldest first."""
        return [blocked.url for blocked in self._policy.blocked]

    def _require_alive(self) -> None:
        if self._tabs.crashed:
            raise BrowserCrashedError(f"{self._tabs.crashed}; start a new session")
        if not self._browser.is_alive:
            raise BrowserCrashedError("the browser is not running (it crashed or was closed); relaunch it")
        if self._closed:
            raise BrowserCrashedError("this browser session is closed; start a new session")

    # --- observing ----------------------------------------------------------------------------

    def hold_still_first(self) -> None:
        """The next action waits until the page holds still (``motion.settle_motion``) before it acts;
        one on an element does so in its probe's round trip. A look at the page before any action
        does so in its pass's round trip."""
        self._runner.hold_still = True

    async def observe(self, *, stamp: bool = True) -> Observation:
        """The active tab as the model sees it: the element tree, ids, tabs and scroll position.

        ``stamp=False``: a look that leaves the ids of the last observation in place (actions keep
        resolving them); its own ids are for reading only, never for acting."""
        self._require_alive()
        page = await self._tabs.ensure_active()
        hold_still, self._runner.hold_still = self._runner.hold_still, False
        limit = self._config.action_timeout_s + GRACE_S
        for attempt in range(3):
            try:
                snapshot = await within(
                    snapshot_page(page, self._frames, self._config.tree_budget_chars, stamp=stamp, declared=self._declared,
                                  hold_still=hold_still and attempt == 0),
                    limit,
                )
                break
            except TimeoutError as error:
                raise TransientError(f"observing {page.url}: the page did not respond within {limit:g} s") from error
            except PlaywrightError as error:
                if is_closed_error(error) or page.is_closed():
                    self._require_alive()
                    if page.is_closed() and attempt < 2:
                        page = await self._tabs.ensure_active()  # that tab closed itself: look at the next
                        continue
                    raise BrowserCrashedError(f"observing {page.url}: {first_line(error)}") from error
                if attempt == 2:
                    raise TransientError(f"could not observe {page.url}: {first_line(error)}") from error
                # Most likely the page navigated while we looked at it: let it load, then look again.
                await settle(page, self._network, navigated=True, timeout_s=self._config.settle_timeout_s)
        if stamp:
            self._targets = {
                element_id: snapshot.frames[info.frame_path] for element_id, info in snapshot.tree.elements.items()
            }
        return Observation(
            url=snapshot.url,
            title=snapshot.title,
            document=snapshot.document,
            tabs=await self._tabs.infos(page, snapshot.title),
            tree=snapshot.tree.text,
            elements=snapshot.tree.elements,
            scroll=snapshot.scroll,
        )

    async def screenshot(
        self,
        marks: bool = True,
        format: ImageFormat = "jpeg",  # noqa: A002 - the contract's parameter name
        quality: int = 70,
        mask_ids: Sequence[str] | None = None,
        scale: float = 1.0,
    ) -> bytes:
        """The viewport (JPEG or PNG bytes) with numbered boxes for the last observation's ids.

        `scale` (0.25 to 1) shrinks the picture: Chromium renders it smaller, and the boxes' labels
        are drawn larger so they stay legible. Elements in `mask_ids` and password fields are covered."""
        self._require_alive()
        page = await self._tabs.ensure_active()
        masks: dict[Frame, list[str]] = {}
        for element_id in mask_ids or ():
            masks.setdefault(self._target_frame(element_id), []).append(element_id)
        limit = self._config.action_timeout_s * 2
        try:
            return await within(self._capture(page, marks, format, quality, masks, scale), limit)
        except TimeoutError as error:
            raise TransientError(f"screenshot of {page.url}: the page did not respond within {limit:g} s") from error
        except PlaywrightError as error:
            if is_closed_error(error) or page.is_closed():
                self._require_alive()
                raise BrowserCrashedError(f"screenshot of {page.url}: {first_line(error)}") from error
            raise TransientError(f"screenshot of {page.url} failed: {first_line(error)}") from error

    async def _capture(
        self, page: Page, marks: bool, image_format: ImageFormat, quality: int, masks: dict[Frame, list[str]],
        scale: float,
    ) -> bytes:
        shot = await self._shots.capture(page, marks=marks, image_format=image_format, quality=quality, masks=masks,
                                         scale=scale)
        self._runner.screenshot_taken(page)
        return shot

    async def typing_url(self, element_id: str | None = None) -> str:
        """The URL of the document that text typed now would reach: `element_id`'s frame, or the
        frame holding the keyboard focus. A frame from another site is not the page around it."""
        self._require_alive()
        if element_id is not None:
            return document_url(self._target_frame(element_id))
        page = await self._tabs.ensure_active()
        async with translate_errors("finding the focused field", self._config.action_timeout_s):
            return document_url(await self.answer("finding the focused field", focused_frame(page)))

    # --- element actions ----------------------------------------------------------------------

    def _target_frame(self, element_id: str) -> Frame:
        if not isinstance(element_id, str) or not ELEMENT_ID.match(element_id):
            raise ActionError(f"{element_id!r} is not an element id; ids look like button-3 or input-0")
        frame = self._targets.get(element_id)
        if frame is None:
            raise ActionError(f"unknown element id {element_id}; use an id from the current page state")
        if frame.is_detached():
            raise ActionError(f"{element_id} is stale: its frame is gone since the page was observed")
        if frame.page is not self._tabs.active:
            raise ActionError(f"{element_id} belongs to another tab; use the ids of the active tab's page state")
        return frame

    async def _on_element(
        self, verb: str, element_id: str, perform: Callable[[Target], Awaitable[str]], *, scroll: bool = True,
        quick: bool = False, pointer: Pointer = None,
    ) -> str:
        self._require_alive()
        hold_still, self._runner.hold_still = self._runner.hold_still, False
        frame = self._target_frame(element_id)

        async def operation(_: Page) -> str:
            target = await actions.probe(frame, element_id, scroll=scroll, hold_still=hold_still)
            message = await perform(target)
            self._runner.click_navigated, self._runner.click_opened = target.navigating, target.opens_tab
            return message

        return await self._run(f"{verb} {element_id}", operation, quick=quick, pointer=pointer)

    async def click(self, element_id: str) -> str:
        timeout = self._config.action_timeout_s
        return await self._on_element("click", element_id, lambda t: actions.click(t, timeout), pointer="mouse")

    async def hover(self, element_id: str) -> str:
        timeout = self._config.action_timeout_s
        return await self._on_element("hover", element_id, lambda t: actions.hover(t, timeout), pointer="hover")

    async def fill(self, element_id: str, text: str, *, conceal: bool = False) -> str:
        """``conceal``: ``text`` holds a secret; the field draws it as dots (``actions.CONCEAL``)."""
        timeout = self._config.action_timeout_s

        async def perform(target: Target) -> str:
            if slider.is_slider(target):
                self._runner.pointer_rests = "mouse"  # it may drag the handle
                return await slider.set_slider(target, text, timeout)
            if editors.is_editor(target) and not conceal:
                self._runner.pointer_rests = "mouse"  # it clicks the caret in
                return await editors.fill_editor(target, text, timeout)
            if conceal:
                await actions.conceal(target, timeout)
            return await actions.fill(target, text, timeout)

        return await self._on_element("fill", element_id, perform, quick=True, pointer="keyboard")

    async def type(self, text: str, element_id: str | None = None, *, conceal: bool = False) -> str:
        """``conceal``: ``text`` holds a secret; the field draws it as dots (``actions.CONCEAL``)."""
        if element_id is not None:
            timeout = self._config.action_timeout_s + len(text) * 0.05

            async def perform(target: Target) -> str:
                if conceal:
                    await actions.conceal(target, timeout)
                return await actions.type_into(target, text, timeout)

            return await self._on_element("type into", element_id, perform, pointer="keyboard")

        return await self._run("type", lambda p: actions.type_with_keyboard(p, text, conceal=conceal), pointer="keyboard")

    async def select_option(self, element_id: str, option: str | Sequence[str]) -> str:
        """Choose an option (several: a list, for a select that takes several) of a native <select> or of
        the page's own select widget, and say what it shows afterwards."""
        wanted = [option] if isinstance(option, str) else list(option)
        if not wanted or not all(isinstance(one, str) and one.strip() for one in wanted):
            raise ActionError(f"select_option: give the option's text (or a list of them), got {option!r}")
        timeout = self._config.action_timeout_s

        async def perform(target: Target) -> str:
            if target.info["options"] is not None:
                return await native_select.select_option(target, wanted, timeout)
            return await listbox.choose(target, wanted, timeout)

        return await self._on_element("select an option of", element_id, perform, quick=True, pointer="mouse")

    async def check(self, element_id: str, checked: bool = True) -> str:
        timeout = self._config.action_timeout_s
        return await self._on_element("check", element_id, lambda t: actions.set_checked(t, checked, timeout), quick=True,
                                      pointer="mouse")

    async def press_key(self, key: str, element_id: str | None = None, times: int = 1) -> str:
        if isinstance(times, bool) or not isinstance(times, int) or not 1 <= times <= PRESS_TIMES_MAX:
            raise ActionError(f"press_key: times must be a whole number from 1 to {PRESS_TIMES_MAX}, got {times!r}")
        if element_id is not None:
            timeout = self._config.action_timeout_s
            return await self._on_element(
                "press a key on", element_id, lambda t: actions.press_on(t, key, timeout, times), pointer="keyboard",
            )

        async def operation(page: Page) -> str:
            for _ in range(times):
                await page.keyboard.press(key)
            return f"pressed {key}" + (f" {times} times" if times > 1 else "")

        return await self._run(f"press {key}", operation, pointer="keyboard")

    async def drag(
        self, element_id: str, to_element_id: str | None = None, offset_x: float = 0, offset_y: float = 0
    ) -> str:
        """Drag an element onto another (its centre, moved by the offsets), or by the offsets alone."""
        self._require_alive()
        frame = self._target_frame(element_id)
        onto_frame = self._target_frame(to_element_id) if to_element_id is not None else None
        if to_element_id == element_id:
            raise ActionError(f"drag: {element_id} cannot be dragged onto itself; give another element or an offset")

        async def operation(_: Page) -> str:
            source = await actions.probe(frame, element_id, scroll=True)
            onto = None
            if onto_frame is not None and to_element_id is not None:
                onto = await actions.probe(onto_frame, to_element_id, scroll=False)
                if onto.info["visible"] and onto.info["offscreen"]:
                    # Bring the target into view, then look whether the dragged element still shows.
                    onto = await actions.probe(onto_frame, to_element_id, scroll=True)
                    source = await actions.probe(frame, element_id, scroll=False)
                    if source.info["offscreen"]:
                        raise ActionError(
                            f"drag: {element_id} and {to_element_id} do not show on the screen together; drag "
                            f"{element_id} part of the way with offset_y, or onto an element nearer to it"
                        )
            return await drag_element(source, onto, offset_x, offset_y)

        return await self._run(f"drag {element_id}", operation, pointer="mouse")

    async def scroll(self, direction: Literal["up", "down"] = "down", amount: float = 1.0, element_id: str | None = None) -> str:
        if direction not in ("up", "down"):
            raise ActionError(f"scroll: direction must be 'up' or 'down', got {direction!r}")
        if isinstance(amount, bool) or not isinstance(amount, int | float) or not 0 < amount <= SCROLL_MAX:
            raise ActionError(
                f"scroll: amount counts heights of what scrolls and must be more than 0 and at most {SCROLL_MAX:g}, "
                f"got {amount!r}"
            )
        if element_id is not None:
            return await self._on_element(
                "scroll", element_id, lambda t: actions.scroll_element(t, direction, float(amount)), scroll=False
            )

        return await self._run(f"scroll {direction}", lambda page: page_actions.scroll_page(page, direction, float(amount)))

    async def set_input_files(self, element_id: str, paths: Sequence[str | Path]) -> str:
        """Give files to a file input, drop them onto a drop zone, or choose them in the file chooser an
        element opens when clicked (see browser/files.py)."""
        timeout = self._config.action_timeout_s
        return await self._on_element(
            "upload to", element_id, lambda t: files.upload(t, list(paths), timeout), scroll=False, quick=True, pointer="mouse")

    # --- page-level actions -------------------------------------------------------------------

    async def navigate(self, url: str) -> str:
        url = page_actions.check_url(url)
        self._require_alive()
        if not self._policy.allows(url):
            raise self._policy.refuse(url, self._tabs.active)
        timeout = self._config.navigation_timeout_s
        return await self._run(
            f"navigate to {url}", lambda page: page_actions.goto(page, self._tabs, url, timeout),
            timeout_s=timeout, report_navigation=False,
        )

    async def go_back(self) -> str:
        timeout = self._config.navigation_timeout_s
        return await self._run(
            "go back", lambda page: page_actions.go_back(page, self._tabs, timeout), timeout_s=timeout, report_navigation=False
        )

    async def switch_tab(self, tab_index: int) -> str:
        self._require_alive()
        page = page_actions.open_tab(self._tabs, tab_index)
        async with translate_errors(f"switch to tab {tab_index}", self._config.action_timeout_s):
            await page.bring_to_front()
            try:
                title = await self.answer("reading its title", page.title())
            except ActionError:
                title = ""  # a tab stuck in a script: switched to all the same, the next look says so
        return f"switched to tab {tab_index}: {page.url}" + (f" ({title})" if title else "")

    async def answer(self, what: str, work: Awaitable[T], *, limit_s: float | None = None) -> T:
        """``work`` that talks to the page outside an action (a look before or after a call), bounded
        as an action is: a page whose script spins forever never answers an evaluation. ActionError
        "<what>: the page did not respond within N s" when it does not answer in time."""
        limit = limit_s if limit_s is not None else self._config.action_timeout_s + GRACE_S
        try:
            return await within(work, limit)
        except TimeoutError as error:
            raise ActionError(f"{what}: the page did not respond within {limit:g} s") from error

    async def wait_for_own_saves(self, *, blur: bool = False) -> str:
        """Before a submit: until the page's own saves about to start or in flight (a debounced
        autosave) have run and been answered, bounded (own_saves.py); ``blur``: leave the focused
        field first, as the click will. Says what it waited for."""
        page = self.page
        if page is None or page.is_closed():
            return ""
        try:
            return await self.answer("waiting for the page's own saves", wait_for_own_saves(page, self._network, blur=blur),
                                     limit_s=OWN_SAVES_MAX_S + self._config.action_timeout_s + GRACE_S)
        except ActionError as error:
            return str(error)  # the call that follows finds the page as stuck, in its own bound

    async def wait_for_change(self, timeout_s: float) -> str:
        """Until the page changes and then settles (a page still building), bounded by ``timeout_s``."""
        return await self._run("wait for the page to change",
                               lambda page: page_actions.wait_changed(page, self._network, timeout_s),
                               timeout_s=timeout_s)

    async def wait_for(
        self, text: str | None = None, element_id: str | None = None, timeout_s: float = WAIT_FOR_DEFAULT_S
    ) -> str:
        """Until `text` shows, or the element is visible, or with neither until the page settles."""
        page_actions.check_wait_for(text, element_id, timeout_s)
        if text is None and element_id is None:
            return await self._run(
                "wait for the page to settle",
                lambda page: page_actions.wait_settled(page, self._network, float(timeout_s)), timeout_s=timeout_s,
            )
        element = (self._target_frame(element_id), element_id) if element_id is not None else None
        what = f"text {quote_for_model(text)}" if text is not None else element_id
        return await self._run(
            f"wait for {what}", lambda page: page_actions.wait_for(page, text, element, float(timeout_s)), timeout_s=timeout_s
        )

    # --- state export and closing ---------------------------------------------------------------

    async def storage_state(self) -> dict[str, Any]:
        """Cookies and local storage of every origin, as Playwright's storage_state dict."""
        self._require_alive()
        try:
            return await self._tabs.storage_state(self._config.action_timeout_s * 2 + GRACE_S)
        except PlaywrightError as error:
            self._require_alive()
            raise BrowserCrashedError(f"reading the storage state: {first_line(error)}") from error

    async def close(self) -> None:
        """Close this session's context and tabs. Safe to call twice or after a crash."""
        self._runner.close()
        if not self._closed:
            self._closed = True
            try:
                await self._context.close()
            except PlaywrightError as error:
                if not is_closed_error(error):
                    raise
        self._browser._forget(self)

    async def __aenter__(self) -> BrowserTab:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
