"""Reading a Messages API request body the way a model would: only what it contains, nothing else.

Scripted policies use these to decide what to do next. The shapes follow docs/internals.md §2 (the
element tree) and §3 (what the worker sends).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "ToolResultView",
    "TreeElement",
    "latest_page",
    "latest_page_attributes",
    "latest_url",
    "task_text",
    "task_json",
    "last_tool_results",
    "resource_names",
    "page_urls",
    "error_streak",
    "tree_elements",
    "find_element",
]

# Attribute values are quoted (and `"` is escaped inside them), so a `>` in a title cannot end the tag.
_TAG_ATTRIBUTES = r'((?:\s+[A-Za-z_][\w-]*(?:="[^"]*")?)*)\s*'
_PAGE_BLOCK = re.compile(r"<page" + _TAG_ATTRIBUTES + r">(.*)</page>", re.DOTALL)
_PAGE_TAG = re.compile(r"<page" + _TAG_ATTRIBUTES + r"/?>")
_ATTRIBUTE = re.compile(r'([A-Za-z_][\w-]*)="([^"]*)"')
_TASK = re.compile(r"<task>(.*?)</task>", re.DOTALL)
_RESOURCES = re.compile(r"<resources>(.*?)</resources>", re.DOTALL)
_JSON_FENCE = re.compile(r"```json[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL)
_INTERACTIVE = re.compile(r"^(?P<indent> *)- (?P<id>(?P<tag>[a-z][a-z0-9]*)-\d+)(?=\s|$)(?P<rest>.*)$")
_STRUCTURAL = re.compile(r'^(?P<indent> *)- (?P<kind>[a-z][a-z0-9]*)\b(?P<rest>.*)$')
_PAREN_ATTRIBUTE = re.compile(r'\s*([A-Za-z_][\w:-]*)(=")?')


class ToolResultView(NamedTuple):
    tool_name: str
    is_error: bool
    text: str


@dataclass
class TreeElement:
    """One interactive line of the tree: `- input-2 (type="text" name="price" value="45") "Price"`."""

    id: str
    tag: str
    attributes: dict[str, str] = field(default_factory=dict)  # flags such as `checked` map to ""
    text: str = ""  # the quoted text(s) outside the parentheses
    label: str = ""  # text of the nearest enclosing `- label "..."` line, if any
    depth: int = 0
    line: str = ""

    def has(self, flag: str) -> bool:
        return flag in self.attributes


# ---- messages -------------------------------------------------------------------------------------


def _messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("the request has no messages")
    return messages


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content", [])
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)]


def _texts(message: dict[str, Any]) -> list[str]:
    return [block.get("text", "") for block in _blocks(message) if block.get("type") == "text"]


def _last(messages: list[dict[str, Any]], role: str, before: int | None = None) -> int | None:
    end = len(messages) if before is None else before
    for index in range(end - 1, -1, -1):
        if messages[index].get("role") == role:
            return index
    return None


def _first_user_text(request: dict[str, Any]) -> str:
    messages = _messages(request)
    first = next((m for m in messages if m.get("role") == "user"), None)
    if first is None:
        raise ValueError("the request has no user message")
    return "\n".join(_texts(first))


def _tag_attributes(raw: str) -> dict[str, str]:
    attributes = {key: html.unescape(value) for key, value in _ATTRIBUTE.findall(raw)}
    if re.search(r"\bcollapsed\b", raw):
        attributes.setdefault("collapsed", "")
    return attributes


def _latest_page_match(request: dict[str, Any]) -> re.Match[str]:
    messages = _messages(request)
    index = _last(messages, "user")
    if index is not None:
        for text in reversed(_texts(messages[index])):
            matches = list(_PAGE_BLOCK.finditer(text))
            if matches:
                return matches[-1]
    raise ValueError("the last user message has no <page ...>...</page> block")


def latest_page(request: dict[str, Any]) -> str:
    """The element tree of the current page (inside the last `<page>` block of the last user message)."""
    body = _latest_page_match(request).group(2)
    body = body[1:] if body.startswith("\n") else body
    return body[:-1] if body.endswith("\n") else body


def latest_page_attributes(request: dict[str, Any]) -> dict[str, str]:
    """The current `<page>` tag's attributes: url, title, step."""
    return _tag_attributes(_latest_page_match(request).group(1))


def latest_url(request: dict[str, Any]) -> str:
    return latest_page_attributes(request).get("url", "")


def page_urls(request: dict[str, Any]) -> list[str]:
    """The URL of every page state in the conversation, collapsed ones included, oldest first."""
    urls = []
    for message in _messages(request):
        if message.get("role") != "user":
            continue
        for text in _texts(message):
            urls += [_tag_attributes(match.group(1)).get("url", "") for match in _PAGE_TAG.finditer(text)]
    return urls


def task_text(request: dict[str, Any]) -> str:
    """The text inside the last `<task>...</task>` of the first user message, stripped."""
    matches = _TASK.findall(_first_user_text(request))
    if not matches:
        raise ValueError("the first user message has no <task>...</task> block")
    return matches[-1].strip()


def task_json(request: dict[str, Any]) -> Any:
    """The first fenced ```json block of the task, parsed."""
    match = _JSON_FENCE.search(task_text(request))
    if match is None:
        raise ValueError("the task has no ```json fenced block")
    try:
        return json.loads(match.group(1))
    except json.JSONDecodeError as exc:
        raise ValueError(f"the task's ```json block is not valid JSON: {exc}") from exc


def resource_names(request: dict[str, Any]) -> list[str]:
    """Resource names listed in `<resources>` (lines like `- listing_image_1 (image/jpeg, 84 KB)`)."""
    match = _RESOURCES.search(_first_user_text(request))
    if match is None:
        return []
    names = []
    for line in match.group(1).splitlines():
        line = line.strip()
        if line.startswith("- ") and line[2:].strip():
            names.append(line[2:].split()[0].rstrip(":,"))
    return names


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def last_tool_results(request: dict[str, Any]) -> list[ToolResultView]:
    """The tool results in the last user message, named by the tool_use they answer."""
    messages = _messages(request)
    user_index = _last(messages, "user")
    if user_index is None:
        return []
    assistant_index = _last(messages, "assistant", before=user_index)
    names: dict[str, str] = {}
    if assistant_index is not None:
        names = {b.get("id", ""): b.get("name", "") for b in _blocks(messages[assistant_index])
                 if b.get("type") == "tool_use"}
    return [
        ToolResultView(names.get(b.get("tool_use_id", ""), ""), bool(b.get("is_error", False)),
                       _result_text(b.get("content")))
        for b in _blocks(messages[user_index]) if b.get("type") == "tool_result"
    ]


def error_streak(request: dict[str, Any]) -> int:
    """How many of the latest user messages in a row carry at least one failed tool result."""
    streak = 0
    for message in reversed(_messages(request)):
        if message.get("role") != "user":
            continue
        results = [b for b in _blocks(message) if b.get("type") == "tool_result"]
        if not any(b.get("is_error") for b in results):
            break
        streak += 1
    return streak


# ---- the element tree -----------------------------------------------------------------------------


def _parse_rest(rest: str) -> tuple[dict[str, str], list[str]]:
    """Split `(type="text" name="q" checked) "Label"` into attributes and quoted texts."""
    attributes: dict[str, str] = {}
    texts: list[str] = []
    position, length = 0, len(rest)

    def quoted(start: int) -> tuple[str, int]:
        chars, index = [], start + 1
        while index < length and rest[index] != '"':
            if rest[index] == "\\" and index + 1 < length:
                index += 1
                if rest[index] == "n":  # a line break inside rich text
                    chars.append("\n")
                    index += 1
                    continue
            chars.append(rest[index])
            index += 1
        return "".join(chars), index + 1

    while position < length:
        char = rest[position]
        if char == '"':
            text, position = quoted(position)
            texts.append(text)
        elif char == "(":
            position += 1
            while position < length and rest[position] != ")":
                match = _PAREN_ATTRIBUTE.match(rest, position)
                if match is None:
                    position += 1
                    continue
                key, position = match.group(1), match.end()
                if match.group(2) == '="':
                    value, position = quoted(position - 1)
                    attributes[key] = value
                else:
                    attributes[key] = ""
            position += 1
        else:
            position += 1
    return attributes, texts


def tree_elements(tree: str) -> list[TreeElement]:
    """Every interactive line of a tree, in order, with the label of an enclosing `- label` line."""
    elements: list[TreeElement] = []
    labels: list[tuple[int, str]] = []  # (depth, text) of enclosing label lines
    for line in tree.splitlines():
        interactive = _INTERACTIVE.match(line)
        structural = None if interactive else _STRUCTURAL.match(line)
        match = interactive or structural
        if match is None:
            continue
        depth = len(match.group("indent"))  # one space per level
        while labels and labels[-1][0] >= depth:
            labels.pop()
        if interactive is None:  # then structural matched
            if structural is not None and structural.group("kind") == "label":
                _, texts = _parse_rest(structural.group("rest"))
                labels.append((depth, " ".join(texts)))
            continue
        attributes, texts = _parse_rest(interactive.group("rest"))
        elements.append(TreeElement(
            id=interactive.group("id"), tag=interactive.group("tag"), attributes=attributes,
            text=" ".join(texts), label=labels[-1][1] if labels else "", depth=depth, line=line.strip(),
        ))
    return elements


def find_element(tree: str, *, name: str | None = None, text: str | None = None, type: str | None = None,
                 tag: str | None = None) -> str | None:
    """The id of the first interactive element matching every given criterion, else None.

    `name` and `type` match the attributes exactly; `text` matches the element's own text or its
    label, ignoring case, as a substring; `tag` matches the id's prefix (`input` for `input-3`).
    """
    wanted_text = text.casefold() if text is not None else None
    for element in tree_elements(tree):
        if name is not None and element.attributes.get("name") != name:
            continue
        if type is not None and element.attributes.get("type", "").casefold() != type.casefold():
            continue
        if tag is not None and element.tag != tag:
            continue
        if wanted_text is not None and wanted_text not in element.text.casefold() \
                and wanted_text not in element.label.casefold():
            continue
        return element.id
    return None
