"""A native <select>: its option found by the text a model read, why none was, and choosing it.

A widget's own list (a listbox the page draws) is listbox.py's; it explains a missing option the
same way (``no_such_option``).
"""

from __future__ import annotations

from typing import Any

from webtask_core.browser.actions import Target, quote_for_model
from webtask_core.errors import ActionError

__all__ = ["match_option", "no_such_option", "select_option"]


def match_option(options: list[list[Any]], wanted: str) -> list[Any] | None:
    """The option whose text is ``wanted`` exactly (case and spacing aside); an option with no text
    by its value. Never a near match: "Books" is not "Audiobooks", and a value is not a label
    ("books" may now be labelled "Magazines") — for those the model reads the options and decides."""
    folded = " ".join(wanted.split()).casefold()
    for test in (lambda label: label == wanted, lambda label: " ".join(label.split()).casefold() == folded):
        found = [option for option in options if test(option[0])]
        if found:
            return found[0]
    unlabelled = [option for option in options if not option[0].strip() and option[1] == wanted]
    return unlabelled[0] if len(unlabelled) == 1 else None


def no_such_option(element_id: str, options: list[list[Any]], option: str) -> str:
    """Why no option was chosen, with what the model may have meant: an option whose value is what it
    asked for, options whose text holds it, then the first options."""
    folded = " ".join(option.split()).casefold()
    by_value = [label for label, value, _ in options if value == option and label.strip()]
    near = [label for label, _, _ in options if folded and folded in label.casefold()]
    message = f"{element_id} has no option {quote_for_model(option)}"
    if by_value:
        message += f"; the option whose value is {quote_for_model(option)} reads {quote_for_model(by_value[0], 40)}"
    if near:
        message += "; options with that in their text: " + ", ".join(quote_for_model(label, 40) for label in near[:5])
    if by_value or near:
        return message + " (choose by the exact text if one of them is what you mean)"
    shown = ", ".join(quote_for_model(label, 40) for label, _, _ in options[:8])
    more = f" … ({len(options)} in all)" if len(options) > 8 else ""
    return f"{message}; options: {shown}{more}"


_SELECTED = "(el) => Array.from(el.selectedOptions, (o) => o.value)"


async def select_option(target: Target, wanted: list[str], timeout_s: float) -> str:
    """Choose the options of a native <select> (several: a `multiple` one; they are added to those
    already selected), then read back what it holds: an option the page did not keep is an error."""
    options = target.info["options"]
    element_id = target.element_id
    if options is None:
        raise ActionError(f"{element_id} is not a <select>")
    target.require_enabled()
    if len(wanted) > 1 and not target.info["multiple"]:
        raise ActionError(f"{element_id} takes a single option, but {len(wanted)} were given")
    rect = target.info["rect"]
    if target.info["visible"] and (rect[2] < 4 or rect[3] < 4):
        # A widget library's original, kept for the form: the page shows its own widget instead.
        raise ActionError(f"{element_id} is hidden from sight (the page shows its own widget for it); "
                          "choose in the widget the page shows")
    target.require_point()
    matches = []
    for one in wanted:
        match = match_option(options, one)
        if match is None:
            raise ActionError(no_such_option(element_id, options, one))
        if match[2]:
            raise ActionError(f"option {quote_for_model(match[0])} of {element_id} is disabled")
        matches.append(match)
    values = [value for _, value, _ in matches]
    if target.info["multiple"]:
        values = [value for value in await target.evaluate(_SELECTED) if value not in values] + values
    await target.locator.select_option(value=values, timeout=timeout_s * 1000.0)
    held = await target.evaluate(_SELECTED)
    labels = {value: label for label, value, _ in options}
    lost = [label for label, value, _ in matches if value not in held]
    if lost:
        now = ", ".join(quote_for_model(labels.get(value, value), 40) for value in held) or "nothing"
        raise ActionError(
            f"{element_id} did not keep {', '.join(quote_for_model(label, 40) for label in lost)}: "
            f"the page changed it back, it holds {now}"
        )
    chosen = ", ".join(quote_for_model(label, 40) for label, _, _ in matches)
    if target.info["multiple"]:
        return f"selected {chosen} in {element_id}; it holds {', '.join(quote_for_model(labels.get(v, v), 40) for v in held)}"
    return f"selected {chosen} in {element_id}"
