"""Code judges: a field as asked against what the page shows for it, format-tolerant.

- numbers by their value: ``1,234.50`` = ``1234.5``, ``$45.00`` = ``45``, ``24,50 €`` = ``24.5``;
- text by its words: case, spacing and typographic quotes aside (``Women’s`` = ``Women's``); text
  written with markdown marks (``a **grippy** sole``, ``[docs](https://...)``) agrees with the page
  showing it rendered; a text the page cut short (``…``) agrees when its start does (``shown in part``);
- yes/no fields by the words pages use for them (Yes, No, true, off, ...);
- a list field (tags) when every item is among the words shown;
- anything else the page shows for the same field (a second price, another quantity) that differs
  is a contradiction: the field does not pass — unless it is another field's value as asked (the
  listing's own sale price beside its price).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from webtask_core.readback.result import FieldCheck
from webtask_core.replay.numbers import NUMBER, as_number, readings

__all__ = ["compare_field", "compare_pictures", "expected_text", "same_value", "fold_text", "rendered_text", "TYPOGRAPHIC"]

_TRUE = frozenset({"yes", "true", "on", "checked", "ja", "oui", "si", "y", "1", "enabled"})
_FALSE = frozenset({"no", "false", "off", "unchecked", "nein", "non", "n", "0", "disabled"})
TYPOGRAPHIC = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "\u00a0": " ", "–": "-", "—": "-"})
_SPACE = re.compile(r"\s+")
_EDGE = " \"'.,:;"


# Markdown's inline marks and line marks, as a rich editor renders them (issue 27 fills markdown into
# editors): the page shows the words without the marks.
_MARKDOWN = (
    (re.compile(r"!?\[([^\]]*)\]\([^)\s]*\)"), r"\1"),  # [words](url), ![alt](src)
    (re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # **bold**, __bold__, ~~struck~~
    (re.compile(r"(?<![\w*])([*_])(?=[^\s*_])(.+?)(?<=[^\s*_])\1(?![\w*])"), r"\2"),  # *italic*, _italic_
    (re.compile(r"`([^`]+)`"), r"\1"),  # `code`
    # a line's mark: # heading, - item, 1. item, > quote
    (re.compile(r"^[ \t]{0,3}(?:#{1,6}[ \t]+|[-*+][ \t]+|\d+[.)][ \t]+|>[ \t]?)", re.MULTILINE), ""),
)


def rendered_text(text: str) -> str:
    """The words of markdown-marked text as a page shows them rendered (unmarked text is unchanged)."""
    for pattern, replacement in _MARKDOWN:
        text = pattern.sub(replacement, text)
    return text


def fold_text(text: str) -> str:
    return _SPACE.sub(" ", text.translate(TYPOGRAPHIC)).strip().casefold()


def expected_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)


def _numbers(text: str) -> list[list[Decimal]]:
    """The readings of every number written in ``text`` (``1,200`` may be 1200 or 1.2)."""
    return [[number for number, _ in readings(match.group(0))] for match in NUMBER.finditer(text)]


def same_value(expected: Any, shown: str) -> bool | None:
    """Whether ``shown`` says ``expected``; None when it cannot be read as that kind of value."""
    folded = fold_text(shown).strip(_EDGE)
    if isinstance(expected, bool):
        words = set(re.findall(r"\w+", folded))
        if words & _TRUE and not words & _FALSE:
            return expected is True
        if words & _FALSE and not words & _TRUE:
            return expected is False
        return None
    if isinstance(expected, list):
        return all(_has_words(folded, fold_text(str(item))) for item in expected)
    number = as_number(expected) if not isinstance(expected, str) else as_number(expected.strip())
    if number is not None:
        found = _numbers(folded)
        if not found:
            return None
        return number in found[0]  # the value leads: "$45.00 USD", "7 pieces"
    wanted = {fold_text(text).strip(_EDGE) for text in (str(expected), rendered_text(str(expected)))}
    if folded in wanted:
        return True
    if folded.endswith("…") and len(folded) > 1:
        return any(text.startswith(folded[:-1].rstrip()) for text in wanted)
    return False


def _has_words(text: str, words: str) -> bool:
    return bool(words) and re.search(r"(?<!\w)" + re.escape(words) + r"(?!\w)", text) is not None


def compare_field(name: str, expected: Any, shown: str | None, others: Sequence[str] = (),
                  asked_elsewhere: Sequence[Any] = ()) -> FieldCheck:
    """The verdict for one field: ``shown`` is what the page shows for it (None: nothing), ``others``
    what else it shows for the same field; ``asked_elsewhere`` the listing's other fields' values (an
    other value saying one of them is that field shown, not a contradiction)."""
    wanted = expected_text(expected)
    if shown is None or not shown.strip():
        if others:  # shown only where it is not the field's own place: still shown
            shown, others = others[0], others[1:]
        else:
            return FieldCheck(field=name, expected=wanted, verdict="not_shown")
    same = same_value(expected, shown)
    if not same:
        kind = "" if same is False else "cannot be read as the value asked"
        return FieldCheck(field=name, expected=wanted, shown=shown, verdict="mismatch", note=kind)
    contradicting = [other for other in others if other.strip() and not same_value(expected, other)
                     and not any(same_value(value, other) for value in asked_elsewhere)]
    if contradicting:
        also = ", ".join(repr(other) for other in contradicting[:3])
        return FieldCheck(field=name, expected=wanted, shown=shown, verdict="mismatch", note=f"the page also shows {also}")
    note = "shown in part" if fold_text(shown).endswith("…") else ""
    return FieldCheck(field=name, expected=wanted, shown=shown, verdict="match", note=note)


def compare_pictures(name: str, expected: Sequence[Any], shown: int | None) -> FieldCheck:
    wanted = f"{len(expected)} picture(s)"
    if shown is None or shown == 0:
        return FieldCheck(field=name, expected=wanted, verdict="not_shown")
    verdict = "match" if shown == len(expected) else "mismatch"
    return FieldCheck(field=name, expected=wanted, shown=f"{shown} picture(s)", verdict=verdict)
