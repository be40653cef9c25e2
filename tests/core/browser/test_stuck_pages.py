"""A page whose script starts to spin at any moment never hangs the caller (marker `faults`).

Chromium answers no evaluation, no CDP detach and no title of a page stuck in a loop. Every look
at the page outside an action (which document a reply's next call meets, the page's own saves
before a submit, the focused field, another tab's title) is bounded as an action is, and so is the
cleanup a cancelled look leaves (``bounded.within``: ``asyncio.wait_for`` would wait for it forever).
Real Chromium, real HTTP (``HostileSite``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from webtask_core.browser import Browser, BrowserConfig, BrowserTab
from webtask_core.browser.bounded import CLEANUP_S, clean_up, within
from webtask_core.errors import ActionError
from webtask_core.llm.types import ToolCall
from webtask_core.resources import ResourceSet
from webtask_core.testing.hostile_site import HostileSite
from webtask_core.tools.base import StepState, ToolContext
from webtask_core.tools.control import OutputSpec
from webtask_core.tools.registry import ToolRegistry

pytestmark = [pytest.mark.faults, pytest.mark.slow]

CONFIG = BrowserConfig(action_timeout_s=0.5, navigation_timeout_s=2.0, settle_timeout_s=0.3)
LOOK_S = CONFIG.action_timeout_s + 2.0  # BrowserTab.answer's bound (GRACE_S = 2)


@pytest.fixture(scope="module")
def site() -> Iterator[HostileSite]:
    with HostileSite() as hostile:
        yield hostile


@pytest.fixture
async def tab() -> AsyncIterator[BrowserTab]:
    browser = await Browser.launch(CONFIG)
    try:
        yield await browser.new_tab()
    finally:
        await browser.close()


async def _stuck(tab: BrowserTab) -> None:
    assert tab.page is not None
    await tab.page.evaluate("setTimeout(() => { for (;;) {} }, 30)")
    await asyncio.sleep(0.3)


async def test_the_calls_after_a_page_that_starts_spinning_as_it_loads_end_in_their_bound(tab, site):
    """The reply's next call asks which document it meets (a script's own URL change is the same one):
    that question once hung on a page spinning 150 ms after its load (the fault suite under load)."""
    await tab.navigate(site.url("/ok"))
    seen = await tab.observe()
    ctx = ToolContext(tab=tab, resources=ResourceSet(), output_spec=OutputSpec(), state=StepState())
    calls = [ToolCall(id="c0", name="navigate", input={"url": site.url("/busy?after=10")}),
             ToolCall(id="c1", name="scroll", input={"direction": "down"})]
    started = time.monotonic()
    outcomes = await asyncio.wait_for(
        ToolRegistry.default().run_calls(calls, ctx, page_url=seen.url, page_document=seen.document), 60)
    elapsed = time.monotonic() - started
    assert outcomes[0].ok, outcomes[0]
    assert not outcomes[1].ok and "did not respond within" in outcomes[1].message, outcomes[1]
    # the document question (LOOK_S) and the scroll's own bound, with room for a busy machine
    assert elapsed < LOOK_S + 2 * CONFIG.action_timeout_s + 2 * CONFIG.settle_timeout_s + 2.0 + 6.0, elapsed


async def test_a_navigation_that_times_out_on_a_page_spinning_as_it_loads_says_so_in_its_own_time(tab, site):
    """Its stop (Page.stopLoading, answered) detaches a CDP session, which a spinning page never
    answers: left behind after 0.5 s, so the navigation's own timeout is what the model reads."""
    with pytest.raises(ActionError, match=r"^navigate to .*/partial-busy: timed out after 2 s"):
        await tab.navigate(site.url("/partial-busy"))


async def test_looks_outside_an_action_are_bounded_on_a_stuck_page(tab, site):
    await tab.navigate(site.url("/busy?after=100000"))
    await tab.observe()
    await _stuck(tab)
    started = time.monotonic()
    said = await tab.wait_for_own_saves(blur=True)
    assert "waiting for the page's own saves: the page did not respond within" in said
    with pytest.raises(ActionError, match="^finding the focused field: the page did not respond within 2.5 s$"):
        await tab.typing_url()
    with pytest.raises(ActionError, match="^a look: the page did not respond within 2.5 s$"):
        assert tab.page is not None
        await tab.answer("a look", tab.page.evaluate("1"))
    assert time.monotonic() - started < 4.5 + LOOK_S * 2 + 2 + 6.0


async def test_a_stuck_tab_beside_the_active_one_neither_hangs_a_look_nor_a_switch(tab, site):
    await tab.navigate(site.url("/ok"))
    assert tab.page is not None
    other = await tab.page.context.new_page()
    await other.goto(site.url("/busy?after=10"))
    await asyncio.sleep(0.3)
    started = time.monotonic()
    seen = await tab.observe()
    assert [info.title for info in seen.tabs] == ["OK", ""], seen.tabs
    assert (await tab.switch_tab(1)).startswith("switched to tab 1: " + site.url("/busy"))
    assert time.monotonic() - started < 2.0 + LOOK_S + 6.0


async def test_cleanup_a_stuck_page_never_answers_is_left_behind():
    """The class behind the bound: cancelled work whose cleanup awaits the page (a CDP detach)."""
    browser = await Browser.launch(CONFIG)
    try:
        tab = await browser.new_tab()
        assert tab.page is not None
        session = await tab.page.context.new_cdp_session(tab.page)
        await _stuck(tab)

        async def look_then_detach() -> None:
            try:
                await session.send("Runtime.evaluate", {"expression": "1"})
            finally:
                await session.detach()  # a stuck renderer never answers this either

        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await within(look_then_detach(), 0.5)
        assert time.monotonic() - started < 0.5 + CLEANUP_S + 1.0
        started = time.monotonic()
        await clean_up(session.detach())
        assert time.monotonic() - started < CLEANUP_S + 1.0
    finally:
        await browser.close()


async def test_within_leaves_work_whose_cleanup_hangs_and_passes_a_cancel_on_at_once():
    stuck = asyncio.Event()
    ended: list[str] = []

    async def work() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            ended.append("cleanup began")
            await stuck.wait()  # never set: asyncio.wait_for would wait here forever

    started = time.monotonic()
    with pytest.raises(TimeoutError, match="no answer within 0.1 s"):
        await within(work(), 0.1, cleanup_s=0.1)
    assert time.monotonic() - started < 1.0 and ended == ["cleanup began"]
    assert await within(asyncio.sleep(0, result="answered"), 1.0) == "answered"

    caller = asyncio.create_task(within(work(), 30))
    await asyncio.sleep(0.05)
    caller.cancel()
    started = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert time.monotonic() - started < 0.5
    stuck.set()  # let the work left behind end
