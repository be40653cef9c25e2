"""Code judges: a field as asked against what a page shows for it — numbers by value, text by its
words, yes/no, a text the page cut short, a contradicting second value, pictures by count."""

from __future__ import annotations

import pytest

from webtask_core.readback import compare_field, same_value
from webtask_core.readback.compare import compare_pictures


@pytest.mark.parametrize(("expected", "shown"), [
    ("1234.5", "1,234.50"), (1234.5, "$1,234.50"), ("45", "$45.00"), (45, "45.00 USD"), ("24.50", "24,50 €"),
    ("61.00", "€ 61"), (7, "7 pieces"), ("3", "3"),
    ("Women's Shoes", "women’s   shoes"), ("Blue suede shoes", "“Blue Suede Shoes”"),
    ("Second-hand atlas.\nA few pencil marks.", "Second-hand atlas. A few pencil marks."),
    (True, "Yes"), (False, "No"), (True, "✓ on"), (["red", "leather"], "Tags: red, leather, bag"),
    # Markdown typed into a rich editor, shown rendered.
    ("Light trail shoe with a **grippy sole** and *red mesh* upper.", "Light trail shoe with a grippy sole and red mesh upper."),
    ("See the [size guide](https://shop.example/sizes) and `care_notes`; __new__ _in 2026_.\n- one\n- two",
     "See the size guide and care_notes; new in 2026. one two"),
])
def test_the_same_value_written_otherwise_matches(expected, shown):
    assert same_value(expected, shown) is True
    assert compare_field("field", expected, shown).verdict == "match"


@pytest.mark.parametrize(("expected", "shown"), [
    ("46.00", "$54.74"), ("7", "5"), (45, "$4.50"), ("Paperback atlas with a long title", "Paperback atlas with"),
    ("Books", "Magazines"), (True, "No"), (["red", "green"], "red, blue"),
    ("A **grippy** sole", "A sole"), ("SKU_RED_2", "SKU RED 2"), ("2*3*4 grid", "234 grid"),
])
def test_another_value_is_a_mismatch_naming_what_is_shown(expected, shown):
    check = compare_field("field", expected, shown)
    assert check.verdict == "mismatch" and check.shown == shown
    assert "expected" in check.describe() and repr(shown) in check.describe()


def test_a_value_that_cannot_be_read_as_the_kind_asked_is_a_mismatch_that_says_so():
    check = compare_field("price", "45.00", "Make an offer")
    assert check.verdict == "mismatch" and "cannot be read" in check.note


def test_a_text_cut_short_by_the_page_agrees_by_its_start_and_says_so():
    check = compare_field("description", "Worn twice, no marks at all, comes with the box", "Worn twice, no marks…")
    assert check.verdict == "match" and check.note == "shown in part"
    assert compare_field("description", "Worn twice", "Worn three…").verdict == "mismatch"


def test_a_field_the_page_does_not_show_is_not_shown_never_passed():
    for shown in (None, "", "   "):
        check = compare_field("quantity", "7", shown)
        assert check.verdict == "not_shown" and check.describe() == "quantity: not shown"


def test_a_second_value_that_contradicts_fails_the_field():
    check = compare_field("price", "61.00", "$61.00", others=["$72.59 incl. VAT"])
    assert check.verdict == "mismatch" and "$72.59 incl. VAT" in check.note
    assert compare_field("price", "61.00", "$61.00", others=["61.00 USD"]).verdict == "match"  # the same again
    # The listing's own sale price beside its price is that field shown, not a second price.
    on_sale = compare_field("price", "59.90", "$59.90", others=["$49.90"], asked_elsewhere=["49.90", "Red"])
    assert on_sale.verdict == "match"
    assert compare_field("price", "59.90", "$59.90", others=["$49.90"], asked_elsewhere=["45.00"]).verdict == "mismatch"
    assert compare_field("price", "59.90", "$49.90", asked_elsewhere=["49.90"]).verdict == "mismatch"  # swapped


def test_pictures_are_compared_by_count():
    assert compare_pictures("photos", ["a", "b"], 2).verdict == "match"
    assert compare_pictures("photos", ["a", "b"], 1).verdict == "mismatch"
    assert compare_pictures("photos", ["a"], None).verdict == "not_shown"
