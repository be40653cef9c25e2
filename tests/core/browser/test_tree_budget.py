"""Tree budget: a page whose tree is longer than BrowserConfig.tree_budget_chars keeps what is on and
near the screen in full and summarises the rest; on real long pages in real Chromium."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from webtask_core.browser import Browser, BrowserConfig, BrowserTab, Observation
from webtask_core.browser.models import DEFAULT_TREE_BUDGET_CHARS
from webtask_core.browser.tree_lines import text_lines
from webtask_core.errors import ActionError

SUMMARY = re.compile(
    r"^(?P<pad>\s*)- … (?P<lines>\d+) more (?P<side>above|below)(?: in (?P<scroller>\S+))? \((?P<interactive>\d+) interactive\)$"
)
INTERACTIVE_LINE = re.compile(r"^\s*- ([a-z][a-z0-9]*-\d+)\b")
MARGIN = re.compile(r"page state trimmed to (?:(?P<margin>[\d.]+) viewports? above and below the screen|what is on screen)")
ROWS = "budget_listings.html"
PANELS = "budget_panels.html"

# Rows (index) of the listings table that overlap [top, bottom] in viewport heights from the screen's top.
_ROWS_BETWEEN = """([top, bottom]) => Array.from(document.querySelectorAll('#rows tr'), (tr, index) => {
  const r = tr.getBoundingClientRect();
  return r.bottom >= top * innerHeight && r.top <= bottom * innerHeight ? index : -1;
}).filter((index) => index >= 0)"""


@pytest.fixture(scope="module")
async def whole_browser() -> AsyncIterator[Browser]:
    """A browser whose observations always hold the whole page (no budget), to compare against."""
    launched = await Browser.launch(BrowserConfig(tree_budget_chars=None))
    yield launched
    await launched.close()


@pytest.fixture
async def whole_session(whole_browser: Browser) -> AsyncIterator[BrowserTab]:
    session = await whole_browser.new_tab()
    yield session
    await session.close()


async def observe(session: BrowserTab, sites, page: str) -> Observation:
    await session.navigate(sites.url(page))
    return await session.observe()


def summaries(tree: str) -> list[re.Match[str]]:
    return [match for line in tree.splitlines() if (match := SUMMARY.match(line))]


def kept_lines(tree: str) -> list[str]:
    return [line for line in tree.splitlines() if not SUMMARY.match(line)]


def margin_of(observation: Observation) -> float:
    match = MARGIN.search(observation.scroll)
    assert match, observation.scroll
    return float(match["margin"] or 0)


def id_named(observation: Observation, name: str) -> str:
    return next(element.id for element in observation.elements.values() if element.name == name)


async def test_a_long_page_is_trimmed_to_the_budget_around_the_screen(browser_session, whole_session, sites):
    whole = await observe(whole_session, sites, ROWS)
    trimmed = await observe(browser_session, sites, ROWS)
    assert len(whole.tree) > DEFAULT_TREE_BUDGET_CHARS  # the page really is over the default budget
    assert len(trimmed.tree) <= DEFAULT_TREE_BUDGET_CHARS

    # Every row on the screen and within the margin the scroll text names is there in full, with ids.
    margin = margin_of(trimmed)
    assert margin >= 1
    near = await browser_session.page.evaluate(_ROWS_BETWEEN, [-margin, 1 + margin])
    assert 0 in near and len(near) >= 40
    names = {element.name for element in trimmed.elements.values()}
    for row in near:
        assert f"Row {row}: vintage item" in text_lines(trimmed.tree)
        assert {f"price-{row}", f"save-{row}"} <= names

    # At the top of the page everything left out lies below; the summaries account for all of it.
    found = summaries(trimmed.tree)
    assert found and {match["side"] for match in found} == {"below"}
    assert len(trimmed.elements) + sum(int(m["interactive"]) for m in found) == len(whole.elements)
    assert len(kept_lines(trimmed.tree)) + sum(int(m["lines"]) for m in found) == len(whole.tree.splitlines())
    assert trimmed.scroll.startswith(whole.scroll + "; page state trimmed to ")
    assert "elements below (" in trimmed.scroll and "above (" not in trimmed.scroll
    # The structure around what is kept stays: the form, its table, and the rows' own lines.
    assert trimmed.tree.startswith('- nav "Main"\n')
    assert '- form "Bulk edit"\n - table\n  - row\n' in trimmed.tree


async def test_kept_lines_and_ids_are_those_of_the_whole_tree(browser_session, whole_session, sites):
    whole = await observe(whole_session, sites, ROWS)
    trimmed = await observe(browser_session, sites, ROWS)
    whole_lines = iter(whole.tree.splitlines())
    for line in kept_lines(trimmed.tree):  # the same lines, in the same order, ids included
        assert any(line == candidate for candidate in whole_lines), line
    for element_id, element in trimmed.elements.items():
        assert whole.elements[element_id] == element
    ids = [m.group(1) for line in trimmed.tree.splitlines() if (m := INTERACTIVE_LINE.match(line))]
    assert ids == list(trimmed.elements)


async def test_an_elided_element_has_no_id_and_acting_on_it_fails_clearly(browser_session, whole_session, sites):
    whole = await observe(whole_session, sites, ROWS)
    trimmed = await observe(browser_session, sites, ROWS)
    far = id_named(whole, "save-299")  # the same id the element would have in a whole tree
    assert far not in trimmed.elements
    assert f"- {far} " not in trimmed.tree
    with pytest.raises(ActionError, match=f"^unknown element id {far}; use an id from the current page state$"):
        await browser_session.click(far)
    assert await browser_session.page.evaluate("document.querySelector('[name=save-299]').textContent") == "Save row 299"


async def test_scrolling_down_shows_the_rows_that_were_left_out(browser_session, sites):
    before = await observe(browser_session, sites, ROWS)
    assert "save-150" not in {element.name for element in before.elements.values()}
    await browser_session.scroll("down", amount=6)  # row 150 (~6,000 px down) within 1.25 viewports of the screen
    after = await browser_session.observe()
    assert len(after.tree) <= DEFAULT_TREE_BUDGET_CHARS
    save = id_named(after, "save-150")
    assert {match["side"] for match in summaries(after.tree)} == {"above", "below"}
    assert "elements above (" in after.scroll and " below (" in after.scroll
    assert "save-0" not in {element.name for element in after.elements.values()}
    await browser_session.click(save)
    assert f'- {save} (name="save-150") "Saved row 150"' in (await browser_session.observe()).tree


async def test_a_row_keeps_its_id_when_the_page_scrolls(browser_session, sites):
    before = await observe(browser_session, sites, ROWS)
    await browser_session.scroll("down", amount=1)
    after = await browser_session.observe()
    assert id_named(before, "save-40") == id_named(after, "save-40")


async def test_a_page_under_the_budget_is_unchanged(browser_session, whole_session, sites):
    for page in ("form.html", "frames.html", "clickables.html", "long.html", "shadow.html", "select.html"):
        trimmed = await observe(browser_session, sites, page)
        whole = await observe(whole_session, sites, page)
        assert (trimmed.tree, trimmed.scroll, trimmed.elements) == (whole.tree, whole.scroll, whole.elements), page
        assert not summaries(trimmed.tree)


async def test_the_file_input_and_the_focused_element_are_never_left_out(browser_session, sites, tmp_path):
    await browser_session.navigate(sites.url(ROWS))
    await browser_session.page.evaluate("document.getElementById('notes').focus({preventScroll: true})")
    observation = await browser_session.observe()
    assert summaries(observation.tree)  # the rows between the screen and the form are left out
    photos, notes = id_named(observation, "photos"), id_named(observation, "notes")
    assert observation.elements[photos].hidden
    assert f' - {photos} (type="file" name="photos" multiple hidden) "Add photos"' in observation.tree
    assert f' - {notes} (name="notes") "Notes"' in observation.tree
    assert "save-299" not in {element.name for element in observation.elements.values()}
    # Typing goes to the focused field, and the upload target takes files, both far below the screen.
    await browser_session.type("ships tomorrow")
    picture = tmp_path / "shoe.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n")
    await browser_session.set_input_files(photos, [picture])
    values = await browser_session.page.evaluate(
        "[document.getElementById('notes').value, document.getElementById('photos').files[0].name]"
    )
    assert values == ["ships tomorrow", "shoe.png"]


async def test_observing_twice_gives_the_same_tree(browser_session, sites):
    first = await observe(browser_session, sites, ROWS)
    second = await browser_session.observe()
    assert (first.tree, first.scroll, first.elements) == (second.tree, second.scroll, second.elements)
    await browser_session.scroll("down", amount=3.5)
    third, fourth = await browser_session.observe(), await browser_session.observe()
    assert (third.tree, third.scroll) == (fourth.tree, fourth.scroll)
    assert third.tree != first.tree


async def test_a_scroll_container_and_a_frame_are_trimmed_by_where_their_content_lies(browser_session, sites, tmp_path):
    observation = await observe(browser_session, sites, PANELS)
    assert len(observation.tree) <= DEFAULT_TREE_BUDGET_CHARS
    feed = next(e.id for e in observation.elements.values() if e.tag == "div")
    assert observation.tree.splitlines()[1] == f'- {feed} (scrollable="0-2%" hint="feed")'
    # The feed's own content far down its scroll range is summarised with how to reach it.
    inside = [match for match in summaries(observation.tree) if match["scroller"] == feed]
    assert len(inside) == 1 and inside[0]["side"] == "below" and inside[0]["pad"] == " "
    assert '"Message 0 from a buyer asking about shipping"' in observation.tree
    assert '"Message 500 from a buyer' not in observation.tree

    # The frame is far below the screen, but it holds an upload target: the frame and that input stay,
    # its buttons do not.
    frame_photos = id_named(observation, "frame-photos")
    assert observation.elements[frame_photos].frame_path != ""
    lines = observation.tree.splitlines()
    at = lines.index('- iframe "Uploader"')
    assert lines[at + 1].startswith(f" - {frame_photos} ")
    assert SUMMARY.match(lines[at + 2])["side"] == "below" and SUMMARY.match(lines[at + 2])["scroller"] is None
    assert not [e for e in observation.elements.values() if e.text.startswith("Start upload")]
    picture = tmp_path / "bag.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n")
    await browser_session.set_input_files(frame_photos, [picture])

    # Scrolling the feed brings its later messages in, and the first ones go out above.
    for _ in range(2):  # 10 of the feed's own heights at most per call
        await browser_session.scroll("down", amount=10, element_id=feed)
    scrolled = await browser_session.observe()
    # 6,000 px down the feed: messages 250 on, as far as 1.25 viewports below the screen
    assert '"Message 300 from a buyer asking about shipping"' in scrolled.tree
    assert '"Message 0 from a buyer' not in scrolled.tree
    assert {match["side"] for match in summaries(scrolled.tree) if match["scroller"] == feed} == {"above", "below"}

    # Scrolling the page to the frame shows its buttons, with ids that act in the frame.
    await browser_session.scroll("down", amount=8)
    near_frame = await browser_session.observe()
    start = next(e for e in near_frame.elements.values() if e.text == "Start upload 2")
    assert start.frame_path != ""
    await browser_session.click(start.id)
    assert f'- {start.id} "Started 2"' in (await browser_session.observe()).tree
