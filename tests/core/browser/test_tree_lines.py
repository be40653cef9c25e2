"""Text lines of the tree: plain words at their depth, quoted only where they could be misread, and
read back (`text_of`, `marked_line`) the same whichever way they were written."""

from __future__ import annotations

import pytest

from webtask_core.browser.tree import FrameItems, stitch_tree
from webtask_core.browser.tree_lines import marked_line, marked_tree, text_line, text_lines, text_of

AWKWARD = ["- 5 items", '"Quoted" at the start', " leading space", "trailing space ", "two\nlines", "C:\\temp"]


def test_plain_words_stay_plain_and_what_could_be_misread_is_quoted():
    assert text_line("Price differs from your last listing") == "Price differs from your last listing"
    assert text_line("-") == "-"  # a lone dash is no line head (MiniWoB's "Last reward: -")
    assert text_line("a-3 looks like an id") == "a-3 looks like an id"  # no `- ` before it: still text
    for text in AWKWARD:
        assert text_line(text).startswith('"'), text


@pytest.mark.parametrize("text", ["Plain words", "-", "1–3 of 3", r"C:\new folder", r"a path \n and a quote \"", *AWKWARD])
def test_every_text_reads_back_as_it_was_in_either_form(text):
    line = "  " + text_line(text)
    assert text_of(line) == text
    assert marked_line(line).startswith('  - text: "')
    assert text_of(marked_line(line)) == text  # the form before issue 29 reads the same


def test_other_lines_are_no_text_and_stay_as_they_are():
    for line in ('- h1 "Title"', ' - a-0 "Docs"', "- group", "- … 3 more below (1 interactive)", " - (in view)"):
        assert text_of(line) is None
        assert marked_line(line) == line


def test_the_renderer_writes_text_lines_that_read_back_with_their_nesting():
    items = [{"t": "h2", "x": "Cart"}, "- 5 items", {"t": "row", "c": ["Boots", ["button", [], "Remove", "button"]]},
             'Say "hi"']
    tree = stitch_tree({"": FrameItems("", items)}).text
    assert tree.splitlines() == ['- h2 "Cart"', '"- 5 items"', "- row", " Boots", ' - button-0 "Remove"', 'Say "hi"']
    assert text_lines(tree) == ["- 5 items", "Boots", 'Say "hi"']  # a quote inside plain words is a quote
    assert marked_tree(tree).splitlines()[3] == ' - text: "Boots"'
