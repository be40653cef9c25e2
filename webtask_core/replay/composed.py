"""A value the model composed with the keyboard, recognised by what the editor shows afterwards.

A model writing rich text types it in pieces — the text, Ctrl+B, the bold phrase, Ctrl+B, the rest —
and no piece is a parameter. The editor's value, as the tree writes it (markdown-like:
``Light **trail** shoe.``), is: when it equals a parameter (or holds parameters and nothing the
model made up), the pieces were one act, and they are kept as one ``fill`` of the editor with the
parameter, which the next item's run types with its own value. ``fill`` writes formatting only
where the fill tool types markdown-like text with the editor's own shortcuts
(``FillTool.RICH_TEXT_FILL``); elsewhere a formatted value stays the model's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from webtask_core.replay.binding import Binding, completed, template_text
from webtask_core.replay.folding import label_words
from webtask_core.replay.script import ScriptAction
from webtask_core.replay.templates import ELEMENT

if TYPE_CHECKING:
    from webtask_core.replay.signature import ElementFingerprint, PageView

__all__ = ["compose", "MARKDOWN"]

# What the tree writes for formatting (docs/internals.md §2): a value holding it needs a rich fill.
MARKDOWN = re.compile(r"\*\*|(?<!\w)\*\S|__|~~|`|^#{1,6} |^\s*(?:- |\d+\. |> )|\]\(", re.MULTILINE)
_KEYS = ("type", "press_key")


def _same(one: ElementFingerprint | None, other: ElementFingerprint | None) -> bool:
    return one is None or other is None or one.same_control(other)


def compose(actions: list[ScriptAction], problems: list[str | None], after: PageView, params: Mapping[str, Any],
            files: Sequence[str] = (), *, rich_fill: bool = False) -> tuple[list[ScriptAction], list[str | None]] | None:
    """``actions`` with their last run of keystrokes into an editor kept as one bound ``fill``, when
    the editor now (``after``) shows a value made of parameters; None when they are not that."""
    editor: ElementFingerprint | None = None
    start = len(actions)
    typed = 0
    for index in range(len(actions) - 1, -1, -1):
        action = actions[index]
        if action.tool in _KEYS and _same(editor, action.element):
            typed += action.tool == "type"
            editor = editor or action.element
        elif action.tool in ("click", "fill") and action.element is not None and _same(editor, action.element):
            editor = action.element
            typed += action.tool == "fill"
            start = index
            break
        else:
            break
        start = index
    run = range(start, len(actions))
    if editor is None or typed < 1 or len(run) < 2 or not any(problems[index] for index in run):
        return None
    found, _ = after.resolve(editor)
    element = after.observation.elements.get(found) if found is not None else None
    if element is None or "value" not in element.attributes:
        return None
    value = element.attributes["value"]
    if value.endswith("…"):  # cut by the tree: the one text parameter it is the start of
        name = completed(value[:-1], params)
        value = str(params[name]) if name is not None else value
    if MARKDOWN.search(value) and not rich_fill:
        return None  # the fill tool would type the marks as text
    binding = Binding(params, label_words(element.text, element.name), strict=True, files=files)
    bound = template_text(value, binding)
    if binding.problem is not None or "{{param:" not in bound:
        return None
    fill = ScriptAction(tool="fill", input={"element_id": ELEMENT, "text": bound}, element=editor)
    return [*actions[:start], fill], [*problems[:start], None]

