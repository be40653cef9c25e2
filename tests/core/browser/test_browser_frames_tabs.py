"""Frames (same- and cross-origin), open shadow roots, tabs, and screenshots with marks."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from webtask_core.errors import ActionError


def frame_with(session, which: str):
    return next(frame for frame in session.page.frames if f"which={which}" in frame.url)


async def test_fill_and_click_inside_same_and_cross_origin_iframes(browser_session, sites):
    await browser_session.navigate(sites.url("frames.html"))
    observation = await browser_session.observe()
    same, cross = (e for e in observation.elements.values() if e.name == "card")
    assert await browser_session.fill(same.id, "4111 same") == f'filled {same.id} with "4111 same"'
    await browser_session.fill(cross.id, "5500 cross")
    await browser_session.fill("input-0", "Ada")
    assert await frame_with(browser_session, "same").input_value("#card") == "4111 same"
    cross_frame = frame_with(browser_session, "cross")
    assert cross_frame.url.startswith(sites.other.origin)  # really another origin (and site)
    assert await cross_frame.input_value("#card") == "5500 cross"
    assert await browser_session.page.input_value("input[name=order-name]") == "Ada"
    await browser_session.click("button-1")  # "Apply" inside the cross-origin frame
    assert await cross_frame.text_content("#echo") == "5500 cross"
    tree = (await browser_session.observe()).tree
    assert ' - input-2 (name="card" value="5500 cross") "Card field"' in tree
    assert ' 5500 cross' in tree.splitlines()


async def test_open_shadow_root_is_observed_and_acted_on(browser_session, sites):
    await browser_session.navigate(sites.url("shadow.html"))
    observation = await browser_session.observe()
    assert 'button-1 "Secret"' in observation.tree  # a closed shadow root is walked too (listeners.js keeps it)
    await browser_session.fill("input-0", "red boots")
    await browser_session.click("button-0")
    out = await browser_session.page.evaluate("document.querySelector('search-box').shadowRoot.getElementById('out').textContent")
    assert out == "searched for red boots"


async def test_link_with_target_blank_opens_a_tab_to_switch_to(browser_session, sites):
    await browser_session.navigate(sites.url("tabs.html"))
    await browser_session.observe()
    message = await browser_session.click("a-0")
    assert message == f"clicked a-0; opened tab 1: {sites.url('tab_target.html')} (use switch_tab to look at it)"
    observation = await browser_session.observe()
    assert [(t.index, t.active, t.title) for t in observation.tabs] == [(0, True, "Tabs"), (1, False, "Listing 4")]
    assert await browser_session.switch_tab(1) == f"switched to tab 1: {sites.url('tab_target.html')} (Listing 4)"
    with pytest.raises(ActionError, match="belongs to another tab"):
        await browser_session.click("a-0")
    observation = await browser_session.observe()
    assert observation.title == "Listing 4" and observation.tabs[1].active
    await browser_session.click("button-0")
    assert await browser_session.page.text_content("button") == "Bought"
    with pytest.raises(ActionError, match=r"^switch_tab: there is no tab 5; open tabs are 0: "):
        await browser_session.switch_tab(5)
    await browser_session.switch_tab(0)
    assert browser_session.url == sites.url("tabs.html")


async def test_tab_opened_by_script_and_closed_by_the_page(browser_session, sites):
    await browser_session.navigate(sites.url("tabs.html"))
    await browser_session.observe()
    message = await browser_session.click("button-0")
    assert f"opened tab 1: {sites.url('tab_target.html?via=script')}" in message
    await browser_session.switch_tab(1)
    await browser_session.page.evaluate("window.close()")
    observation = await browser_session.observe()
    assert [t.url for t in observation.tabs] == [sites.url("tabs.html")]
    assert observation.url == sites.url("tabs.html")


async def test_screenshot_draws_marks_then_removes_them(browser_session, sites):
    await browser_session.navigate(sites.url("form.html"))
    await browser_session.observe()
    plain = await browser_session.screenshot(marks=False, format="png")
    marked = await browser_session.screenshot(marks=True, format="png")
    assert Image.open(io.BytesIO(plain)).size == (1280, 800)
    assert plain != marked
    assert await browser_session.page.evaluate("document.getElementById('__webtask_marks__')") is None
    assert await browser_session.screenshot(marks=False, format="png") == plain
    jpeg = await browser_session.screenshot(quality=40)
    image = Image.open(io.BytesIO(jpeg))
    assert image.format == "JPEG" and image.size == (1280, 800)


async def test_screenshot_labels_of_wide_fields_leave_the_field_label_above_readable(browser_session, sites):
    await browser_session.navigate(sites.url("form.html"))
    await browser_session.page.set_content(
        '<body style="margin:40px;font:16px sans-serif">'
        '<div><span id="caption" style="display:inline-block;margin-bottom:8px">Title</span></div>'
        '<input id="t" style="width:600px;height:32px"> <input type="checkbox" id="c"></body>'
    )
    await browser_session.observe()
    plain = Image.open(io.BytesIO(await browser_session.screenshot(marks=False, format="png"))).convert("RGB")
    marked = Image.open(io.BytesIO(await browser_session.screenshot(marks=True, format="png"))).convert("RGB")

    async def region(selector: str, part: str = "all") -> tuple[int, int, int, int]:
        box = await browser_session.page.locator(selector).bounding_box()
        left, top, right, bottom = box["x"], box["y"], box["x"] + box["width"], box["y"] + box["height"]
        if part == "top-right":
            left = right - 60
        return int(left), int(top), int(right), int(bottom)

    caption = await region("#caption")
    assert plain.crop(caption).tobytes() == marked.crop(caption).tobytes()  # "Title" is not covered
    corner = await region("#t", "top-right")
    assert plain.crop(corner).tobytes() != marked.crop(corner).tobytes()  # the id sits inside, top right
    above_box = await region("#c")
    above = (above_box[0], above_box[1] - 10, above_box[2], above_box[1])
    assert plain.crop(above).tobytes() != marked.crop(above).tobytes()  # a small box: its id goes above


async def test_screenshot_masks_passwords_and_requested_ids(browser_session, sites):
    await browser_session.navigate(sites.url("form.html"))
    observation = await browser_session.observe()
    title = next(e.id for e in observation.elements.values() if e.name == "title")
    image = Image.open(io.BytesIO(await browser_session.screenshot(marks=False, format="png", mask_ids=[title]))).convert("RGB")

    async def centre(selector: str) -> tuple[int, int]:
        box = await browser_session.page.locator(selector).bounding_box()
        return int(box["x"] + box["width"] / 2), int(box["y"] + box["height"] / 2)

    magenta = (255, 0, 255)
    assert image.getpixel(await centre("input[name=password]")) == magenta
    assert image.getpixel(await centre("input[name=title]")) == magenta
    assert image.getpixel(await centre("input[name=email]")) != magenta
    with pytest.raises(ActionError, match="unknown element id"):
        await browser_session.screenshot(mask_ids=["input-99"])


async def test_screenshot_rejects_bad_parameters(browser_session):
    from webtask_core.errors import ConfigError

    with pytest.raises(ConfigError, match="format"):
        await browser_session.screenshot(format="gif")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="quality"):
        await browser_session.screenshot(quality=0)
