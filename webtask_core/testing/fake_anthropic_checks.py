"""What the fake Messages API checks and counts: request rules, token estimates, prompt caching.

- :func:`validate_request` returns the 400 message the real API would give for the mistakes a
  message builder typically makes (orphan tool results, text before tool results, empty text, more
  than four cache breakpoints, undecodable images, duplicate tool names, a ``tool_choice`` naming
  no tool or forcing one with extended thinking on), or None.
- :func:`estimate_tokens`: about four characters a token; images by their pixel count like the API.
- :class:`PromptCache` models prompt caching closely enough for benchmarks: a request is cut into
  blocks in the API's order (tools, system, messages); each ``cache_control`` breakpoint writes the
  prefix ending there, and a later request reads the longest prefix already written that ends at one
  of its breakpoints or up to 20 blocks before one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import math
import re
import threading
from typing import Any

from PIL import Image, UnidentifiedImageError

__all__ = ["validate_request", "estimate_tokens", "PromptCache", "MAX_BREAKPOINTS", "LOOKBACK_BLOCKS"]

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
_IMAGE_MEDIA_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_MAX_IMAGE_TOKENS = 1600  # the API scales large images down to about this


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _count_breakpoints(request: dict[str, Any]) -> int:
    count = 0
    for tool in request.get("tools") or []:
        count += isinstance(tool, dict) and "cache_control" in tool
    for block in _blocks(request.get("system")):
        count += isinstance(block, dict) and "cache_control" in block
    for message in request.get("messages") or []:
        for block in _blocks(message.get("content") if isinstance(message, dict) else None):
            if isinstance(block, dict):
                count += "cache_control" in block
                for inner in _blocks(block.get("content")) if block.get("type") == "tool_result" else []:
                    count += isinstance(inner, dict) and "cache_control" in inner
    return count


def _check_leaf(block: Any, where: str) -> str | None:
    if not isinstance(block, dict) or "type" not in block:
        return f"{where}: expected a content block object with a type"
    if block["type"] == "text":
        if not isinstance(block.get("text"), str) or not block["text"].strip():
            return f"{where}: text content blocks must contain non-whitespace text"
    elif block["type"] == "image":
        source = block.get("source") or {}
        if source.get("type") == "base64":
            if source.get("media_type") not in _IMAGE_MEDIA_TYPES:
                return f"{where}.source.media_type: Input should be one of {sorted(_IMAGE_MEDIA_TYPES)}"
            if _image_size(source.get("data")) is None:
                return f"{where}.source.data: Could not process image"
    return None


def _check_message(index: int, message: Any, previous_tool_ids: list[str]) -> str | None:
    where = f"messages.{index}"
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return f"{where}: expected an object with role 'user' or 'assistant'"
    blocks = _blocks(message.get("content"))
    if not blocks:
        return f"{where}: all messages must have non-empty content except for the optional final assistant message"
    seen_other = False
    for position, block in enumerate(blocks):
        block_where = f"{where}.content.{position}"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_result":
            if message["role"] != "user":
                return f"{block_where}: tool_result blocks are only allowed in user messages"
            if seen_other:
                return f"{block_where}: tool_result blocks must come first in the content array, before any other block"
            if block.get("tool_use_id") not in previous_tool_ids:
                return (
                    f"{block_where}: unexpected `tool_use_id` found in `tool_result` blocks: {block.get('tool_use_id')}. "
                    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                )
            for inner_position, inner in enumerate(_blocks(block.get("content"))):
                problem = _check_leaf(inner, f"{block_where}.content.{inner_position}")
                if problem:
                    return problem
            continue
        seen_other = True
        if kind == "tool_use":
            if message["role"] != "assistant":
                return f"{block_where}: tool_use blocks are only allowed in assistant messages"
            if not isinstance(block.get("id"), str):  # as the API says; a None id made the ids' join below fail
                return f"{block_where}.id: Field required"
            if not isinstance(block.get("input"), dict):
                return f"{block_where}.input: Input should be a valid dictionary"
        elif kind in ("text", "image"):
            problem = _check_leaf(block, block_where)
            if problem:
                return problem
    return None


def _check_tool_choice(choice: Any, names: list[Any], thinking: Any) -> str | None:
    if choice is None:
        return None
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind not in ("auto", "any", "tool", "none"):
        return "tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'"
    if kind == "tool" and choice.get("name") not in names:
        return f"tool_choice.name: Tool '{choice.get('name')}' not found in the provided tools"
    if kind in ("any", "tool") and isinstance(thinking, dict) and thinking.get("type") == "enabled":
        return "Thinking may not be enabled when tool_choice forces tool use."
    return None


def validate_request(request: dict[str, Any]) -> str | None:
    """The API's 400 message for a request it would reject, or None when it looks acceptable."""
    if not isinstance(request.get("model"), str) or not request["model"]:
        return "model: Field required"
    if not isinstance(request.get("max_tokens"), int) or request["max_tokens"] < 1:
        return "max_tokens: Field required (a positive integer)"
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: Field required (at least one message)"
    names = [t.get("name") for t in request.get("tools") or [] if isinstance(t, dict)]
    for position, name in enumerate(names):
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            return f"tools.{position}.name: String should match pattern '{_TOOL_NAME.pattern}'"
    if len(set(names)) != len(names):
        return "tools: Tool names must be unique."
    problem = _check_tool_choice(request.get("tool_choice"), names, request.get("thinking"))
    if problem:
        return problem
    system = request.get("system")
    for position, block in enumerate(system if isinstance(system, list) else []):  # a string may be empty
        problem = _check_leaf(block, f"system.{position}")
        if problem:
            return problem
    breakpoints = _count_breakpoints(request)
    if breakpoints > MAX_BREAKPOINTS:
        return f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {breakpoints}."
    previous_tool_ids: list[str] = []
    for index, message in enumerate(messages):
        problem = _check_message(index, message, previous_tool_ids)
        if problem:
            return problem
        blocks = _blocks(message.get("content"))
        answered = {b.get("tool_use_id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"}
        missing = [i for i in previous_tool_ids if i not in answered]
        if missing:
            return (
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in "
                "the next message."
            )
        previous_tool_ids = [
            b["id"] for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"  # a str: checked above
        ] if message["role"] == "assistant" else []
    return None


def _image_size(data: Any) -> tuple[int, int] | None:
    if not isinstance(data, str) or not data:
        return None
    try:
        with Image.open(io.BytesIO(base64.b64decode(data, validate=True))) as image:
            return image.size
    except (binascii.Error, ValueError, UnidentifiedImageError, OSError):
        return None


def _image_tokens(source: dict[str, Any]) -> int:
    size = _image_size(source.get("data"))
    if size is None:
        return _MAX_IMAGE_TOKENS
    width, height = size
    return min(_MAX_IMAGE_TOKENS, max(1, math.ceil(width * height / 750)))


def _chars_and_images(value: Any) -> tuple[int, int]:
    """(characters of text, tokens of images) in a JSON value, skipping cache_control markers."""
    if isinstance(value, str):
        return len(value), 0
    if isinstance(value, list):
        parts = [_chars_and_images(v) for v in value]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    if isinstance(value, dict):
        if value.get("type") == "image" and isinstance(value.get("source"), dict):
            return 0, _image_tokens(value["source"])
        parts = [_chars_and_images(v) for k, v in value.items() if k != "cache_control"]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    return (len(json.dumps(value)) if value is not None else 0), 0


def estimate_tokens(value: Any) -> int:
    """About four characters a token, plus the pixel-based cost of any images."""
    chars, image_tokens = _chars_and_images(value)
    return math.ceil(chars / 4) + image_tokens


def _without_cache_control(block: Any) -> Any:
    if isinstance(block, dict):
        return {k: _without_cache_control(v) for k, v in block.items() if k != "cache_control"}
    if isinstance(block, list):
        return [_without_cache_control(v) for v in block]
    return block


def _cache_blocks(request: dict[str, Any]) -> list[tuple[str, int, bool]]:
    """(canonical text, tokens, is breakpoint) per block, in the order the API caches them."""
    items: list[tuple[str, Any, bool]] = []
    for tool in request.get("tools") or []:
        items.append(("tool", tool, isinstance(tool, dict) and "cache_control" in tool))
    for block in _blocks(request.get("system")):
        items.append(("system", block, isinstance(block, dict) and "cache_control" in block))
    for message in request.get("messages") or []:
        for position, block in enumerate(_blocks(message.get("content"))):
            # The role and where a message starts are part of the prefix, not only the blocks.
            tag = f"{message.get('role')}:{'start' if position == 0 else 'cont'}"
            items.append((tag, block, isinstance(block, dict) and "cache_control" in block))
    out = []
    for tag, block, is_breakpoint in items:
        canonical = json.dumps([tag, _without_cache_control(block)], sort_keys=True)
        out.append((canonical, estimate_tokens(block), is_breakpoint))
    return out


class PromptCache:
    """Prefixes written at cache breakpoints, shared by every request one server receives."""

    def __init__(self, min_tokens: int = 1024):
        self.min_tokens = min_tokens
        self._written: dict[str, int] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._written.clear()

    def usage(self, request: dict[str, Any]) -> tuple[int, int, int]:
        """(input_tokens, cache_read_input_tokens, cache_creation_input_tokens) for one request."""
        blocks = _cache_blocks(request)
        hashes: list[str] = []
        totals: list[int] = []
        digest, running = hashlib.sha256(), 0
        for canonical, tokens, _ in blocks:
            digest.update(canonical.encode())
            hashes.append(digest.copy().hexdigest())
            running += tokens
            totals.append(running)
        total = running
        breakpoints = [i for i, (_, _, is_bp) in enumerate(blocks) if is_bp]
        read = 0
        with self._lock:
            for bp in breakpoints:
                for i in range(bp, max(-1, bp - LOOKBACK_BLOCKS - 1), -1):
                    if hashes[i] in self._written:
                        read = max(read, totals[i])
                        break
            last = totals[breakpoints[-1]] if breakpoints else 0
            write = last - read if last >= self.min_tokens and last > read else 0
            for bp in breakpoints:
                if totals[bp] >= self.min_tokens:
                    self._written[hashes[bp]] = totals[bp]
        return total - read - write, read, write
