"""Model replies that are wrong in every way a model (or a proxy) can get them wrong, made reproducibly.

    replies = malformed_replies(200, seed=7)     # list[Reply], kinds in turn, details from the seed

Each reply must end as an error the model sees (a failed or refused tool call, or the note that a
reply needs a tool call), never as an action on the page: no valid navigation, typing, key press or
ending is ever generated. Feed them through ReplayPolicy, or ahead of a real policy (see
``webtask_core.testing.fault_suite``), and check the worker neither crashes nor records them twice.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from .replies import Reply, ToolUse

__all__ = ["MALFORMED_KINDS", "malformed_replies"]

_NO_SUCH_IDS = ["button-9999", "input-88888", "a-777777", "select-4242", "span-99999999999999999999"]
_NOT_IDS = ["", " ", "input-0 ", "BUTTON-1", "a-1-2", "#submit", "//button[1]", "button-1; drop table x",
            "button_1", "1-button", "ボタン-1", "button-１"]
_TOOL_PARAMETERS: dict[str, dict[str, object]] = {
    "navigate": {"url": "https://shop.example.com/"},
    "click": {"element_id": "button-9999"},
    "fill": {"element_id": "input-9999", "text": "hello"},
    "type": {"text": "hello", "element_id": "input-9999"},
    "select_option": {"element_id": "select-9999", "option": "Shoes"},
    "check": {"element_id": "input-9999", "checked": True},
    "press_key": {"key": "Enter", "element_id": "input-9999"},
    "scroll": {"direction": "down", "amount": 1.0},
    "hover": {"element_id": "a-9999"},
    "switch_tab": {"tab_index": 0},
    "wait_for": {"text": "never on the page", "timeout_s": 0.2},
    "upload": {"element_id": "input-9999", "resources": ["listing_image_1"]},
    "drag": {"element_id": "li-9999", "to_element_id": "li-9998"},
    "complete": {"feedback": "done"},
    "abort": {"reason": "giving up"},
}
_REQUIRED = {
    "navigate": ["url"], "click": ["element_id"], "fill": ["element_id", "text"], "type": ["text"],
    "select_option": ["element_id", "option"], "check": ["element_id"], "press_key": ["key"],
    "scroll": ["direction"], "hover": ["element_id"], "switch_tab": ["tab_index"],
    "upload": ["element_id", "resources"], "drag": ["element_id"], "complete": ["feedback"], "abort": ["reason"],
}
# Values of the wrong type for each parameter (none that pydantic would coerce into a valid one).
_WRONG_TYPES: dict[str, list[object]] = {
    "url": [123, None, {"href": "https://x/"}, ["https://x/"]],
    "element_id": [17, None, ["button-1"], {"id": "button-1"}, True],
    "text": [42, None, ["a"], {"value": "a"}],
    "option": [3.5, None, {"label": "Shoes"}, [1, 2]],
    "to_element_id": [17, ["li-1"], {"id": "li-1"}, True],
    "checked": ["maybe", [1], {"on": True}, "definitely"],
    "key": [13, None, ["Enter"]],
    "direction": ["left", "UP", 3, None, "sideways"],
    "amount": ["lots", -5, 0, 1e9],
    "tab_index": ["first", -1, 1.5, None],
    "timeout_s": ["soon", -1, 1000, 0],
    "resources": ["listing_image_1", [1, 2], {"a": "b"}, []],
    "feedback": [42, None, ["done"]],
    "reason": [0, None, {"why": "x"}],
}
_UNKNOWN_TOOLS = ["browse", "click_element", "Navigate", "fill ", "", "tool/../x", "クリック", "submit_form",
                  "complete_task", "computer", "bash", "str_replace_based_edit_tool", "NAVIGATE", "click\n"]
_BAD_VALUES: list[tuple[str, dict[str, object]]] = [
    ("navigate", {"url": "file:///etc/passwd"}),
    ("navigate", {"url": "javascript:alert(document.cookie)"}),
    ("navigate", {"url": "chrome://settings"}),
    ("navigate", {"url": "ftp://files.example.com/"}),
    ("navigate", {"url": "data:text/html,<h1>hi</h1>"}),
    ("navigate", {"url": "not a url at all"}),
    ("navigate", {"url": "http://"}),
    ("scroll", {"direction": "down", "amount": 11}),
    ("wait_for", {"timeout_s": -1}),  # (with neither text nor element it waits for the page to settle)
    ("wait_for", {"text": "x", "element_id": "button-1"}),
    ("wait_for", {"text": "never on the page", "timeout_s": 16}),
    ("switch_tab", {"tab_index": 99}),
    ("upload", {"element_id": "input-9999", "resources": ["../../etc/passwd"]}),
    ("upload", {"element_id": "input-9999", "resources": ["no_such_resource"]}),
    ("select_option", {"element_id": "select-9999", "option": ""}),
    ("set_output", {"listing_url": 5, "sku": ["x"]}),
    ("set_output", {}),
    ("set_output", {"not_a_field": True}),
]

MALFORMED_KINDS = (
    "unknown_tool", "missing_parameter", "wrong_type", "huge_string", "not_an_object", "empty",
    "no_tool_call", "unknown_element", "extra_parameter", "bad_value", "duplicate_ids", "bad_call_id",
    "mixed",
)


def malformed_replies(count: int, *, seed: int = 0, huge_chars: int = 50_000) -> list[Reply]:
    """``count`` replies, each wrong in one way; the kinds take turns, the details come from ``seed``."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    rng = random.Random(seed)
    makers: dict[str, Callable[[random.Random, int], Reply]] = {
        "unknown_tool": _unknown_tool, "missing_parameter": _missing_parameter, "wrong_type": _wrong_type,
        "huge_string": _huge_string, "not_an_object": _not_an_object, "empty": _empty,
        "no_tool_call": _no_tool_call, "unknown_element": _unknown_element, "extra_parameter": _extra_parameter,
        "bad_value": _bad_value, "duplicate_ids": _duplicate_ids, "bad_call_id": _bad_call_id, "mixed": _mixed,
    }
    start = rng.randrange(len(MALFORMED_KINDS))
    return [
        makers[MALFORMED_KINDS[(start + number) % len(MALFORMED_KINDS)]](rng, huge_chars) for number in range(count)
    ]


def _call(name: str, tool_input: object, call_id: str | None = None) -> Reply:
    return Reply(text="", tool_uses=[ToolUse(name, tool_input, call_id)])


def _unknown_tool(rng: random.Random, huge: int) -> Reply:
    name = rng.choice([*_UNKNOWN_TOOLS, "x" * rng.choice([65, 300])])
    return _call(name, rng.choice([{}, {"element_id": "button-1"}, {"url": "https://evil.example/"}]))


def _missing_parameter(rng: random.Random, huge: int) -> Reply:
    tool = rng.choice(sorted(_REQUIRED))
    parameters = dict(_TOOL_PARAMETERS[tool])
    for name in rng.sample(_REQUIRED[tool], rng.randint(1, len(_REQUIRED[tool]))):
        parameters.pop(name, None)
    return _call(tool, parameters)


def _wrong_type(rng: random.Random, huge: int) -> Reply:
    tool = rng.choice(sorted(_TOOL_PARAMETERS))
    parameters = dict(_TOOL_PARAMETERS[tool])
    name = rng.choice([p for p in parameters if p in _WRONG_TYPES])
    choices = _WRONG_TYPES[name]
    if name not in _REQUIRED.get(tool, []):
        # An optional parameter set to null is simply absent, and the call might be valid: not that.
        choices = [value for value in choices if value is not None]
    parameters[name] = rng.choice(choices)
    return _call(tool, parameters)


def _huge_string(rng: random.Random, huge: int) -> Reply:
    filler = "".join(rng.choice("abcdefghij κλμ 🙂\n\"'\\<>") for _ in range(64)) * (huge // 64 + 1)
    filler = filler[:huge]
    return rng.choice([
        _call("fill", {"element_id": "input-9999", "text": filler}),
        _call("type", {"text": filler, "element_id": "nonexistent-7"}),
        _call("click", {"element_id": "button-" + "9" * huge}),
        _call("navigate", {"url": "not a url " + filler}),
        _call("select_option", {"element_id": "select-9999", "option": filler}),
        _call("x" * 100 + filler[:200], {"payload": filler}),
        _call("wait_for", {"text": filler, "timeout_s": 0}),
    ])


def _not_an_object(rng: random.Random, huge: int) -> Reply:
    tool = rng.choice(sorted(_TOOL_PARAMETERS))
    as_json = json.dumps(_TOOL_PARAMETERS[tool])
    tool_input = rng.choice([as_json[: max(1, len(as_json) // 2)], as_json, "not json {", [1, 2, 3], 42, None, True, ""])
    return _call(tool, tool_input)


def _empty(rng: random.Random, huge: int) -> Reply:
    return Reply(text=rng.choice(["", " ", "\n\n", "\t"]), stop_reason=rng.choice(["end_turn", "max_tokens", None]))


def _no_tool_call(rng: random.Random, huge: int) -> Reply:
    return Reply(text=rng.choice([
        "I think the listing is done.", "Clicking the Publish button now.", '{"tool": "click", "element_id": "button-1"}',
        "<tool_use>complete</tool_use>", "Sorry, I cannot see the page.",
    ]), stop_reason="end_turn")


def _unknown_element(rng: random.Random, huge: int) -> Reply:
    tool = rng.choice(["click", "hover", "fill", "check", "select_option", "upload"])
    parameters = dict(_TOOL_PARAMETERS[tool])
    parameters["element_id"] = rng.choice(_NO_SUCH_IDS + _NOT_IDS)
    return _call(tool, parameters)


def _extra_parameter(rng: random.Random, huge: int) -> Reply:
    tool = rng.choice(["click", "scroll", "navigate", "go_back", "complete", "abort", "fill"])
    parameters = dict(_TOOL_PARAMETERS.get(tool, {}))
    parameters[rng.choice(["force", "selector", "x", "timeout", "coordinates"])] = rng.choice([True, 1, "yes", [0, 0]])
    return _call(tool, parameters)


def _bad_value(rng: random.Random, huge: int) -> Reply:
    tool, parameters = rng.choice(_BAD_VALUES)
    return _call(tool, dict(parameters))


def _duplicate_ids(rng: random.Random, huge: int) -> Reply:
    call_id = rng.choice(["toolu_dup", "toolu_01ABC", "same"])
    return Reply(tool_uses=[
        ToolUse("scroll", {"direction": "sideways"}, call_id),
        ToolUse("click", {"element_id": "button-9999"}, call_id),
    ])


def _bad_call_id(rng: random.Random, huge: int) -> Reply:
    call_id = rng.choice(["", " ", "has spaces", "toolu/../x", "ü-id", "x" * 300, "toolu_01\n"])
    return _call("click", {"element_id": rng.choice(_NO_SUCH_IDS)}, call_id)


def _mixed(rng: random.Random, huge: int) -> Reply:
    bad = rng.choice([_unknown_tool, _missing_parameter, _wrong_type, _unknown_element, _bad_value])(rng, huge)
    # A valid call after a failing one is skipped, never run: the page stays as the model saw it.
    return Reply(text="Trying two things.", tool_uses=[*bad.tool_uses, ToolUse("scroll", {"direction": "down"})])
