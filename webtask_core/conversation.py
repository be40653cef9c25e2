"""What goes back to the model of its own reply: tool calls the API will accept in the conversation.

A model (or a proxy, or a broken fake) can return tool calls the Messages API would refuse to see
again in the next request: duplicate or malformed ``tool_use`` ids, names outside the allowed
pattern, megabytes of input. The step record keeps the call as it came; the conversation gets a copy
with a fresh id, a placeholder name and long strings cut, so one bad reply cannot make every later
request fail (or outgrow the context window).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from webtask_core.llm.types import ToolCall

__all__ = ["echoable_calls", "MAX_ECHOED_STRING", "INVALID_TOOL_NAME"]

_TOOL_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_ECHOED_STRING = 2000  # characters of one string value in an echoed tool input
INVALID_TOOL_NAME = "invalid_tool_name"


def echoable_calls(calls: list[ToolCall], *, used: set[str] | None = None) -> list[ToolCall]:
    """The calls, in order, each with a valid id unique in the conversation (``used``: the ids of its
    earlier tool calls), a valid name and bounded input."""
    seen: set[str] = set(used or ())
    echoed: list[ToolCall] = []
    for call in calls:
        call_id = call.id if isinstance(call.id, str) and _TOOL_ID.match(call.id) and call.id not in seen else None
        name = call.name if isinstance(call.name, str) and _TOOL_NAME.match(call.name) else INVALID_TOOL_NAME
        tool_input = _bounded(call.input)
        if call_id is None:
            call_id = f"toolu_wt_{uuid.uuid4().hex[:20]}"
        seen.add(call_id)
        if call_id == call.id and name == call.name and tool_input is call.input:
            echoed.append(call)
        else:
            echoed.append(call.model_copy(update={"id": call_id, "name": name, "input": tool_input}))
    return echoed


def _bounded(value: Any, depth: int = 0) -> Any:
    """``value`` with long strings cut (the same object when nothing was cut)."""
    if isinstance(value, str):
        if len(value) <= MAX_ECHOED_STRING:
            return value
        return value[:MAX_ECHOED_STRING] + f"…[{len(value) - MAX_ECHOED_STRING} more characters cut]"
    if depth > 20:  # absurdly deep input: keep its shape out of the conversation
        return "…[nested too deep]"
    if isinstance(value, dict):
        items = {key: _bounded(item, depth + 1) for key, item in value.items()}
        return value if all(items[key] is value[key] for key in value) else items
    if isinstance(value, list):
        bounded = [_bounded(item, depth + 1) for item in value]
        return value if all(new is old for new, old in zip(bounded, value, strict=True)) else bounded
    return value
