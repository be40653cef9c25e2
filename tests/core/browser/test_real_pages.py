"""Pages shaped like third-party sites (web mail, a social feed, flight results in a scroll box, sign-up
forms, a file tree), observed and driven through the tools exactly as the model would: the golden
tree keeps the page's grouping, every control of the page is clicked by the id the tree gives it,
and the page's own record (window.clicks) shows each click reached the control it was meant for."""

from __future__ import annotations

import json
import re

import pytest
from golden_helpers import assert_golden, block, ids_in, parent_block
from tool_driver import ToolDriver

from webtask_core.browser import BrowserTab, Observation
from webtask_core.browser.tree_lines import text_lines
from webtask_core.testing.request_view import tree_elements

REAL_PAGES = ["inbox", "feed", "flights", "signup", "filetree"]


async def clicks(session: BrowserTab) -> list[str]:
    return await session.page.evaluate("window.clicks")


def element(observation: Observation, line_start: str) -> str:
    """The id on the first line of the tree that starts (after indentation and id) like this."""
    pattern = re.compile(r"^\s*- ([a-z][a-z0-9]*-\d+) " + re.escape(line_start))
    for line in observation.tree.splitlines():
        if match := pattern.match(line):
            return match.group(1)
    raise AssertionError(f"no element line like {line_start!r} in:\n{observation.tree}")


@pytest.mark.parametrize("page", REAL_PAGES)
async def test_real_page_tree_matches_golden(browser_session, sites, page):
    observation = await ToolDriver(browser_session).open(sites.url(f"{page}.html"))
    assert_golden(page, observation)


async def test_inbox_every_control_of_every_row_through_the_tools(browser_session, sites):
    driver = ToolDriver(browser_session)
    observation = await driver.open(sites.url("inbox.html"))
    expected: list[str] = []
    for thread, sender in (("t1", "Alice Johnson"), ("t2", "GitHub"), ("t3", "Bob Lee")):
        # The row is the clickable line the sender's text sits under; its icons sit under it too.
        row = parent_block(observation.tree, sender)
        row_id, *controls = ids_in(row)
        shown = [line.strip().split(" ", 2)[2] for line in row if ids_in([line]) and ids_in([line])[0] in controls]
        assert shown == ['(role="checkbox" aria-checked="false" hint="oZ-jc")', '"Not starred"', '(hint="Archive")',
                         '"Delete"', '(hint="Mark as unread")', '(hint="bqX bqY")']
        for control, name in zip(controls, ("select", "star", "archive", "delete", "unread", "snooze"), strict=True):
            await driver.ok("click", element_id=control)
            expected.append(f"{name}:{thread}")
        await driver.ok("click", element_id=row_id)
        expected.append(f"open:{thread}")
    for line_start, name in (('(role="button") "Compose"', "compose"), ('"Inbox 2"', "folder:inbox"),
                             ('"Starred"', "folder:starred"), ('"Sent"', "folder:sent"),
                             ('(role="checkbox" aria-checked="false") "Select all"', "select-all"),
                             ('(hint="Refresh")', "refresh"), ('"More email options"', "more")):
        await driver.ok("click", element_id=element(observation, line_start))
        expected.append(name)
    assert await clicks(browser_session) == expected
    # What the clicks changed shows in the next page state.
    tree = (await browser_session.observe()).tree
    assert tree.count('"Starred"') == 4  # the three stars, and the Starred folder
    assert tree.count('aria-checked="true"') == 4  # the three rows' boxes, and Select all


async def test_inbox_row_lines_keep_sender_subject_and_time_apart(browser_session, sites):
    observation = await ToolDriver(browser_session).open(sites.url("inbox.html"))
    row = parent_block(observation.tree, "Alice Johnson")
    assert re.fullmatch(r"- div-\d+", row[0].strip())  # the row's own line: no merged name, no class hint
    # The list's own listener is delegation (it holds 21 controls): it gets no id, its rows stay units.
    assert not await browser_session.page.evaluate("document.querySelector('.threads').hasAttribute('data-wt-id')")
    texts = text_lines("\n".join(row))
    assert texts == [
        "Alice Johnson",
        "Lunch on Friday - Are we still on for noon? I booked the place on Main St.",
        "10:42 AM",
    ]


async def test_feed_compose_in_the_contenteditable_and_every_post_control(browser_session, sites):
    driver = ToolDriver(browser_session)
    observation = await driver.open(sites.url("feed.html"))
    editor = element(observation, '(role="textbox" contenteditable) "Post text"')
    await driver.ok("fill", element_id=editor, text="Hello from the trail")
    await driver.ok("type", element_id=editor, text=" today")
    observation = await browser_session.observe()
    assert f'- {editor} (role="textbox" value="Hello from the trail today" contenteditable) "Post text"' in observation.tree
    await driver.ok("click", element_id=element(observation, '"Post"'))
    observation = await browser_session.observe()
    assert observation.tree.count("- article") == 3
    assert 'Hello from the trail today' in text_lines(observation.tree)  # the new post, first in the feed

    expected = ["post:Hello from the trail today"]
    articles = [index for index, line in enumerate(observation.tree.splitlines()) if line.strip() == "- article"]
    lines = observation.tree.splitlines()
    for number, start in enumerate(articles):
        end = articles[number + 1] if number + 1 < len(articles) else len(lines)
        post = lines[start:end]
        post_id = ("200", "101", "102")[number]
        by_what = {}
        for element_line in tree_elements("\n".join(post)):
            what = element_line.text or element_line.attributes.get("hint", "")
            by_what[what] = element_line.id
        for what, name in (("Reply", "reply"), ("icon-button boost", "boost"), ("Favourite", "favourite"),
                           ("Share", "share"), ("More", "more")):
            await driver.ok("click", element_id=by_what[what])
            expected.append(f"{name}:{post_id}")
        for link in [e for e in tree_elements("\n".join(post)) if e.tag == "a"]:
            await driver.ok("click", element_id=link.id)
            # The tree leaves out an href its text says (a profile link); the element keeps the page's.
            expected.append(f"link:{observation.elements[link.id].attributes['href']}")
    for what, name in (('(role="button") "Add photos or video"', "media"), ('(hint="emoji-icon")', "emoji")):
        await driver.ok("click", element_id=element(observation, what))
        expected.append(name)
    assert await clicks(browser_session) == expected


async def test_flights_results_far_down_the_scroll_box_are_scrolled_into_view_and_clicked(browser_session, sites):
    driver = ToolDriver(browser_session)
    observation = await driver.open(sites.url("flights.html"))
    panel = element(observation, '(scrollable="0-18%" hint="results")')
    results = [line for line in block(observation.tree, f"- {panel}")[1:] if line.startswith(" - ")]
    assert results.index(" - (out of view below)") == 8  # the panel shows 8 of its 40 results
    books = [e.id for e in tree_elements(observation.tree) if e.text == "Book"]
    toggles = [e.id for e in tree_elements(observation.tree) if e.attributes.get("hint") == "toggle-details"]
    rows = [ids_in([line])[0] for line in results if ids_in([line])]
    assert len(books) == len(toggles) == len(rows) == 40

    expected = []
    # First result 9: inside the window, but below the panel's bottom edge, clipped by it (this was
    # "covered by html"); then far below, back at the top, the middle, the last, the edge.
    for index in (9, 38, 0, 25, 39, 7):
        for kind, ids in (("book", books), ("toggle", toggles), ("details", rows)):
            await driver.ok("click", element_id=ids[index])
            expected.append(f"{kind}:{index}")
    assert await clicks(browser_session) == expected
    # The tree follows the box: after the last clicks it shows results above and below its view.
    scrolled = (await browser_session.observe()).tree
    assert " - (out of view above)" in scrolled and " - (in view)" in scrolled and " - (out of view below)" in scrolled
    assert re.search(rf'- {panel} \(scrollable="(\d+)-(\d+)%" hint="results"\)', scrolled).group(1) != "0"


async def test_flights_a_real_overlay_is_named_and_clicks_go_through_once_it_is_closed(browser_session, sites):
    driver = ToolDriver(browser_session)
    observation = await driver.open(sites.url("flights.html"))
    book = [e.id for e in tree_elements(observation.tree) if e.text == "Book"]
    await driver.ok("click", element_id=element(observation, '"Track prices"'))
    observation = await browser_session.observe()
    assert '- dialog "Price alerts"' in observation.tree
    for target in (book[0], book[30]):  # one in view, one far down the box: both behind the backdrop
        refused = await driver.error("click", element_id=target)
        assert refused == (f'{target} is covered by div#price-alert.modal-backdrop.open ("Get price alerts for this '
                           'route by emai…"); close or move what covers it first')
    await driver.ok("click", element_id=element(observation, '"Close"'))
    await driver.ok("click", element_id=book[30])
    tabs = [e.id for e in tree_elements(observation.tree) if e.attributes.get("role") == "tab"]
    await driver.ok("click", element_id=tabs[1])
    await driver.ok("check", element_id=element(observation, '(type="checkbox" name="stops" value="1")'), checked=True)
    await driver.ok("check", element_id=element(observation, '(type="checkbox" name="stops" value="0" checked)'), checked=False)
    assert await clicks(browser_session) == ["track", "close", "book:30", "sort:Cheapest", "stops:1:true", "stops:0:false"]


async def test_signup_fields_named_by_what_follows_them_are_filled_and_submitted(browser_session, sites):
    driver = ToolDriver(browser_session)
    observation = await driver.open(sites.url("signup.html"))
    # A field whose label is not tied to it is read through its group: the text that follows it.
    full_name = ids_in(block(observation.tree, "- group")[1:2])[0]
    assert block(observation.tree, "- group")[2].strip() == "Full name"
    fields = {e.attributes.get("name"): e.id for e in tree_elements(observation.tree)}
    await driver.ok("fill", element_id=fields["email"], text="ana@example.com")
    await driver.ok("fill", element_id=full_name, text="Ana Lima")
    await driver.ok("fill", element_id=fields["password"], text="correct horse")
    await driver.ok("fill", element_id=fields["team"], text="solo")
    await driver.ok("check", element_id=element(observation, '(type="radio" name="plan" value="pro") "Pro Popular"'))
    await driver.ok("check", element_id=fields["newsletter"])
    await driver.ok("check", element_id=fields["terms"])
    await driver.ok("click", element_id=element(observation, '"Terms of Service"'))
    await driver.ok("click", element_id=element(observation, '"Create account"'))
    assert await clicks(browser_session) == ["terms", "submit"]
    summary = json.loads(await browser_session.page.text_content("#summary"))
    assert summary == {"email": "ana@example.com", "full_name": "Ana Lima", "password": "correct horse",
                       "plan": "pro", "newsletter": "on", "team": "solo", "terms": "yes"}


async def test_filetree_toggles_and_items_are_told_apart_and_each_does_its_own_thing(browser_session, sites):
    driver = ToolDriver(browser_session)
    observation = await driver.open(sites.url("filetree.html"))
    # The twisty shares its folder's state class: only the twisty carries it as a hint.
    assert observation.tree.count('hint="collapsed"') == 2
    for line in observation.tree.splitlines():
        if 'hint="collapsed"' in line:
            assert line.strip().startswith("- span-")
    src = element(observation, '(role="treeitem" aria-expanded="false" aria-selected="false")')
    src_twisty = ids_in(block(observation.tree, f"- {src}"))[1]
    await driver.ok("click", element_id=src_twisty)
    observation = await browser_session.observe()
    src_block = block(observation.tree, f"- {src} ")
    assert src_block[0].strip() == f'- {src} (role="treeitem" aria-expanded="true" aria-selected="false")'
    assert src_block[1].strip().endswith('(hint="expanded")')
    assert '"app.py 4 KB"' in "\n".join(src_block)
    utils = next(e for e in tree_elements("\n".join(src_block)) if e.attributes.get("aria-expanded") == "false")
    await driver.ok("click", element_id=ids_in(block(observation.tree, f"- {utils.id} "))[1])
    observation = await browser_session.observe()
    assert '"dates.py 1 KB"' in observation.tree

    for item in tree_elements(observation.tree):
        if item.attributes.get("role") == "treeitem":
            await driver.ok("click", element_id=item.id)
    assert await clicks(browser_session) == [
        "open:src", "open:src/utils", "select:src", "select:src/app.py", "select:src/utils",
        "select:src/utils/dates.py", "select:docs", "select:README.md",
    ]
    await driver.ok("click", element_id=src_twisty)  # closes it again
    assert '"app.py 4 KB"' not in (await browser_session.observe()).tree
