"""The offline kit's reader: answers a read-back request (``report_listing``) the way a model would,
from the request alone — the fields it names and the page's element tree — never from the site.

For each field it looks for the words a page labels it with (the request's hint, or the field's
name): a line of those words followed by the value (``Category`` / ``Bags``, a table's ``Price:`` /
``61.00``), or one line ``Label: value``; a title with no label is the page's first ``h1``, a price
with no label the first amount with a currency sign. Other values found for the same field are
``others``; the pictures are the ``img`` lines in the part of the page that holds the heading.
:class:`~webtask_core.testing.FakeLLM` and the fake server answer read-back requests with it unless
they are given ``reader=None`` (then the policy answers them) or a reader of their own.
"""

from __future__ import annotations

import json
import re
from typing import Any

from webtask_core.browser.tree_lines import marked_line
from webtask_core.readback.compare import fold_text
from webtask_core.readback.page import PageLine, page_lines
from webtask_core.readback.reader import PICTURES_HINT, READ_TOOL
from webtask_core.replay.numbers import NUMBER

from .replies import Reply, ToolUse
from .request_view import latest_page

__all__ = ["ListingPageReader", "is_read_back"]

_FIELDS = re.compile(r"<fields>\s*(.*?)\s*</fields>", re.DOTALL)
_TITLE_NAMES = ("title", "name", "headline")
_CURRENCY = re.compile(r"[$€£¥]|\b(?:USD|EUR|GBP)\b")
_LINE = re.compile(r"^(?P<indent> *)- (?P<rest>.*)$")


def is_read_back(request: dict[str, Any]) -> bool:
    choice = request.get("tool_choice")
    return isinstance(choice, dict) and choice.get("name") == READ_TOOL


def _fields(request: dict[str, Any]) -> dict[str, str]:
    for message in reversed(request.get("messages", [])):
        for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
            found = _FIELDS.search(block.get("text", "")) if isinstance(block, dict) else None
            if found:
                return json.loads(found.group(1))
    raise ValueError("the read-back request has no <fields> block")


def _key(text: str) -> str:
    return fold_text(text).rstrip(":*").strip()


def _is_amount(text: str) -> bool:
    return bool(_CURRENCY.search(text)) and len(NUMBER.findall(text)) == 1


class ListingPageReader:
    """A policy for read-back requests (see the module docstring)."""

    def __call__(self, request: dict[str, Any]) -> Reply:
        hints = _fields(request)
        tree = latest_page(request)
        lines = [line for line in page_lines(tree) if line.kind != "img"]
        fields = {name: self._field(name, hint, lines) for name, hint in hints.items() if hint != PICTURES_HINT}
        pictures = _pictures(tree) if PICTURES_HINT in hints.values() else None
        report = {"fields": fields, "pictures": pictures or None}
        return Reply(text="Reading the page.", tool_uses=[ToolUse(READ_TOOL, report)])

    @staticmethod
    def _field(name: str, hint: str, lines: list[PageLine]) -> dict[str, Any]:
        words = {_key(hint), _key(name.replace("_", " "))}
        found: list[str] = []
        label = None
        for index, line in enumerate(lines):
            if line.interactive and line.kind != "value":
                continue
            head, colon, rest = line.text.partition(":")
            if _key(line.text) in words and index + 1 < len(lines):
                value = lines[index + 1]
                if not (value.interactive and value.kind != "value") and _key(value.text) not in words:
                    found.append(value.text)
                    label = label or line.text.rstrip(":* ")
            elif colon and rest.strip() and _key(head) in words:
                found.append(rest.strip())
                label = label or head.strip()
        if not found and (name in _TITLE_NAMES or _key(hint) in _TITLE_NAMES):
            found = [line.text for line in lines if line.kind == "h1"][:1]
        if not found and "price" in words | {name}:
            found = [line.text for line in lines if not line.interactive and _is_amount(line.text)]
        others = [value for value in dict.fromkeys(found[1:]) if _key(value) != _key(found[0])]
        return {"shown": found[0] if found else None, "label": label, "others": others}


def _pictures(tree: str) -> int:
    """The ``img`` lines in the top-level part of the page holding its first ``h1`` (else all)."""
    blocks: list[list[str]] = []
    for raw in tree.splitlines():
        match = _LINE.match(marked_line(raw))
        if match is None:
            continue
        if not match.group("indent") or not blocks:
            blocks.append([])
        blocks[-1].append(match.group("rest"))
    for block in blocks:
        if any(rest.startswith("h1 ") for rest in block):
            return sum(1 for rest in block if rest.startswith("img"))
    return sum(1 for block in blocks for rest in block if rest.startswith("img"))
