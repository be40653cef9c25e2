"""Tool descriptions say what the tools do: every limit comes from webtask_core.limits, and a call the
description allows is carried out, not refused."""

from __future__ import annotations

import pytest
from tool_driver import ToolDriver

from webtask_core.errors import ActionError
from webtask_core.limits import SCROLL_MAX, SETTLED_QUIET_S, WAIT_FOR_MAX_S
from webtask_core.tools import ToolRegistry


def specs() -> dict[str, dict]:
    return {spec.name: {"description": spec.description, **spec.input_schema} for spec in ToolRegistry.default().specs()}


def test_schemas_state_the_limits_the_session_enforces():
    tools = specs()
    assert tools["scroll"]["properties"]["amount"]["maximum"] == SCROLL_MAX
    assert tools["wait_for"]["properties"]["timeout_s"]["maximum"] == WAIT_FOR_MAX_S
    assert "with neither, until the page settles" in tools["wait_for"]["description"]
    assert f"no change for {SETTLED_QUIET_S:g} s" in tools["wait_for"]["description"]
    assert "the box's own visible height" in tools["scroll"]["description"]


async def test_wait_for_with_neither_waits_for_the_page_to_settle(browser_session, sites):
    driver = ToolDriver(browser_session)
    await driver.open(sites.url("dynamic.html"))
    # The page changes for a while (a request, then DOM updates), then stops.
    await browser_session.page.evaluate("""() => {
      let n = 0;
      const timer = setInterval(() => {
        document.body.insertAdjacentHTML('beforeend', '<p>tick ' + n + '</p>');
        if (++n === 6) { clearInterval(timer); fetch('/pixel.gif'); }
      }, 100);
    }""")
    message = await driver.ok("wait_for")
    assert message.startswith("the page settled after ")
    assert await browser_session.page.locator("p", has_text="tick 5").count() == 1  # it waited past the changes


async def test_wait_for_a_page_that_never_settles_returns_at_its_timeout(browser_session, sites):
    driver = ToolDriver(browser_session)
    await driver.open(sites.url("dynamic.html"))
    await browser_session.page.evaluate(
        "setInterval(() => { document.title = String(Date.now()); document.body.dataset.t = Date.now(); }, 50)"
    )
    message = await driver.ok("wait_for", timeout_s=1.5)
    assert message == (
        "the page had not settled after 1.5 s (its content kept changing); the next page state shows it as it is now"
    )


async def test_limits_at_the_edge_are_accepted_and_past_it_refused_by_schema_and_session(browser_session, sites):
    driver = ToolDriver(browser_session)
    await driver.open(sites.url("long.html"))
    assert (await driver.ok("scroll", direction="down", amount=SCROLL_MAX)).startswith("scrolled down 10 viewport(s)")
    refused = await driver.error("scroll", direction="up", amount=SCROLL_MAX + 1)
    assert refused.startswith("invalid input for scroll: amount: Input should be less than or equal to 10")
    appeared = await driver.ok("wait_for", text="Top of the page", timeout_s=WAIT_FOR_MAX_S)
    assert appeared.startswith('text "Top of the page" appeared')
    assert "less than or equal to 15" in await driver.error("wait_for", text="x", timeout_s=WAIT_FOR_MAX_S + 1)
    # Called directly, the session enforces the very same limits.
    with pytest.raises(ActionError, match="at most 10, got 11"):
        await browser_session.scroll("down", amount=SCROLL_MAX + 1)
    with pytest.raises(ActionError, match="at most 15 seconds, got 16"):
        await browser_session.wait_for(text="x", timeout_s=WAIT_FOR_MAX_S + 1)


async def test_scroll_given_an_element_inside_a_box_scrolls_the_box_and_says_so(browser_session, sites):
    driver = ToolDriver(browser_session)
    observation = await driver.open(sites.url("budget_panels.html"))
    feed = next(e.id for e in observation.elements.values() if e.tag == "div")
    message_link = next(e.id for e in observation.elements.values() if e.text.startswith("Message 0 "))
    message = await driver.ok("scroll", direction="down", amount=2, element_id=message_link)
    assert message.startswith(f"scrolled the box around {message_link} ({feed}) down 2 of its heights; it now shows ")
    assert await browser_session.page.evaluate("document.getElementById('feed').scrollTop") == 600  # 2 x 300 px

    observation = await driver.open(sites.url("long.html"))
    button = next(e.id for e in observation.elements.values() if e.text == "Bottom button")
    refused = await driver.error("scroll", direction="down", element_id=button)
    assert refused == f"{button} does not scroll, nor does any box around it; leave out element_id to scroll the page"
