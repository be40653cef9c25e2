"""A list typed one item at a time, replayed with this run's list: tags typed one by one (type,
Enter, type, Enter) are bound to the list's items (``{{param:tags[0]}}``, ``{{param:tags[1]}}``),
and the recording's run of them becomes one group of actions repeated over the list
(``ScriptAction.each``, ``{{param:tags[#]}}`` for the item of each repetition): the next item types
as many tags as it has, never the recording's count and never another item's tags.

The run may span the model's turns (one tag per turn): the group goes where its first item was
typed. A recording that names items by their place any other way (a photo into each of two slots) replays
only for a list of the recording's length (``ScriptStep.lengths``); for another, that step is the model's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from webtask_core.replay.script import ScriptAction, ScriptStep
from webtask_core.replay.templates import MissingValue

__all__ = ["item_of", "adds_an_item", "fold_repeats", "expand_repeats", "ITEM_MARK"]

_ITEM = re.compile(r"^\{\{param:(?P<name>[^}|\[\]]+)\[(?P<index>\d+)\]\}\}$")
_ANY_ITEM = re.compile(r"\{\{param:([^}|\[\]]+)\[\d+\]")
ITEM_MARK = "[#]"
# Keys that close an item in a list widget (Tagify, tag-it, Choices: Enter, Tab, a comma).
_ITEM_KEYS = re.compile(r"^(enter|return|tab|,|comma)$", re.IGNORECASE)
_TEXT_KEYS = ("text", "option")


def item_of(action: ScriptAction) -> tuple[str, int] | None:
    """(list parameter, index) when ``action`` types or picks one item of a list parameter whole."""
    for key in _TEXT_KEYS:
        value = action.input.get(key)
        match = _ITEM.match(value) if isinstance(value, str) else None
        if match is not None:
            return match["name"], int(match["index"])
    return None


def adds_an_item(previous: ScriptAction | None, action: ScriptAction) -> bool:
    """An Enter (Tab, comma) right after typing a list's item into the same field adds the item to
    a list widget: it is no submit (a changed widget no longer matches the field's fingerprint)."""
    if previous is None or action.tool != "press_key" or item_of(previous) is None:
        return False
    if not _ITEM_KEYS.match(str(action.input.get("key", "")).strip()):
        return False
    return action.element is None or previous.element is None or previous.element.same_control(action.element)


def _same_action(one: ScriptAction, other: ScriptAction, index: int | None = None) -> bool:
    """The same call, the item's index aside (``index``: the item ``other`` must type)."""
    if one.tool != other.tool or (one.element is None) != (other.element is None):
        return False
    if one.element is not None and other.element is not None and not one.element.same_control(other.element):
        return False
    if index is not None:
        mine, theirs = item_of(one), item_of(other)
        if mine is None or theirs is None or theirs != (mine[0], index):
            return False
        strip = {key: value for key, value in one.input.items() if key not in _TEXT_KEYS}
        return strip == {key: value for key, value in other.input.items() if key not in _TEXT_KEYS}
    return one.input == other.input


def fold_repeats(steps: list[ScriptStep], params: Mapping[str, Any]) -> list[ScriptStep]:
    """``steps`` with each run of a list's items typed one by one as one repeated group; steps that
    type items of a list any other way are left to the model."""
    flat = [(number, action) for number, step in enumerate(steps) for action in step.actions]
    groups: dict[int, list[ScriptAction]] = {}  # where a group starts (in flat) -> the group
    taken: set[int] = set()
    at = 0
    while at < len(flat):
        found = item_of(flat[at][1])
        if found is None or found[1] != 0 or not isinstance(params.get(found[0]), list):
            at += 1
            continue
        name, count = found[0], len(params[found[0]])
        block = _block(flat, at, name, count)
        if block is None:
            at += 1
            continue
        groups[at] = [action.model_copy(update={"each": name, "input": _with_mark(action.input)}) for action in block]
        taken.update(range(at, at + len(block) * count))
        at += len(block) * count
    if not taken:
        return _unrepeatable(steps, params)
    out: list[ScriptStep] = []
    for number, step in enumerate(steps):
        kept: list[ScriptAction] = []
        for index, (owner, action) in enumerate(flat):
            if owner != number:
                continue
            kept += groups.get(index, [])
            if index not in taken:
                kept.append(action)
        if not kept:
            continue
        updated = step.model_copy(update={"actions": kept})
        if step.commit is not None and not any(action.commit for action in kept):
            updated = updated.model_copy(update={"commit": None})
        out.append(updated)
    return _unrepeatable(out, params)


def _block(flat: list[tuple[int, ScriptAction]], at: int, name: str, count: int) -> list[ScriptAction] | None:
    """The actions typing item 0 and closing it (Enter), when items 1..count-1 follow the same way."""
    first = flat[at][1]
    if count > 1:
        nxt = next((index for index in range(at + 1, min(at + 5, len(flat))) if item_of(flat[index][1]) == (name, 1)),
                   None)
        if nxt is None:
            return None
        block = [action for _, action in flat[at:nxt]]
    else:  # a list of one: the key that closed it, if one did
        block = [first]
        if at + 1 < len(flat) and adds_an_item(first, flat[at + 1][1]):
            block.append(flat[at + 1][1])
    size = len(block)
    if at + size * count > len(flat):
        return None
    for index in range(1, count):
        start = at + index * size
        candidate = [action for _, action in flat[start:start + size]]
        if not _same_action(first, candidate[0], index):
            return None
        if not all(_same_action(mine, theirs) for mine, theirs in zip(block[1:], candidate[1:])):
            return None
    return [action.model_copy(update={"commit": False}) if action.tool == "press_key" else action for action in block]


def _with_mark(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _with_mark(item) for key, item in value.items()}
    if isinstance(value, str):
        return re.sub(r"(\{\{param:[^}|\[\]]+)\[\d+\]", lambda match: match.group(1) + ITEM_MARK, value)
    return value


def _unrepeatable(steps: list[ScriptStep], params: Mapping[str, Any]) -> list[ScriptStep]:
    """Steps still naming a list's items by their place (not as a repeat: a photo into each of two
    slots) replay only for a list of the recording's length; for another, the model's."""
    out = []
    for step in steps:
        names = {match.group(1) for action in step.actions if action.each is None
                 for match in _ANY_ITEM.finditer(str(action.input))}
        lengths = {name: len(params[name]) for name in sorted(names) if isinstance(params.get(name), list)}
        if lengths:
            step = step.model_copy(update={"lengths": {**step.lengths, **lengths}})
        out.append(step)
    return out


def expand_repeats(actions: list[ScriptAction], params: Mapping[str, Any]) -> list[ScriptAction]:
    """The actions to run: each repeated group once per item of this run's list (none for an empty
    list); :class:`MissingValue` when the run has no such list."""
    out: list[ScriptAction] = []
    at = 0
    while at < len(actions):
        name = actions[at].each
        if name is None:
            out.append(actions[at])
            at += 1
            continue
        end = at
        while end < len(actions) and actions[end].each == name:
            end += 1
        items = params.get(name)
        if not isinstance(items, list):
            raise MissingValue(f"the script repeats steps over the list {name!r}, which this run does not have as a list")
        for index in range(len(items)):
            out += [action.model_copy(update={"input": _indexed(action.input, index)}) for action in actions[at:end]]
        at = end
    return out


def _indexed(value: Any, index: int) -> Any:
    if isinstance(value, dict):
        return {key: _indexed(item, index) for key, item in value.items()}
    if isinstance(value, str):
        return value.replace(ITEM_MARK + "}}", f"[{index}]}}}}").replace(ITEM_MARK + "|", f"[{index}]|")
    return value
