"""The tree budget's rules on hand-made items (no browser): runs, sides, depths, frames, config."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from webtask_core.browser import BrowserConfig
from webtask_core.browser.models import DEFAULT_TREE_BUDGET_CHARS
from webtask_core.browser.tree import FrameItems, describe_scroll, stitch_tree
from webtask_core.errors import ConfigError

VIEWPORT = 800
SCROLL = {"y": 4000, "h": 20000, "vh": VIEWPORT}  # the screen shows page pixels 4000-4800


def button(number: int) -> list:
    return ["button", [], f"Button {number}", "button"]


def row(number: int, top: int) -> tuple[dict, list[int]]:
    """A table row with a text and a button, 40 px tall at `top` (viewport pixels)."""
    node = {"t": "row", "x": "", "c": [f"Row {number}", button(number)], "p": [top, top + 20, top + 20, top + 40]}
    return node, [top, top + 40]


def table(tops: list[int]) -> FrameItems:
    rows, positions = [], []
    for number, top in enumerate(tops):
        item, box = row(number, top)
        rows.append(item)
        positions += box
    return FrameItems(key="", items=[{"t": "table", "x": "", "c": rows, "p": positions}], positions=[tops[0], tops[-1] + 40])


def test_a_tree_within_budget_or_without_one_is_the_whole_tree():
    frames = {"": table([-3000, -2000, 100, 2000, 5000])}
    whole = stitch_tree(frames)
    assert stitch_tree(frames, budget=10_000, scroll=SCROLL).text == whole.text
    assert whole.trim is None and "…" not in whole.text
    assert list(whole.elements) == [f"button-{n}" for n in range(5)]


def test_runs_on_each_side_become_one_line_at_their_depth_and_ids_keep_their_numbers():
    # Rows far above (two), on screen (one), just below, far below (two): with a tiny budget only the
    # screen itself stays (the last rung), everything else is summarised per side.
    frames = {"": table([-3000, -2000, 100, 900, 2000, 5000])}
    tree = stitch_tree(frames, budget=10, scroll=SCROLL)
    assert tree.text.splitlines() == [
        "- table",
        " - … 6 more above (2 interactive)",
        " - row",
        '  Row 2',
        '  - button-2 "Button 2"',
        " - … 9 more below (3 interactive)",
    ]
    assert list(tree.elements) == ["button-2"]
    assert tree.trim is not None and tree.trim.margin == 0
    assert (tree.trim.above, tree.trim.above_interactive, tree.trim.below, tree.trim.below_interactive) == (6, 2, 9, 3)
    assert describe_scroll(SCROLL, tree.trim) == (
        "scrolled 21% (page is 25.0 viewports tall); page state trimmed to what is on screen: 6 elements above "
        "(2 interactive) and 9 below (3 interactive) are left out (see the '- … more' lines); scroll to see them"
    )


def test_runs_below_that_end_nested_containers_together_are_one_line_at_the_outer_depth():
    # A section on screen whose own rest lies far below, then more sections far below: the model
    # scrolls the page for either, so one line counts both (the screen's rows keep their ids).
    inner = table([100, 5000, 5100]).items[0]
    inner["p"] = [100, 140, 5000, 5040, 5100, 5140]
    section = {"t": "group", "x": "", "c": ["Section", inner], "p": [50, 70, 100, 5140]}
    frames = {"": FrameItems("", [section, button(7), button(8), "The end"],
                             [50, 5140, 6000, 6040, 7000, 7040, 8000, 8020])}
    tree = stitch_tree(frames, budget=10, scroll=SCROLL)
    assert tree.text.splitlines() == [
        "- group",
        " Section",
        " - table",
        "  - row",
        "   Row 0",
        '   - button-0 "Button 0"',
        "- … 9 more below (4 interactive)",  # 2 rows (3 lines each) of the table, 2 buttons, a text
    ]
    assert tree.trim is not None and (tree.trim.below, tree.trim.below_interactive) == (9, 4)
    # Above the screen and in a scroll box the lines stay apart: they are scrolled another way.
    box = ["div", ["scrollable", "0-50%"], "", "", [button(0), button(1), button(2)], [100, 140, 5000, 5040, 5100, 5140]]
    frames = {"": FrameItems("", [box, button(3), button(4)], [100, 400, 6000, 6040, 7000, 7040])}
    assert stitch_tree(frames, budget=10, scroll=SCROLL).text.splitlines()[-2:] == [
        " - … 2 more below in div-0 (2 interactive)", "- … 2 more below (2 interactive)"]
    # Nor across a frame's edge: the frame's rest may take scrolling the frame itself.
    frame = {"t": "iframe", "x": "Feed", "k": "f1", "y": 200}
    child = FrameItems("f1", [button(0), button(1), button(2)], [0, 20, 5000, 5020, 5100, 5120])
    main = FrameItems("", [frame, button(3), button(4)], [200, 700, 6000, 6040, 7000, 7040])
    assert stitch_tree({"": main, "f1": child}, budget=10, scroll=SCROLL).text.splitlines()[-2:] == [
        " - … 2 more below (2 interactive)", "- … 2 more below (2 interactive)"]


def test_the_widest_margin_that_fits_is_chosen():
    frames = {"": table([-3000, -2900, -2800, -700, 100, 900, 1500, 3500, 3600, 3700])}
    whole = len(stitch_tree(frames).text)
    tree = stitch_tree(frames, budget=whole - 1, scroll=SCROLL)
    assert tree.trim is not None and tree.trim.margin == 1.25  # the widest rung: the far rows are left out
    assert '"Button 3"' in tree.text and '"Button 6"' in tree.text
    assert '"Button 2"' not in tree.text and '"Button 7"' not in tree.text


def test_a_single_line_far_away_is_shown_rather_than_summarised():
    items = ["Far above", {"t": "h2", "x": "On screen"}, button(0)]
    frames = {"": FrameItems("", items, [-5000, -4980, 10, 40, 9000, 9040])}
    tree = stitch_tree(frames, budget=10, scroll=SCROLL)
    assert tree.text == 'Far above\n- h2 "On screen"\n- button-0 "Button 0"'
    assert tree.trim is None  # nothing was left out after all


def test_must_stay_items_and_frames_holding_them_are_kept():
    # A hidden file input (None position) deep in a far container; a far frame holding another one.
    upload = ["input", ["type", "file", "hidden", True], "Photos", "button"]
    form = {"t": "form", "x": "", "c": [button(0), button(4), upload, button(1), button(5)],
            "p": [9000, 9040, 9050, 9090, None, None, 9100, 9140, 9150, 9190]}
    frame = {"t": "iframe", "x": "Pay", "k": "f1", "y": 12000}
    main = FrameItems("", [button(2), form, frame], [100, 140, None, None, 12000, 12300])
    child = FrameItems("f1", [["input", ["type", "file", "hidden", True], "Receipt", "button"], button(3), button(6)],
                       [None, None, 10, 50, 60, 100])
    tree = stitch_tree({"": main, "f1": child}, budget=10, scroll=SCROLL)
    assert tree.text.splitlines() == [
        '- button-0 "Button 2"',
        "- form",
        " - … 2 more below (2 interactive)",
        ' - input-0 (type="file" hidden) "Photos"',
        " - … 2 more below (2 interactive)",
        '- iframe "Pay"',
        ' - input-1 (type="file" hidden) "Receipt"',
        " - … 2 more below (2 interactive)",
    ]
    assert list(tree.elements) == ["button-0", "input-0", "input-1"]
    assert tree.elements["input-1"].frame_path == "f1"
    # Elided elements keep their page-wide numbers, and the frame's are restamped like any others.
    assert tree.renames == {"f1": {"input-0": "input-1", "button-0": "button-5", "button-1": "button-6"}}


def test_a_frame_far_away_is_summarised_with_its_content_and_its_ids_still_renamed():
    frame = {"t": "iframe", "x": "Ads", "k": "f1", "y": 9000}
    main = FrameItems("", [button(0), frame, button(1)], [100, 140, 9000, 9300, 9400, 9440])
    child = FrameItems("f1", [button(0), {"t": "list", "x": "", "c": ["a", "b"], "p": [30, 40, 40, 50]}], [0, 20, 30, 50])
    tree = stitch_tree({"": main, "f1": child}, budget=10, scroll=SCROLL)
    assert tree.text.splitlines() == [
        '- button-0 "Button 0"',
        "- … 6 more below (2 interactive)",
    ]
    # The frame's own pass numbered its button 0; the page-wide id is button-1: restamped all the same.
    assert tree.renames == {"f1": {"button-0": "button-1"}, "": {"button-1": "button-2"}}


def test_content_of_a_frame_on_screen_is_placed_by_where_the_frame_sits():
    frame = {"t": "iframe", "x": "Feed", "k": "f1", "y": 200}
    main = FrameItems("", [frame], [200, 700])
    # Frame-relative tops: 0 is on screen (page 200); 5000 in the frame is page 5200, far below.
    child = FrameItems("f1", [button(0), button(1), button(2)], [0, 20, 5000, 5020, 5100, 5120])
    tree = stitch_tree({"": main, "f1": child}, budget=10, scroll=SCROLL)
    assert tree.text.splitlines() == [
        '- iframe "Feed"',
        ' - button-0 "Button 0"',
        " - … 2 more below (2 interactive)",
    ]


def test_the_budget_is_configurable_and_checked(monkeypatch):
    assert BrowserConfig().tree_budget_chars == DEFAULT_TREE_BUDGET_CHARS
    assert BrowserConfig(tree_budget_chars=None).tree_budget_chars is None
    with pytest.raises(ValidationError, match="greater than or equal to 1000"):
        BrowserConfig(tree_budget_chars=200)
    monkeypatch.setenv("WEBTASK_TREE_BUDGET_CHARS", "none")
    assert BrowserConfig().tree_budget_chars is None
    monkeypatch.setenv("WEBTASK_TREE_BUDGET_CHARS", "40000")
    assert BrowserConfig().tree_budget_chars == 40_000
    monkeypatch.setenv("WEBTASK_TREE_BUDGET_CHARS", "lots")
    with pytest.raises(ConfigError, match="WEBTASK_TREE_BUDGET_CHARS"):
        BrowserConfig()


def scroll_box(tops: list[int], view: list[int]) -> FrameItems:
    """A scroll box (its visible area `view`, viewport pixels) holding a row per top, 40 px tall."""
    rows, positions = [], []
    for number, top in enumerate(tops):
        item, box = row(number, top)
        rows.append(item)
        positions += box
    box = ["div", ["scrollable", "40-60%"], "", "", rows, positions, view]
    return FrameItems(key="", items=[box], positions=[view[0], view[1]])


def test_a_scroll_box_marks_where_its_items_leave_its_view_and_come_back():
    # Rows above the box's view, one straddling its top edge (in view), one inside, two below.
    frames = {"": scroll_box([0, 60, 90, 120, 200, 260], [100, 180])}
    assert stitch_tree(frames).text.splitlines() == [
        '- div-0 (scrollable="40-60%")',
        " - (out of view above)",
        " - row", '  Row 0', '  - button-0 "Button 0"',
        " - row", '  Row 1', '  - button-1 "Button 1"',
        " - (in view)",
        " - row", '  Row 2', '  - button-2 "Button 2"',
        " - row", '  Row 3', '  - button-3 "Button 3"',
        " - (out of view below)",
        " - row", '  Row 4', '  - button-4 "Button 4"',
        " - row", '  Row 5', '  - button-5 "Button 5"',
    ]


def test_scroll_marks_and_a_budget_summary_stand_side_by_side():
    # A budget keeps only the screen: the rows far below the box are summarised after the mark.
    frames = {"": scroll_box([100, 140, 180, 5000, 5040], [90, 220])}
    lines = stitch_tree(frames, budget=10, scroll=SCROLL).text.splitlines()
    assert lines[-2:] == [
        " - (out of view below)",
        " - … 6 more below in div-0 (2 interactive)",
    ]
    assert " - (out of view above)" not in lines and "(in view)" not in "\n".join(lines)
