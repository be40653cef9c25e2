"""The widget tools' failure paths, through the tab as the tools call it: select_option never says an
option is selected when the widget does not show it; drag, upload, sliders and press_key refuse what
they cannot do with a reason the model can act on."""

from __future__ import annotations

from pathlib import Path

import pytest

from webtask_core.browser import BrowserTab, Observation
from webtask_core.errors import ActionError
from webtask_core.llm.types import ToolCall
from webtask_core.resources import ResourceSet
from webtask_core.tools import OutputSpec, StepState, ToolContext, ToolRegistry


async def open_page(tab: BrowserTab, widget_site, page: str) -> Observation:
    await tab.navigate(widget_site.url(page))
    return await tab.observe()


def named(observation: Observation, text: str, **attributes: str) -> str:
    for element in observation.elements.values():
        if element.text == text and all(element.attributes.get(k) == v for k, v in attributes.items()):
            return element.id
    raise AssertionError(f"no element {text!r} {attributes} in:\n{observation.tree}")


async def test_select_option_on_a_widget_fails_when_it_cannot_choose(browser_session, widget_site):
    observation = await open_page(browser_session, widget_site, "category.html")
    # Tom Select's originals are left out; the native selects beside them stay.
    assert [e.name for e in observation.elements.values() if e.tag == "select"] == ["shipping", "sizes"]
    category, colours = named(observation, "Category"), named(observation, "Colours")
    with pytest.raises(ActionError, match=r'has no option "Purses"; options: "Shoes", "Bags", "Small bags", "Belts"$'):
        await browser_session.select_option(category, "Purses")
    # Exact text only, as for a <select>: the options holding it are named for the model to choose.
    with pytest.raises(ActionError, match=r'has no option "small"; options with that in their text: "Small bags" '):
        await browser_session.select_option(category, "small")
    with pytest.raises(ActionError, match=r'option "Red" of input-\d is disabled'):
        await browser_session.select_option(colours, "Red")
    with pytest.raises(ActionError, match="takes a single option, but 2 were given"):
        await browser_session.select_option(category, ["Shoes", "Bags"])
    # A widget that does not open (locked) shows no option to choose: nothing is claimed.
    await browser_session.page.evaluate("categorySelect.lock()")
    with pytest.raises(ActionError, match=r'has no option "Bags"; it shows no list of options when clicked'):
        await browser_session.select_option(category, "Bags")
    assert await browser_session.page.evaluate("[categorySelect.getValue(), colourSelect.getValue()]") == ["", []]
    # "bags" is the option "Bags" (case aside), though "Small bags" holds it too.
    await browser_session.page.evaluate("categorySelect.unlock()")
    assert await browser_session.select_option(category, "bags") == f'selected "Bags" in {category}; it shows "Bags"'


async def test_a_native_select_the_page_puts_back_is_an_error(browser_session, widget_site):
    observation = await open_page(browser_session, widget_site, "category.html")
    shipping = next(e.id for e in observation.elements.values() if e.name == "shipping")
    with pytest.raises(ActionError, match=rf'{shipping} did not keep "Express": the page changed it back, it holds "Standard"'):
        await browser_session.select_option(shipping, "Express")
    assert "Express shipping is not available yet." in (await browser_session.observe()).tree


async def test_a_native_multiple_select_adds_what_is_chosen(browser_session, widget_site):
    observation = await open_page(browser_session, widget_site, "category.html")
    sizes = next(e.id for e in observation.elements.values() if e.name == "sizes")
    assert await browser_session.select_option(sizes, "9") == f'selected "9" in {sizes}; it holds "9"'
    assert await browser_session.select_option(sizes, ["11", "10"]) == (
        f'selected "11", "10" in {sizes}; it holds "9", "10", "11"')
    assert await browser_session.page.evaluate("new FormData(document.querySelector('form')).getAll('sizes')") == [
        "9", "10", "11"]


async def test_drag_needs_a_target_or_an_offset(browser_session, widget_site):
    observation = await open_page(browser_session, widget_site, "photos.html")
    first, last = named(observation, "front.jpg"), named(observation, "sole.jpg")
    with pytest.raises(ActionError, match="give to_element_id, or offset_x / offset_y"):
        await browser_session.drag(last)
    with pytest.raises(ActionError, match="cannot be dragged onto itself"):
        await browser_session.drag(last, to_element_id=last)
    message = await browser_session.drag(first, offset_y=200)  # dropped below the list: SortableJS keeps it
    assert message.startswith(f"dragged {first} by 0, 200 px; it ") and "is where it was" in message
    assert await browser_session.page.evaluate("sortable.toArray()") == ["front.jpg", "side.jpg", "sole.jpg"]


async def test_drag_reorders_a_list_that_follows_the_mouse_itself(browser_session, widget_site):
    # SortableJS's fallback mode: no HTML5 drag and drop, only mouse events along the way.
    observation = await open_page(browser_session, widget_site, "photos.html")
    size, material = named(observation, "Size"), named(observation, "Material")
    message = await browser_session.drag(material, to_element_id=size)
    assert message.startswith(f"dragged {material} onto {size}; it moved by 0, -")
    assert await browser_session.page.evaluate("details.toArray()") == ["material", "size", "colour"]


async def test_upload_to_an_element_that_takes_no_files(browser_session, widget_site, tmp_path: Path):
    observation = await open_page(browser_session, widget_site, "photos.html")
    photo = tmp_path / "x.png"
    photo.write_bytes(b"not really a picture")
    with pytest.raises(ActionError, match="neither takes dropped files nor opens a file chooser when clicked"):
        await browser_session.set_input_files(named(observation, "Save photo order"), [photo])


async def test_sliders_refuse_values_out_of_range_or_not_numbers(browser_session, widget_site):
    observation = await open_page(browser_session, widget_site, "price.html")
    price = named(observation, "Asking price")
    with pytest.raises(ActionError, match=rf"{price} goes from 0 to 200; 250 is out of its range"):
        await browser_session.fill(price, "250")
    with pytest.raises(ActionError, match='is not a number: "cheap"'):
        await browser_session.fill(price, "cheap")
    assert await browser_session.fill(price, "$199") == f'set {price} to "$199"'


async def test_press_key_repeats_and_its_count_is_bounded(browser_session, widget_site):
    observation = await open_page(browser_session, widget_site, "price.html")
    price = named(observation, "Asking price")
    registry = ToolRegistry.default()
    ctx = ToolContext(tab=browser_session, resources=ResourceSet(), output_spec=OutputSpec(), state=StepState())

    async def press(**arguments: object) -> tuple[bool, str]:
        [outcome] = await registry.run_calls([ToolCall(id="call-1", name="press_key", input=arguments)], ctx,
                                             page_url=browser_session.url)
        return outcome.ok, outcome.message

    assert await press(key="ArrowRight", element_id=price, times=3) == (True, f"pressed ArrowRight on {price} 3 times")
    assert await browser_session.page.evaluate("priceSlider.noUiSlider.get()") == "$23"
    ok, message = await press(key="ArrowRight", element_id=price, times=51)
    assert not ok and "times" in message and "50" in message
