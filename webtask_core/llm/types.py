"""Provider-neutral message types. The worker only ever sees these, never SDK objects."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

__all__ = [
    "TextBlock",
    "ImageBlock",
    "ReasoningBlock",
    "ToolCall",
    "ToolResult",
    "Block",
    "Message",
    "ToolSpec",
    "Usage",
    "ModelReply",
    "LLM",
]


class TextBlock(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ImageBlock(BaseModel):
    type: Literal["image"] = "image"
    media_type: Literal["image/jpeg", "image/png"] = "image/jpeg"
    data: str  # base64, no data: prefix


class ReasoningBlock(BaseModel):
    """A provider's opaque reasoning (e.g. Anthropic's signed thinking block).

    Thinking models want the reasoning of a tool-use turn sent back unmodified, so the worker copies it
    into the assistant message and the session stores it; only the provider that made it reads `data`.
    """

    type: Literal["reasoning"] = "reasoning"
    provider: str
    data: dict[str, Any]


class ToolCall(BaseModel):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    # Whatever the model sent. Usually a dict; a malformed reply may carry anything, and the tool
    # layer turns that into an error the model sees rather than crashing here.
    input: Any = Field(default_factory=dict)


class ToolResult(BaseModel):
    type: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    content: list[Annotated[TextBlock | ImageBlock, Field(discriminator="type")]] = Field(
        default_factory=list
    )
    is_error: bool = False


Block = Annotated[
    TextBlock | ImageBlock | ReasoningBlock | ToolCall | ToolResult, Field(discriminator="type")
]


class Message(BaseModel):
    role: Literal["user", "assistant"]
    content: list[Block]
    # Put a prompt-caching breakpoint after this message (providers without caching ignore it).
    cache: bool = False


class ToolSpec(BaseModel):
    name: str
    description: str
    input_schema: dict[str, Any]


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
        )


class ModelReply(BaseModel):
    # Goes first in the assistant message that answers this reply (see ReasoningBlock).
    reasoning: list[ReasoningBlock] = Field(default_factory=list)
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    stop_reason: str | None = None
    model: str = ""


@runtime_checkable
class LLM(Protocol):
    """One async model call. Raises ModelTransientError or PermanentModelError, nothing else.

    ``tool_choice``: the name of a tool the reply must call (a structured-output call, as the
    read-back makes); None leaves it to the model. The worker's steps never force one."""

    model: str

    async def complete(
        self,
        *,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        cache_system: bool = True,
        tool_choice: str | None = None,
    ) -> ModelReply: ...
