"""One small async model protocol (`LLM`) and its Anthropic implementation.

The provider-neutral types are imported eagerly; `AnthropicLLM` lazily, because importing the
`anthropic` SDK takes over a second and code that only builds messages should not pay for it.
"""

from __future__ import annotations

import importlib
from typing import Any

from webtask_core.llm.types import (
    LLM,
    Block,
    ImageBlock,
    Message,
    ModelReply,
    TextBlock,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)

__all__ = [
    "LLM",
    "Block",
    "ImageBlock",
    "Message",
    "ModelReply",
    "TextBlock",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Usage",
    "AnthropicLLM",
    "DEFAULT_MODEL",
    "DEFAULT_BEDROCK_MODEL",
    "known_models",
]

_LAZY = {"AnthropicLLM", "DEFAULT_MODEL", "DEFAULT_BEDROCK_MODEL", "known_models"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module("webtask_core.llm.anthropic"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
