"""What the drift suite's careful seller does with the widget form (drift_widgets.py), reading only
the tree: ticks the radio labelled with the condition, types the date and closes the calendar it
opens (Escape, in the turn after it saw it open), types each tag and ends it with Enter (all in one
turn, or one per turn), and writes the description in the editor with the keyboard — the text,
Enter between paragraphs, Ctrl+B around ``**bold**`` words — or with one ``fill`` of the
markdown-like text where ``fill`` formats (issue 27). A field's meaning comes from its label, and a
"Country" select's from its section (the fieldset's legend, the heading above it)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from webtask_core.testing import ToolUse

if TYPE_CHECKING:
    from drift_model import Node

__all__ = ["section_of", "widget_calls", "editor_of", "RichText", "description_calls", "shows_calendar"]

RichText = Literal["keys", "fill"]
_EMPHASIS = re.compile(r"\*\*(.+?)\*\*")


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(":*").strip().casefold()


def section_of(node: Node) -> str:
    """The fieldset's legend around the control, or the heading before its row in its section."""
    for ancestor in node.ancestors():
        if ancestor.kind == "fieldset" and ancestor.text:
            return ancestor.text
        for sibling in ancestor.children:
            if sibling.kind in ("h2", "h3", "h4") and sibling.text:
                return sibling.text
    return ""


def _radio_label(node: Node) -> str:
    if node.element is not None and node.element.text:
        return node.element.text
    parent = node.parent
    if parent is None:
        return ""
    siblings = parent.children
    at = siblings.index(node)
    following = siblings[at + 1] if at + 1 < len(siblings) else None
    return following.text if following is not None and following.kind == "text" else ""


def shows_calendar(nodes: list[Node]) -> bool:
    """A date picker's calendar is open: a table of days (Mo Tu We ...)."""
    words = {_fold(node.text) for node in nodes}
    return {"mo", "tu", "we"} <= words or {"mon", "tue", "wed"} <= words


def editor_of(nodes: list[Node]) -> Node | None:
    """The description's rich-text editor: the editable body of an editor frame."""
    return next((node for node in nodes if node.element is not None and node.element.has("contenteditable")
                 and node.element.tag == "body"), None)


def description_calls(node: Node, text: str, rich_text: RichText) -> list[ToolUse]:
    assert node.element is not None
    if rich_text == "fill":
        return [ToolUse("fill", {"element_id": node.element.id, "text": text})]
    calls = [ToolUse("click", {"element_id": node.element.id})]
    for number, line in enumerate(text.split("\n")):
        if number:
            calls.append(ToolUse("press_key", {"key": "Enter"}))
        for index, piece in enumerate(_EMPHASIS.split(line)):
            if not piece:
                continue
            if index % 2:  # a bold phrase: Ctrl+B, the words, Ctrl+B
                calls += [ToolUse("press_key", {"key": "Control+b"}), ToolUse("type", {"text": piece}),
                          ToolUse("press_key", {"key": "Control+b"})]
            else:
                calls.append(ToolUse("type", {"text": piece}))
    return calls


def _chips(nodes: list[Node]) -> list[str]:
    """The tags the token field shows (a group of a "remove tag" control and the tag's text)."""
    found = []
    for node in nodes:
        removes = any(child.element is not None and "remove" in child.text.casefold() for child in node.children)
        if removes and node.kind == "group":
            found += [child.text for child in node.children if child.kind == "text"]
        elif removes and node.element is not None and node.text:  # one tag: the field names itself by it
            found.append(node.text)
    return found


def widget_calls(data: dict[str, Any], nodes: list[Node], scope: list[Node], *, tags_per_turn: bool,
                 rich_text: RichText, first_turn: bool,
                 date_own_turn: bool = True) -> tuple[list[ToolUse], bool, str | None]:
    """(calls, whether the form is done after them, why to abort) for the widgets: on the first
    turn the condition and the date (``date_own_turn``: and then a look at the calendar it opens),
    after it the calendar closed, the tags, the description."""
    calls: list[ToolUse] = []
    radios = [node for node in scope if node.element is not None and node.element.attributes.get("type") == "radio"]
    wanted = [node for node in radios if _fold(_radio_label(node)) == _fold(str(data["condition"]))]
    if len(wanted) != 1:
        return [], False, f"the form has no single radio for condition {data['condition']!r}"
    date = next((node for node in scope if node.element is not None and node.element.tag == "input"
                 and _fold(_label(node)) == "available from"), None)
    if date is None:
        return [], False, "the form has no 'Available from' field"
    if first_turn:
        assert wanted[0].element is not None and date.element is not None
        if not wanted[0].element.has("checked"):
            calls.append(ToolUse("check", {"element_id": wanted[0].element.id, "checked": True}))
        if date.element.attributes.get("value") != data["available"]:
            calls.append(ToolUse("fill", {"element_id": date.element.id, "text": data["available"]}))
        if date_own_turn:
            return calls, False, None  # the calendar it opens is seen on the next turn
    if shows_calendar(nodes) and not first_turn:
        calls.append(ToolUse("press_key", {"key": "Escape"}))
    field = next((node for node in scope if node.element is not None and node.element.attributes.get("role") == "textbox"
                  and node.element.has("contenteditable") and node.element.tag == "span"), None)
    if field is None or field.element is None:
        return [], False, "the form has no tag field"
    shown = _chips(nodes)
    missing = [tag for tag in data["tags"] if tag not in shown]
    if shown != data["tags"][:len(shown)]:
        return [], False, f"the tag field shows {shown}, not the start of {data['tags']}"
    for tag in missing[:1] if tags_per_turn else missing:
        calls += [ToolUse("type", {"element_id": field.element.id, "text": tag}), ToolUse("press_key", {"key": "Enter"})]
    if tags_per_turn and len(missing) > 1:
        return calls, False, None
    editor = editor_of(nodes)
    if editor is None or editor.element is None:
        # no editor (yet): a page still building it, as an editor started on a timer is; wait a moment
        # (the task's step limit ends a page that never builds one)
        return [*calls, ToolUse("wait_for", {"timeout_s": 3})], False, None
    shown = editor.element.attributes.get("value", "")
    if shown != data["description"]:
        more = description_calls(editor, data["description"], rich_text)
        if shown and rich_text == "keys":  # something is there already: replace it, not add to it
            more.insert(1, ToolUse("press_key", {"key": "Control+a"}))
        calls += more
    return calls, True, None


def _label(node: Node) -> str:
    from drift_model import label_of

    return label_of(node)
