"""The Messages API's parameters from the provider-neutral types (``webtask_core.llm.types``) and
its reply back as a :class:`ModelReply`: tool use, images, reasoning kept exactly, prompt caching."""

from __future__ import annotations

from typing import Any

from webtask_core.errors import PermanentModelError
from webtask_core.llm.types import (
    ImageBlock,
    Message,
    ModelReply,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)

__all__ = ["MAX_CACHE_BREAKPOINTS", "build_request", "parse_reply", "checked_reply"]

# Anthropic rejects a request with more than four cache_control blocks.
MAX_CACHE_BREAKPOINTS = 4
_PROVIDER = "anthropic"
_EPHEMERAL = {"type": "ephemeral"}


def _tool_use_param(tool_id: str, name: str, tool_input: Any) -> dict[str, Any]:
    # The API only accepts an object as tool input; a malformed one is sent back wrapped, not dropped,
    # so the model still sees what it sent.
    if not isinstance(tool_input, dict):
        tool_input = {"invalid_input": tool_input}
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def _image_param(block: ImageBlock) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.media_type, "data": block.data}}


def _leaf_param(block: TextBlock | ImageBlock) -> dict[str, Any] | None:
    if isinstance(block, ImageBlock):
        return _image_param(block)
    # The API rejects empty/whitespace-only text blocks; they carry nothing, so they are left out.
    return {"type": "text", "text": block.text} if block.text.strip() else None


def _block_param(block: Any) -> dict[str, Any] | None:
    if isinstance(block, (TextBlock, ImageBlock)):
        return _leaf_param(block)
    if isinstance(block, ReasoningBlock):
        # Another provider's reasoning means nothing here; ours goes back exactly as received.
        return dict(block.data) if block.provider == _PROVIDER else None
    if isinstance(block, ToolCall):
        return _tool_use_param(block.id, block.name, block.input)
    if isinstance(block, ToolResult):
        content = [p for p in (_leaf_param(b) for b in block.content) if p is not None]
        param: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_call_id}
        if content:
            param["content"] = content
        if block.is_error:
            param["is_error"] = True
        return param
    raise PermanentModelError(f"cannot send a content block of type {type(block).__name__} to Anthropic")


def _apply_breakpoints(candidates: list[dict[str, Any]]) -> None:
    """Mark the latest MAX_CACHE_BREAKPOINTS candidates (in the API's tools → system → messages order)."""
    for target in candidates[-MAX_CACHE_BREAKPOINTS:]:
        target["cache_control"] = dict(_EPHEMERAL)


def build_request(
    *,
    system: str,
    messages: list[Message],
    tools: list[ToolSpec],
    cache_system: bool,
    tool_choice: str | None = None,
) -> dict[str, Any]:
    """The `system`, `tools` and `messages` parameters of one Messages API call (and `tool_choice`
    forcing a call of the tool named, which must be one of ``tools``)."""
    if tool_choice is not None and tool_choice not in {tool.name for tool in tools}:
        raise PermanentModelError(f"tool_choice names {tool_choice!r}, which is not one of the tools sent")
    breakpoints: list[dict[str, Any]] = []
    tool_params = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
    if tool_params:
        breakpoints.append(tool_params[-1])
    system_params = [{"type": "text", "text": system}] if system.strip() else []
    if system_params and cache_system:
        breakpoints.append(system_params[0])
    message_params = []
    for index, message in enumerate(messages):
        content = [p for p in (_block_param(b) for b in message.content) if p is not None]
        if not content:
            raise PermanentModelError(f"messages[{index}] ({message.role}) has no content to send")
        if message.cache:
            breakpoints.append(content[-1])
        message_params.append({"role": message.role, "content": content})
    _apply_breakpoints(breakpoints)
    request: dict[str, Any] = {"messages": message_params}
    if system_params:
        request["system"] = system_params
    if tool_params:
        request["tools"] = tool_params
    if tool_choice is not None:
        request["tool_choice"] = {"type": "tool", "name": tool_choice}
    return request


def parse_reply(response: Any) -> ModelReply:
    """A Messages API response (SDK object) as a ModelReply; tool input is kept exactly as sent."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningBlock] = []
    for block in response.content:
        if block.type == "thinking":
            data = {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
            reasoning.append(ReasoningBlock(provider=_PROVIDER, data=data))
        elif block.type == "redacted_thinking":
            reasoning.append(ReasoningBlock(provider=_PROVIDER, data={"type": "redacted_thinking", "data": block.data}))
        elif block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            calls.append(ToolCall(id=block.id, name=block.name, input=block.input))
    usage = response.usage
    return ModelReply(
        reasoning=reasoning,
        text="\n".join(t for t in texts if t),
        tool_calls=calls,
        usage=Usage(
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0,
        ),
        stop_reason=response.stop_reason,
        model=str(response.model or ""),
    )


def _refusal_detail(response: Any, reply: ModelReply) -> str:
    details = getattr(response, "stop_details", None)
    parts = [getattr(details, "explanation", None), getattr(details, "category", None), reply.text]
    return next((p for p in parts if p), "no explanation given")


def checked_reply(response: Any) -> ModelReply:
    """:func:`parse_reply`, except that a refusal raises PermanentModelError (retrying will not help)."""
    reply = parse_reply(response)
    if reply.stop_reason == "refusal":
        raise PermanentModelError(f"model refused: {_refusal_detail(response, reply)}")
    return reply
