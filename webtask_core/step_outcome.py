"""What one step's model reply and its calls' outcomes become: the assistant message to keep and the
next user message's tool results, the history's action records, and the step's timings."""

from __future__ import annotations

import time
from collections.abc import Mapping

from webtask_core.conversation import echoable_calls
from webtask_core.history import ActionRecord
from webtask_core.llm.types import Block, Message, ModelReply, TextBlock, ToolResult
from webtask_core.record import StepTimings
from webtask_core.tools import CallOutcome

__all__ = ["NO_TOOL_CALL", "reply_messages", "action_records", "elapsed_ms", "step_timings"]

NO_TOOL_CALL = "(no tool call)"


def reply_messages(
    reply: ModelReply, outcomes: list[CallOutcome], used_ids: set[str], notes: Mapping[str, str]
) -> tuple[Message, list[Block], str | None]:
    """The assistant message to keep, the next user message's leading blocks, a step error."""
    # Reasoning (e.g. signed thinking) goes first and unmodified, as thinking models require.
    content: list[Block] = list(reply.reasoning)
    if reply.text.strip():
        content.append(TextBlock(text=reply.text))
    # Ids, names and sizes the API accepts when the conversation is sent again (see conversation.py).
    echoed = echoable_calls(reply.tool_calls, used=used_ids)
    content.extend(echoed)
    if not reply.tool_calls:
        if reply.text.strip():
            note, error = notes["tool_call_required"], "the reply called no tool"
        else:
            content.append(TextBlock(text="(empty reply)"))
            note, error = notes["empty_reply"], "the reply was empty"
        return Message(role="assistant", content=content), [TextBlock(text=note)], error
    results: list[Block] = [
        ToolResult(
            tool_call_id=call.id,
            content=[TextBlock(text=outcome.message or ("done" if outcome.ok else "failed"))],
            is_error=not outcome.ok,
        )
        for call, outcome in zip(echoed, outcomes, strict=True)
    ]
    return Message(role="assistant", content=content), results, None


def action_records(
    index: int, outcomes: list[CallOutcome], reply: ModelReply, url: str
) -> list[ActionRecord]:
    now = time.time()
    if not outcomes:
        message = "the reply called no tool" if reply.text.strip() else "the reply was empty"
        return [ActionRecord(step=index, tool=NO_TOOL_CALL, ok=False, message=message, url=url, at=now)]
    return [
        ActionRecord(
            step=index, tool=outcome.call.name, params=outcome.call.input, ok=outcome.ok,
            message=outcome.message, url=outcome.url, at=now, skipped=outcome.skipped,
        )
        for outcome in outcomes
    ]


def elapsed_ms(start: float, end: float) -> float:
    return round((end - start) * 1000.0, 2)


def step_timings(
    started: float, observed: float, asked: float, modelled: float, acted: float
) -> StepTimings:
    return StepTimings(
        observe_ms=elapsed_ms(started, observed),
        model_ms=elapsed_ms(asked, modelled),
        act_ms=elapsed_ms(modelled, acted),
        total_ms=elapsed_ms(started, time.perf_counter()),
    )

