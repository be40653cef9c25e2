"""A listing's page as the lines a person reads on it, taken from the element tree the model sees
(docs/internals.md §2): headings, text runs, a status, a picture's alt text, a link's or a button's
words, a field's label followed by its value. The read-back compares these lines, never the HTML."""

from __future__ import annotations

import re
from dataclasses import dataclass

from webtask_core.browser.tree_lines import marked_line

__all__ = ["PageLine", "page_lines", "picture_count", "HEADINGS"]

HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Structural lines whose quoted text is something the page says (not a container's name).
_SAYING = HEADINGS | {"status", "alert", "img", "label"}
_LINE = re.compile(r"^(?P<indent> *)- (?P<rest>.*)$")
_ELEMENT = re.compile(r"^(?P<tag>[a-z][a-z0-9]*)-\d+(?=\s|$)")
_KIND = re.compile(r"^(?P<kind>[a-z][a-z0-9]*)\b")
_ESCAPES = {"n": " ", '"': '"', "\\": "\\"}
_FIELDS = frozenset({"input", "select", "textarea", "div", "span", "body", "p"})  # what may hold a value
_NOT_VALUES = frozenset({"submit", "button", "reset", "hidden", "file", "image", "checkbox", "radio"})


@dataclass(frozen=True)
class PageLine:
    kind: str  # "text", a heading ("h1"), "status", "alert", "img", "label", an element's tag, or "value"
    text: str
    interactive: bool = False  # a link, button or field of the page: its words are the site's own

    @property
    def is_heading(self) -> bool:
        return self.kind in HEADINGS


def _quoted(text: str, start: int) -> tuple[str, int]:
    """The string quoted at ``text[start]`` (``"``), unescaped, and where it ends."""
    out, index = [], start + 1
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            out.append(_ESCAPES.get(text[index + 1], text[index + 1]))
            index += 2
            continue
        if char == '"':
            return "".join(out), index + 1
        out.append(char)
        index += 1
    return "".join(out), index


def _element(rest: str, tag: str) -> list[PageLine]:
    """An element's words (outside its parentheses) and, for a field, its value after them."""
    attributes: dict[str, str] = {}
    index, depth, texts = len(tag), 0, []
    while index < len(rest):
        char = rest[index]
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char == '"':
            value, end = _quoted(rest, index)
            if depth:
                key = re.search(r"([A-Za-z_][\w:-]*)=$", rest[:index])
                if key:
                    attributes[key.group(1)] = value
            else:
                texts.append(value)
            index = end
            continue
        index += 1
    value = attributes.get("value", "")
    if value.strip() and tag in _FIELDS and attributes.get("type") not in _NOT_VALUES:
        # A field that holds a value (an edit form shows the listing so): its label, then its value.
        return [*(PageLine("label", text) for text in texts if text.strip()), PageLine("value", value, interactive=True)]
    return [PageLine(tag, text, interactive=True) for text in texts if text.strip()]


def page_lines(tree: str) -> list[PageLine]:
    """Every line of the tree that says something, in page order."""
    lines: list[PageLine] = []
    for raw in tree.splitlines():
        match = _LINE.match(marked_line(raw))
        if match is None:
            continue
        rest = match.group("rest")
        if rest.startswith("text: "):
            text, _ = _quoted(rest, len("text: "))
            if text.strip():
                lines.append(PageLine("text", text))
            continue
        element = _ELEMENT.match(rest)
        if element is not None:
            lines.extend(_element(rest, element.group("tag")))
            continue
        kind = _KIND.match(rest)
        if kind is not None and kind.group("kind") in _SAYING and '"' in rest:
            text, _ = _quoted(rest, rest.index('"'))
            if text.strip():
                lines.append(PageLine(kind.group("kind"), text))
    return lines


def picture_count(lines: list[PageLine]) -> int:
    return sum(1 for line in lines if line.kind == "img")
