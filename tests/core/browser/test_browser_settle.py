"""After an action the page is settled before anyone looks: requests the action started, navigations
it caused, elements that move under the mouse, text that appears later; and scaled screenshots."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from PIL import Image
from playwright.async_api import Route

from webtask_core.browser import BrowserTab, Observation
from webtask_core.browser.tree_lines import text_lines
from webtask_core.errors import ActionError

DATA_DELAY_S = 0.3  # the page's fetch answers this late: a settle that does not wait sees no result


async def open_settle_page(session: BrowserTab, sites) -> dict[str, str]:
    async def slow_data(route: Route) -> None:
        await asyncio.sleep(DATA_DELAY_S)
        await route.fulfill(status=200, content_type="application/json", body=json.dumps({"count": 3}))

    assert session.page is not None
    await session.page.route("**/data.json", slow_data)
    await session.navigate(sites.url("settle.html"))
    return by_text(await session.observe())


def by_text(observation: Observation) -> dict[str, str]:
    return {e.text: e.id for e in observation.elements.values() if e.text}


async def result_text(session: BrowserTab) -> str:
    return text_lines((await session.observe()).tree)[0]


async def test_a_click_that_fetches_is_settled_once_the_response_is_shown(browser_session, sites):
    ids = await open_settle_page(browser_session, sites)
    assert await browser_session.click(ids["Load more"]) == f"clicked {ids['Load more']}"
    assert await result_text(browser_session) == "Loaded 3 more items"


async def test_a_form_the_page_submits_by_script_does_not_navigate(browser_session, sites):
    ids = await open_settle_page(browser_session, sites)
    assert await browser_session.click(ids["Save by script"]) == f"clicked {ids['Save by script']}"
    assert await result_text(browser_session) == "Saved by script (3)"
    assert browser_session.url == sites.url("settle.html")


async def test_a_click_that_submits_a_form_waits_for_the_new_page(browser_session, sites):
    ids = await open_settle_page(browser_session, sites)
    message = await browser_session.click(ids["Send for real"])
    assert message == f"clicked {ids['Send for real']}; page navigated to {sites.url('settle.html?sent=1')}"
    assert await result_text(browser_session) == "Arrived with ?sent=1"


async def test_a_link_through_a_redirect_is_followed_to_the_page_it_lands_on(browser_session, sites):
    ids = await open_settle_page(browser_session, sites)
    message = await browser_session.click(ids["Through a redirect"])
    assert message == f"clicked {ids['Through a redirect']}; page navigated to {sites.url('settle.html?via=redirect')}"
    assert await result_text(browser_session) == "Arrived with ?via=redirect"


async def test_links_that_never_load_a_page_leave_it_where_it_was(browser_session, sites):
    ids = await open_settle_page(browser_session, sites)
    assert browser_session.page is not None
    await browser_session.page.route("**/no-content", lambda route: route.fulfill(status=204))
    # 204 No Content: the request ends and nothing commits; mailto: goes to another program.
    assert await browser_session.click(ids["Nothing comes back"]) == f"clicked {ids['Nothing comes back']}"
    assert await browser_session.click(ids["Write to us"]) == f"clicked {ids['Write to us']}"
    assert browser_session.url == sites.url("settle.html")
    assert await result_text(browser_session) == "Nothing yet"


async def test_a_moving_element_is_clicked_where_it_stops(browser_session, sites):
    ids = await open_settle_page(browser_session, sites)
    await browser_session.click(ids["Start sliding"])
    await browser_session.click(ids["Slider"])
    assert await result_text(browser_session) == "Slider clicked at 240"


async def test_an_element_covered_once_the_mouse_is_on_it_is_reported_not_clicked(browser_session, sites):
    ids = await open_settle_page(browser_session, sites)
    with pytest.raises(ActionError, match=f"{ids['Hover trap']} is covered by div#cover \\(\"Popup\"\\) once the mouse is on it"):
        await browser_session.click(ids["Hover trap"])
    assert await result_text(browser_session) == "Nothing yet"


async def test_wait_for_sees_text_that_appears_later_even_across_a_navigation(browser_session, sites):
    ids = await open_settle_page(browser_session, sites)
    await browser_session.click(ids["Show text later"])
    assert (await browser_session.wait_for(text="Here at last", timeout_s=5)).startswith('text "Here at last" appeared')
    await browser_session.click(ids["Go elsewhere soon"])
    assert (await browser_session.wait_for(text="Arrived with ?moved=1", timeout_s=5)).startswith("text")
    assert browser_session.url == sites.url("settle.html?moved=1")
    with pytest.raises(ActionError, match='wait_for: text "Never there" did not appear within 0.3 s'):
        await browser_session.wait_for(text="Never there", timeout_s=0.3)


async def test_a_scaled_screenshot_keeps_marks_and_masks_and_leaves_no_overlay(browser_session, sites):
    await browser_session.navigate(sites.url("form.html"))
    observation = await browser_session.observe()
    title = next(e.id for e in observation.elements.values() if e.name == "title")
    plain = Image.open(io.BytesIO(await browser_session.screenshot(marks=False, format="png", scale=0.5)))
    marked = Image.open(io.BytesIO(await browser_session.screenshot(format="png", scale=0.5, mask_ids=[title])))
    assert plain.size == marked.size == (640, 400)
    assert plain.tobytes() != marked.tobytes()
    box = await browser_session.page.locator("input[name=title]").bounding_box()
    centre = (int((box["x"] + box["width"] / 2) * 0.5), int((box["y"] + box["height"] / 2) * 0.5))
    assert marked.convert("RGB").getpixel(centre) == (255, 0, 255)
    assert await browser_session.page.evaluate("document.getElementById('__webtask_marks__')") is None
    with pytest.raises(ActionError, match="unknown element id"):
        await browser_session.screenshot(mask_ids=["input-99"], scale=0.5)


async def test_screenshots_of_a_focused_field_do_not_blink(browser_session, sites):
    observation = await open_page_focused(browser_session, sites)
    shots = [await browser_session.screenshot(format="png") for _ in range(3)]
    assert shots[0] == shots[1] == shots[2]
    assert observation.url == sites.url("form.html")
    # The caret hidden for the picture is back afterwards.
    assert await browser_session.page.evaluate("document.activeElement.style.caretColor") == ""


async def open_page_focused(session: BrowserTab, sites) -> Observation:
    await session.navigate(sites.url("form.html"))
    observation = await session.observe()
    await session.click(next(e.id for e in observation.elements.values() if e.name == "title"))
    return observation


async def test_a_page_still_building_after_its_load_is_waited_for(browser_session, sites):
    # Its editor arrives in parts one timer apart after the load event: the navigation settles once
    # the page stopped adding nodes, so the first observation has the whole editor.
    await browser_session.navigate(sites.url("building.html"))
    tree = (await browser_session.observe()).tree
    assert '(value="Ready to write" contenteditable) "Description"' in tree, tree
    assert '"Numbered list"' in tree
