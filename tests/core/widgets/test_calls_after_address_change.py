"""A reply's calls after one that changed the address: skipped when the page loaded another document
(its ids are of a page the model has not seen), run when the page's own script changed the address of
the same document (an autosave's ``replaceState`` making a create URL an edit URL, a jump to an
anchor) — the ids the model saw still stand there. Real Chromium, real HTTP."""

from __future__ import annotations

from webtask_core.browser import BrowserTab, Observation
from webtask_core.llm.types import ToolCall
from webtask_core.resources import ResourceSet
from webtask_core.tools.base import StepState, ToolContext
from webtask_core.tools.control import OutputSpec
from webtask_core.tools.registry import ToolRegistry


def _id(observation: Observation, text: str) -> str:
    return next(element.id for element in observation.elements.values() if element.text == text)


async def _run(tab: BrowserTab, observation: Observation, calls: list[tuple[str, dict[str, str]]]) -> list[tuple[bool, str]]:
    ctx = ToolContext(tab=tab, resources=ResourceSet(), output_spec=OutputSpec(), state=StepState())
    tool_calls = [ToolCall(id=f"c{n}", name=name, input=params) for n, (name, params) in enumerate(calls)]
    outcomes = await ToolRegistry.default().run_calls(tool_calls, ctx, page_url=observation.url,
                                                      page_document=observation.document)
    return [(outcome.ok, outcome.message) for outcome in outcomes]


async def test_calls_after_the_pages_own_address_change_run_and_after_a_load_do_not(browser_session: BrowserTab,
                                                                                  widget_site):
    await browser_session.navigate(widget_site.url("draft-url.html"))
    seen = await browser_session.observe()
    title, sku = _id(seen, "Title"), _id(seen, "SKU")

    # the draft saved: the address is now ?draft=7, the same document; the typing after it runs
    done = await _run(browser_session, seen, [("click", {"element_id": _id(seen, "Save draft")}),
                                              ("fill", {"element_id": title, "text": "Silver Tote"})])
    assert [ok for ok, _ in done] == [True, True], done
    assert browser_session.url.endswith("draft-url.html?draft=7")
    # a jump to an anchor is the same document too
    seen = await browser_session.observe()
    done = await _run(browser_session, seen, [("click", {"element_id": _id(seen, "Details")}),
                                              ("fill", {"element_id": sku, "text": "TOTE-1"})])
    assert [ok for ok, _ in done] == [True, True], done
    assert browser_session.page is not None
    assert await browser_session.page.input_value("#title") == "Silver Tote"
    assert await browser_session.page.input_value("#sku") == "TOTE-1"

    # another page loaded: the id from the old page is not acted on
    seen = await browser_session.observe()
    done = await _run(browser_session, seen, [("click", {"element_id": _id(seen, "Another page")}),
                                              ("fill", {"element_id": title, "text": "again"})])
    assert done[0][0] and not done[1][0] and done[1][1].startswith("not run: the page changed to "), done
