"""The listing page's lines kept as templates of the run's values, to read it back in code.

Recorded once from a page the model read and code found as asked (the run that recorded or
repaired a replay script): each line that shows a field becomes a template, ``{{param:price}}``,
``Quantity`` / ``{{param:quantity}}``, ``“{{param:title}}” is live at {{param:price|num:2}}.``, and
the other lines stay as they were (the site's own words). A line stands for a field only where a
person would read it so: after the label the model read for it, as ``Label: value``, as a heading or
an amount on its own when the field has no label, or inside a sentence that holds a long value (a
title). Pictures are counted: the page's ``img`` lines less those that are the site's own.

Checking a later page: its fixed lines are aligned with the recording's (difflib); between two fixed
lines, each template is paired with a line of the same kind, after the same label, of the same
shape, and the values it holds are compared with this run's (:mod:`webtask_core.readback.compare`).
A line the page added that has a field's label or shape is a contradiction (a second price). When
the page no longer fits — its fixed lines changed, a template finds no line, or the only evidence of
a difference is a bare line with no label — the check is inconclusive and the caller reads the page
with the model instead.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from difflib import SequenceMatcher
from itertools import pairwise
from typing import Any

from pydantic import BaseModel, Field

from webtask_core.readback.compare import TYPOGRAPHIC, compare_field, compare_pictures, fold_text, same_value
from webtask_core.readback.page import PageLine, picture_count
from webtask_core.readback.result import FieldCheck
from webtask_core.readback.spec import ReadBack
from webtask_core.replay.binding import Binding, template_text
from webtask_core.replay.folding import label_words
from webtask_core.replay.numbers import NUMBER, as_number, weak_number

__all__ = ["LineTemplate", "PageTemplates", "TEMPLATES_SCHEMA_VERSION", "record_templates", "check_templates",
           "Inconclusive", "FieldReading"]

TEMPLATES_SCHEMA_VERSION = 1
_PLACEHOLDER = re.compile(r"\{\{param:([^}|]+)(?:\|[^}]*)?\}\}")
_LONG_CHARS = 12  # a text value this long is the listing's wherever it appears
_FIXED_SHARE = 0.5  # at least this share of the recorded fixed lines must be found again
_AMOUNT = re.compile(r"^[^\w]*(?:[A-Z]{3}\s*)?[^\w]*$")  # what is left of an amount without its number
_TEXTISH = frozenset({"text", "status", "alert", "label"})


class FieldReading(BaseModel):
    """What a reading of the page (the model's) says about one field."""

    shown: str | None = None
    label: str | None = None  # the words the page labels it with; None: it stands alone (a heading)
    others: list[str] = Field(default_factory=list)  # other values shown for the same field


class Inconclusive(Exception):
    """The page no longer fits the templates: read it with the model instead."""


class LineTemplate(BaseModel):
    text: str  # the line as a template, or as it was (a fixed line)
    kind: str
    label: str = ""  # folded: the label line just before it, for a labelled field's value
    weak: bool = False  # a bare line with no label: a difference it shows is not proof on its own
    amount: bool = False  # a number standing alone (a price with no label): only amounts take its place

    @property
    def fields(self) -> list[str]:
        return _PLACEHOLDER.findall(self.text)

    def shape(self) -> re.Pattern[str]:
        """The line with any value where the placeholders are: case, spacing and quotes aside."""
        literal = [_literal_pattern(part) for part in _PLACEHOLDER.split(self.text)[0::2]]
        return re.compile("(.+?)".join(literal), re.IGNORECASE | re.DOTALL)


class PageTemplates(BaseModel):
    schema_version: int = TEMPLATES_SCHEMA_VERSION
    key: str = ""
    lines: list[LineTemplate]
    fields: list[str]  # the fields the page showed (any other is "not shown")
    pictures_fixed: int | None = None  # img lines that are the site's own; None: no pictures shown
    recorded_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    source: str = ""


def _literal_pattern(part: str) -> str:
    words = part.translate(TYPOGRAPHIC).split()
    return r"\s*" + r"\s+".join(re.escape(word) for word in words) + (r"\s*" if words else "")


def _label_key(text: str) -> str:
    return fold_text(text).rstrip(":*").strip()


def _is_amount(text: str) -> bool:
    found = list(NUMBER.finditer(text))
    return len(found) == 1 and bool(_AMOUNT.match(text[: found[0].start()] + text[found[0].end():]))


def _numeric(value: Any) -> bool:
    return not isinstance(value, (bool, list)) and as_number(value if not isinstance(value, str) else value.strip()) is not None


def _strong_number(value: Any) -> bool:
    """A number that cannot be a page's fixed count by chance (not 1 to 9)."""
    number = as_number(value.strip() if isinstance(value, str) else value) if _numeric(value) else None
    return number is not None and not weak_number(number)


def _placeholder(name: str) -> str:
    return "{{param:" + name + "}}"


def _line_template(line: PageLine, previous: PageLine | None, expected: dict[str, Any],
                   reading: dict[str, FieldReading]) -> LineTemplate:
    """The template of one line: a field's value where a person reads it as that field, else fixed."""
    fixed = LineTemplate(text=line.text, kind=line.kind)
    if line.interactive and line.kind != "value":
        return fixed  # a link's or button's words are the site's own
    for name, value in expected.items():
        label = reading[name].label
        if not label:
            continue
        key = _label_key(label)
        if previous is not None and _label_key(previous.text) == key and same_value(value, line.text):
            return LineTemplate(text=_placeholder(name), kind=line.kind, label=key)
        head, colon, rest = line.text.partition(":")
        if colon and _label_key(head) == key and same_value(value, rest):
            return LineTemplate(text=head + colon + " " + _placeholder(name), kind=line.kind)
    for name, value in expected.items():
        if reading[name].label or not same_value(value, line.text):
            continue
        if line.is_heading and not _numeric(value):
            return LineTemplate(text=_placeholder(name), kind=line.kind)
        if _strong_number(value) and _is_amount(line.text):
            return LineTemplate(text=_placeholder(name), kind=line.kind, amount=True)
    long = {name: value for name, value in expected.items()
            if isinstance(value, str) and not _numeric(value) and len(value.strip()) >= _LONG_CHARS
            and fold_text(value) in fold_text(line.text)}
    if long:
        params = {**{name: value for name, value in expected.items() if _strong_number(value)}, **long}
        text = template_text(line.text, Binding(params, label_words(*params), strict=False))
        if _PLACEHOLDER.search(text):
            return LineTemplate(text=text, kind=line.kind, weak=not _PLACEHOLDER.sub("", text).strip())
    return fixed


def record_templates(lines: list[PageLine], spec: ReadBack, reading: dict[str, FieldReading],
                     checks: list[FieldCheck], pictures: int | None, *, key: str = "",
                     source: str = "") -> PageTemplates:
    """Templates of a page the model read and code found as asked (``checks`` all passed).
    Raises Inconclusive when a field the model read cannot be kept as a template."""
    shown = {check.field for check in checks if check.verdict == "match"}
    expected = {name: value for name, value in spec.expected.items() if name in shown}
    kept: list[LineTemplate] = []
    previous: PageLine | None = None
    for line in (line for line in lines if line.kind != "img"):
        kept.append(_line_template(line, previous, expected, reading))
        previous = line
    bound = {name for template in kept for name in template.fields}
    missing = sorted(set(expected) - bound)
    if missing:
        raise Inconclusive(f"the page shows {', '.join(missing)} where no line can be kept as a template")
    fixed = picture_count(lines) - pictures if spec.picture_field and pictures else None
    templates = PageTemplates(key=key, lines=kept, fields=sorted(bound), pictures_fixed=fixed, source=source)
    again = check_templates(templates, lines, spec)  # the recording must read its own page as it was read
    wrong = [check.describe() for check in again if check.field in shown and check.verdict != "match"]
    if wrong:
        raise Inconclusive(f"the templates do not read the page they came from: {wrong[0]}")
    return templates


def _fits(template: LineTemplate, lines: list[PageLine], index: int) -> list[str] | None:
    """The values the line at ``index`` holds where the template has placeholders, or None when it
    is not a line of the template's kind, label and shape."""
    line = lines[index]
    same_kind = line.kind == template.kind or (line.kind in _TEXTISH and template.kind in _TEXTISH)
    if not same_kind or (template.amount and not _is_amount(line.text)):
        return None
    if template.label and (index == 0 or _label_key(lines[index - 1].text) != template.label):
        return None
    match = template.shape().fullmatch(line.text.translate(TYPOGRAPHIC).strip())
    return list(match.groups()) if match is not None else None


def check_templates(templates: PageTemplates, lines: list[PageLine], spec: ReadBack) -> list[FieldCheck]:
    """Each field as the page shows it now, judged in code; Inconclusive when the page no longer
    fits the templates (the caller then reads it with the model)."""
    current = [line for line in lines if line.kind != "img"]
    recorded = templates.lines
    sentinel = [fold_text(t.text) if not t.fields else f"\x00{index}" for index, t in enumerate(recorded)]
    matcher = SequenceMatcher(None, sentinel, [fold_text(line.text) for line in current], autojunk=False)
    anchors = [(i + k, j + k) for i, j, size in matcher.get_matching_blocks() for k in range(size)]
    fixed_total = sum(1 for template in recorded if not template.fields)
    if fixed_total and len(anchors) < _FIXED_SHARE * fixed_total:
        raise Inconclusive(f"the page's fixed lines changed ({len(anchors)} of {fixed_total} found)")
    shown: dict[str, list[str]] = {}
    weak_only: dict[str, bool] = {}
    inserted: list[int] = []
    bounds = [(-1, -1), *anchors, (len(recorded), len(current))]
    for (start_t, start_l), (end_t, end_l) in pairwise(bounds):
        free = list(range(start_l + 1, end_l))
        for template in (t for t in recorded[start_t + 1:end_t] if t.fields):
            paired = _pair(template, current, free, spec)
            if paired is None:
                raise Inconclusive(f"the page no longer shows a line like {template.text[:80]!r}")
            index, values = paired
            free.remove(index)
            for name, value in zip(template.fields, values):
                shown.setdefault(name, []).append(value)
                weak_only[name] = weak_only.get(name, True) and template.weak
        inserted += free
    others = _contradictions(recorded, current, inserted)
    checks = []
    for name, value in spec.expected.items():
        if name not in templates.fields:
            checks.append(compare_field(name, value, None))
            continue
        values = shown.get(name, [])
        check = compare_field(name, value, values[0] if values else None, [*values[1:], *others.get(name, [])],
                              spec.asked_besides(name))
        if check.verdict == "mismatch" and weak_only.get(name) and not others.get(name):
            raise Inconclusive(f"{name} differs only on a line with no label: {check.describe()}")
        checks.append(check)
    if spec.picture_field:
        checks.append(_pictures(templates, lines, spec))
    return checks


def _pair(template: LineTemplate, lines: list[PageLine], free: list[int],
          spec: ReadBack) -> tuple[int, list[str]] | None:
    """The free line the template stands for: one showing this run's values if there is one (a line
    the page added must not take its place), else the first of its shape."""
    first = None
    for index in free:
        values = _fits(template, lines, index)
        if values is None:
            continue
        if all(same_value(spec.fields.get(name), value) for name, value in zip(template.fields, values)):
            return index, values
        if first is None:
            first = (index, values)
    return first


def _contradictions(recorded: list[LineTemplate], lines: list[PageLine], inserted: list[int]) -> dict[str, list[str]]:
    """What lines the page added say for a field: after its label, or in the shape of its line."""
    found: dict[str, list[str]] = {}
    telling = [t for t in recorded if t.fields and (t.label or t.amount or (not t.weak and t.text != _placeholder(t.fields[0])))]
    for index in inserted:
        for template in telling:
            values = _fits(template, lines, index)
            if values is not None:
                for name, value in zip(template.fields, values):
                    found.setdefault(name, []).append(value)
                break
    return found


def _pictures(templates: PageTemplates, lines: list[PageLine], spec: ReadBack) -> FieldCheck:
    name = spec.picture_field
    assert name is not None
    wanted = spec.fields[name]
    if templates.pictures_fixed is None:
        return compare_pictures(name, wanted, None)
    count = picture_count(lines) - templates.pictures_fixed
    check = compare_pictures(name, wanted, max(count, 0))
    if check.verdict == "not_shown":  # the recorded page showed them: none now is a difference
        return FieldCheck(field=name, expected=check.expected, shown="0 picture(s)", verdict="mismatch")
    return check
