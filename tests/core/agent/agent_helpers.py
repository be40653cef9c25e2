"""Helpers for the agent-loop tests (imported as a top-level module, like tests/core/llm)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from PIL import Image
from pydantic import BaseModel

from webtask_core.llm.anthropic import AnthropicLLM
from webtask_core.testing import FakeAnthropicServer
from webtask_core.testing.request_view import last_tool_results

SHOP_PASSWORD = "demo-pass"
USERS = {"demo": SHOP_PASSWORD}


class ListingOutput(BaseModel):
    listing_url: str
    sku: str


def listing_task(site_url: str, *, sku: str = "SHOE-001", photos: tuple[str, ...] = ("listing_image_1", "listing_image_2"),
                 **extra: Any) -> str:
    """The listing task; `extra` adds keys to its data (e.g. ``shipping="Local pickup"``)."""
    data = {
        "sku": sku,
        "title": "Blue suede shoes",
        "description": "Worn twice.\nSize 8.",
        "price": 45.0,
        "category": "Women's Shoes",
        "condition": "Like new",
        "photos": list(photos),
        "username": "demo",
        "password": "{{secret:shop_password}}",
        "site_url": site_url,
        **extra,
    }
    return ("Create a listing with these two photos on the marketplace, then report its URL.\n"
            f"```json\n{json.dumps(data, indent=2)}\n```")


def make_photos(folder: Path) -> list[Path]:
    """Two small real images: a JPEG and a PNG."""
    jpeg = folder / "front.jpg"
    Image.new("RGB", (64, 48), (200, 30, 90)).save(jpeg, "JPEG")
    png = folder / "back side.png"
    Image.new("RGB", (40, 40), (20, 120, 200)).save(png, "PNG")
    return [jpeg, png]


@contextlib.asynccontextmanager
async def fake_model(policy: Any, **server_options: Any) -> AsyncIterator[tuple[FakeAnthropicServer, AnthropicLLM]]:
    """A FakeAnthropicServer answering with ``policy`` and an AnthropicLLM pointed at it."""
    async with FakeAnthropicServer(policy, **server_options) as server:
        async with AnthropicLLM(base_url=server.base_url, api_key="test", max_retries=2, timeout_s=10) as llm:
            yield server, llm


def request_text(request: dict[str, Any]) -> str:
    """Every text of a request (system, messages, tool results) joined, to search in."""
    texts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("type") == "text" and isinstance(value.get("text"), str):
                texts.append(value["text"])
            for key, item in value.items():
                if key != "text":
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(request.get("messages"))
    return "\n".join(texts)


def last_user_texts(request: dict[str, Any]) -> list[str]:
    message = request["messages"][-1]
    assert message["role"] == "user"
    return [block["text"] for block in message["content"] if block.get("type") == "text"]


def error_results(request: dict[str, Any]) -> list[str]:
    return [result.text for result in last_tool_results(request) if result.is_error]
