"""Observation: the tree text the model reads, element ids and their marks, on real pages."""

from __future__ import annotations

import pytest
from golden_helpers import INTERACTIVE_LINE, assert_golden

from webtask_core.browser import BrowserTab, Observation


async def observe(session: BrowserTab, sites, page: str) -> Observation:
    await session.navigate(sites.url(page))
    return await session.observe()


@pytest.mark.parametrize("page", ["form", "frames", "shadow", "clickables", "long", "covered"])
async def test_tree_matches_golden(browser_session, sites, page):
    observation = await observe(browser_session, sites, f"{page}.html")
    assert_golden(page, observation)


async def test_every_interactive_line_is_in_elements_and_back(browser_session, sites):
    observation = await observe(browser_session, sites, "form.html")
    ids = [m.group(1) for line in observation.tree.splitlines() if (m := INTERACTIVE_LINE.match(line))]
    assert ids and len(ids) == len(set(ids))
    assert set(ids) == set(observation.elements)
    # Per-tag counters in document order.
    inputs = [element_id for element_id in ids if element_id.startswith("input-")]
    assert inputs == [f"input-{n}" for n in range(len(inputs))]


async def test_observation_fields(browser_session, sites):
    observation = await observe(browser_session, sites, "form.html")
    assert observation.url == sites.url("form.html")
    assert observation.title == "New listing"
    assert [(tab.index, tab.active, tab.title) for tab in observation.tabs] == [(0, True, "New listing")]
    assert observation.scroll == "page fits in the viewport (no scrolling)"
    price = next(e for e in observation.elements.values() if e.name == "price")
    assert (price.tag, price.type, price.text, price.frame_path, price.role) == ("input", "number", "Price", "", "spinbutton")
    photos = next(e for e in observation.elements.values() if e.name == "photos")
    assert photos.hidden and photos.type == "file" and photos.text == "Add photos"
    draft = next(e for e in observation.elements.values() if e.text == "Save draft")
    assert draft.disabled


async def test_password_value_never_reaches_the_tree(browser_session, sites):
    observation = await observe(browser_session, sites, "form.html")
    assert "hunter2" not in observation.tree
    assert 'name="password" value="••••••"' in observation.tree
    password = next(e for e in observation.elements.values() if e.name == "password")
    await browser_session.fill(password.id, "s3cret-typed")
    observation = await browser_session.observe()
    assert "s3cret-typed" not in observation.tree
    assert 'value="••••••"' in observation.tree


async def test_live_values_show_typed_checked_and_selected(browser_session, sites):
    observation = await observe(browser_session, sites, "form.html")
    by_name = {e.name: e.id for e in observation.elements.values() if e.name}
    await browser_session.fill(by_name["title"], "Blue suede shoes")
    await browser_session.check(by_name["shipping"])
    await browser_session.select_option(by_name["category"], "Bags")
    tree = (await browser_session.observe()).tree
    title = '(name="title" placeholder="What are you selling?" value="Blue suede shoes") "Title"'
    assert f'- {by_name["title"]} {title}' in tree
    assert f'- {by_name["shipping"]} (type="checkbox" name="shipping" value="free" checked) "Free shipping"' in tree
    assert f'- {by_name["category"]} (name="category" value="Bags"' in tree


async def test_invisible_nodes_are_dropped_and_wrappers_collapse(browser_session, sites):
    tree = (await observe(browser_session, sites, "clickables.html")).tree
    for gone in ("Display none", "Visibility hidden", "Zero size", "Aria hidden", "Hidden until opened", "Inside details"):
        assert gone not in tree
    assert "\nDeeply wrapped text" in tree  # three wrapper divs collapse to one line


async def test_js_clickables_are_interactive_with_hints_for_icons(browser_session, sites):
    observation = await observe(browser_session, sites, "clickables.html")
    texts = {e.text: e for e in observation.elements.values()}
    for text in ("Listener span", "Property handler", "Pointer card with a nested part", "Role button",
                 "Focusable box", "More details"):
        assert text in texts, f"{text!r} should be interactive"
    assert '- div-4 (value="Editable note" contenteditable)' in observation.tree  # its text is its value
    assert texts["Listener span"].tag == "span"
    assert '(hint="Delete listing")' in observation.tree  # from title
    # No title or label: what its class says it does ("btn-close"), else the class itself as a hint.
    assert '- button-1 "close"' in observation.tree and '(hint="btn-star")' in observation.tree
    long_link = next(e for e in observation.elements.values() if e.tag == "a")
    assert len(long_link.text) == 100 and long_link.text.endswith("…")


async def test_ids_are_fresh_per_observation_and_stale_marks_are_cleared(browser_session, sites):
    first = await observe(browser_session, sites, "dynamic.html")
    assert list(first.elements) == ["button-0"]
    await browser_session.click("button-0")
    second = await browser_session.observe()
    assert '- input-0 (name="code") "Shipping code"' in second.tree
    assert '- button-0 "Finish"' in second.tree
    page = browser_session.page
    marked = await page.eval_on_selector_all("[data-wt-id]", "els => els.map(e => e.getAttribute('data-wt-id'))")
    assert sorted(marked) == ["button-0", "input-0"]


async def test_marks_resolve_inside_frames_and_shadow_roots(browser_session, sites):
    observation = await observe(browser_session, sites, "frames.html")
    cards = [e for e in observation.elements.values() if e.name == "card"]
    assert [c.id for c in cards] == ["input-1", "input-2"]
    assert cards[0].frame_path and cards[1].frame_path and cards[0].frame_path != cards[1].frame_path
    assert "Invisible" not in observation.tree
    main_marks = await browser_session.page.eval_on_selector_all(
        "[data-wt-id]", "els => els.map(e => e.getAttribute('data-wt-id'))"
    )
    assert main_marks == ["input-0", "button-2"]


async def test_scroll_position_is_reported(browser_session, sites):
    observation = await observe(browser_session, sites, "long.html")
    assert observation.scroll == "scrolled 0% (page is 4.8 viewports tall)"
    await browser_session.scroll("down", amount=10)
    observation = await browser_session.observe()
    assert observation.scroll == "scrolled 100% (page is 4.8 viewports tall)"


async def test_select_with_many_options_shows_the_first_few(browser_session, sites):
    observation = await observe(browser_session, sites, "select.html")
    line = next(line for line in observation.tree.splitlines() if line.startswith("- select-0"))
    assert line == (
        '- select-0 (name="colour" value="Colour 00" options="Colour 00 | Colour 01 | Colour 02 | Colour 03 | '
        'Colour 04 | Colour 05 | … 60 options") "Colour"'
    )


async def test_blank_page_observes_cleanly(browser_session):
    observation = await browser_session.observe()
    assert observation.url == "about:blank"
    assert observation.tree == "" and observation.elements == {}
