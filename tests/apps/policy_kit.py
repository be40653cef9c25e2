"""Reading one page state the way a model does, for the scripted models of the real applications
(tests/apps/*_policy.py): the interactive elements of the tree, and the structure around them that a
model sees in the tree and the screenshot (a dialog's contents, a table row, a message and its link,
the tokens of a tag widget). Only what the request holds; never the application's code. Also what
those models share: reading the task's product data (or giving up on it, and on a run of failing
turns, with a reason) and logging in to a Django admin's log-in form."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from webtask_core.browser.tree_lines import marked_tree, text_lines, text_of
from webtask_core.testing.replies import Reply, ToolUse
from webtask_core.testing.request_view import TreeElement, error_streak, last_tool_results, task_json, tree_elements

__all__ = ["PageReader", "abort", "click", "quoted_text", "same_text", "product_data", "django_log_in"]


def abort(reason: str) -> Reply:
    return Reply(text=reason, tool_uses=[ToolUse("abort", {"reason": reason})])


def click(element: TreeElement, why: str) -> Reply:
    return Reply(text=why, tool_uses=[ToolUse("click", {"element_id": element.id})])


def product_data(request: dict[str, Any], required: Sequence[str], max_failed_turns: int) -> dict[str, Any] | Reply:
    """The task's ```json block, or the abort a careful model answers with: the data cannot be read,
    lacks one of `required`, or the last `max_failed_turns` replies each had a failing call."""
    try:
        data = task_json(request)
    except ValueError as exc:
        return abort(f"I cannot read the product data: {exc}")
    if not isinstance(data, dict):
        return abort("the task's ```json block is not an object")
    missing = [key for key in required if key not in data]
    if missing:
        return abort(f"the task's product data lacks {', '.join(missing)}")
    failures = error_streak(request)
    if failures >= max_failed_turns:
        errors = [text for _, is_error, text in last_tool_results(request) if is_error]
        return abort(f"the last {failures} attempts failed; last error: {errors[-1] if errors else '?'}")
    return data


def django_log_in(tree: str, elements: Sequence[TreeElement], username: str, password: str, *, site: str) -> Reply:
    """Fill a Django admin's log-in form and submit it, or abort when it refused the last try."""
    if "Please enter a correct" in tree:
        return abort(f"the {site} rejected the username or password")
    named: dict[str | None, TreeElement] = {}
    for element in elements:
        named.setdefault(element.attributes.get("name"), element)
    button = next((e for e in elements if e.attributes.get("type") == "submit"), None)
    if "username" not in named or "password" not in named or button is None:
        return abort("the log-in page has no username/password form that I can see")
    return Reply(text=f"Logging in as {username}.", tool_uses=[
        ToolUse("fill", {"element_id": named["username"].id, "text": username}),
        ToolUse("fill", {"element_id": named["password"].id, "text": password}),
        ToolUse("click", {"element_id": button.id}),
    ])


def quoted_text(line: str) -> list[str]:
    """The words of a text line (escapes undone), else nothing."""
    text = text_of(line)
    return [] if text is None else [text]


def same_text(shown: str, wanted: str) -> bool:
    """Whether a field showing `shown` holds `wanted` (line breaks aside): the tree cuts a long
    value with "…"."""
    shown, wanted = shown.replace("\n", ""), wanted.replace("\n", "")
    if shown.endswith("…"):
        return len(shown) > 1 and wanted.startswith(shown[:-1])
    return shown == wanted


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


class PageReader:
    """One element tree (`latest_page`), its lines and its interactive elements."""

    def __init__(self, tree: str) -> None:
        self.tree = tree
        self.lines = marked_tree(tree).splitlines()  # text lines as `- text: "..."`, as this kit reads them
        self.elements = tree_elements(tree)

    def named(self, name: str) -> TreeElement | None:
        """The first control whose ``name`` attribute is `name`."""
        return next((e for e in self.elements if e.attributes.get("name") == name), None)

    def button(self, text: str) -> TreeElement | None:
        return next((e for e in self.elements if e.tag == "button" and e.text == text), None)

    def link(self, text: str) -> TreeElement | None:
        return next((e for e in self.elements if e.tag == "a" and e.text == text), None)

    def shows_texts(self, *texts: str) -> bool:
        """Every one of `texts` stands as a text line of its own (a calendar's weekdays)."""
        shown = set(text_lines(self.tree))
        return all(text in shown for text in texts)

    def block(self, anchor: str) -> list[TreeElement] | None:
        """The elements nested under the first line holding `anchor` (a dialog, a list), or None
        when no line holds it."""
        start = next((i for i, line in enumerate(self.lines) if anchor in line), None)
        if start is None:
            return None
        depth = _indent(self.lines[start])
        end = next((i for i in range(start + 1, len(self.lines)) if _indent(self.lines[i]) <= depth), len(self.lines))
        return tree_elements("\n".join(self.lines[start + 1:end]))

    def link_after(self, text: str, link: str) -> TreeElement | None:
        """The first link reading `link` after the line holding `text` (a message's own link)."""
        start = next((i for i, line in enumerate(self.lines) if text in line), None)
        if start is None:
            return None
        return next((e for e in tree_elements("\n".join(self.lines[start + 1:])) if e.tag == "a" and e.text == link), None)

    def row_of(self, text: str) -> list[TreeElement]:
        """The elements of the table row holding a link that reads `text`, that link first."""
        rows: list[list[str]] = []
        for line in self.lines:
            if line.strip() == "- row":
                rows.append([])
            elif rows:
                rows[-1].append(line)
        for row in rows:
            elements = tree_elements("\n".join(row))
            found = next((e for e in elements if e.tag == "a" and e.text == text), None)
            if found is not None:
                return [found, *(e for e in elements if e is not found)]
        return []

    @staticmethod
    def tokens(lines: list[str]) -> list[tuple[str, TreeElement | None]]:
        """The tokens of a tag widget among `lines` (each list item's text, quotes left out) with
        the control right after the text that removes it (its "x"), when there is one."""
        found: list[tuple[str, TreeElement | None]] = []
        for index, line in enumerate(lines[:-1]):
            if line.strip() != "- item":
                continue
            texts = quoted_text(lines[index + 1])
            if texts:
                after = tree_elements("\n".join(lines[index + 2:index + 3]))
                found.append((texts[0].strip('"'), after[0] if after and after[0].tag == "a" else None))
        return found
