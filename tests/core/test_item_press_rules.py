"""A replayed Enter (Tab, comma) that should add the typed item is pressed only on a field that holds
it (browser/item_press.press_needed): one that lost it would not add it, and an Enter in an empty
field can submit the form — Wagtail's tag field (tag-it lets an empty field's Enter through) then
saves the page as a draft. When the item shows outside the field already (the widget made its chip
as the field lost the focus) the press is not needed; when it shows nowhere, the call fails."""

from __future__ import annotations

import pytest

from webtask_core.browser.item_press import ItemField, press_needed
from webtask_core.errors import ActionError


def field(value: str, shown: int = 0) -> ItemField:
    return ItemField(value=value, shown=shown, list_open=False)


@pytest.mark.parametrize("value", ["summer", "Summer", "summer  ", "size  38"])
def test_a_field_holding_the_typed_item_is_pressed(value):
    assert press_needed(field(value), "Enter", "size 38" if "38" in value else "summer") is None


def test_no_text_field_in_focus_is_left_to_the_press():
    assert press_needed(None, "Enter", "summer") is None


@pytest.mark.parametrize(("value", "shown"), [("", "''"), ("sum", "'sum'")])
def test_a_field_that_lost_the_item_is_not_pressed_and_says_what_it_holds(value, shown):
    with pytest.raises(ActionError) as failed:
        press_needed(field(value), "Enter", "summer")
    message = str(failed.value)
    assert "'summer'" in message and f"holds {shown}" in message and "was not pressed" in message


def test_an_item_the_widget_added_already_needs_no_press():
    note = press_needed(field("", shown=1), "Enter", "summer")
    assert note == "not pressed: 'summer' shows already (the widget added it) and the field holds ''"
