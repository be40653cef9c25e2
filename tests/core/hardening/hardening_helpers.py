"""Helpers for the hardening tests (imported as a top-level module, like tests/core/agent)."""

from __future__ import annotations

import base64
import contextlib
import io
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote, quote_plus

from PIL import Image

from webtask_core.llm.anthropic import AnthropicLLM
from webtask_core.testing import FakeAnthropicServer
from webtask_core.testing.page_site import PageSite

SHOP_PASSWORD = "Sh0p-s3cret pass/+&"

Site = PageSite  # the hardening tests' name for the package's test web server


@contextlib.asynccontextmanager
async def fake_model(policy: Any, **server_options: Any) -> AsyncIterator[tuple[FakeAnthropicServer, AnthropicLLM]]:
    async with FakeAnthropicServer(policy, **server_options) as server:
        async with AnthropicLLM(base_url=server.base_url, api_key="test", max_retries=2, timeout_s=10) as llm:
            yield server, llm


def secret_forms(value: str) -> list[str]:
    """The ways a value can show up in text we store or send: as is, URL- and JSON-encoded."""
    return sorted({value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1]})


def hits(value: str, *texts: str) -> list[str]:
    """Which forms of ``value`` occur in any of ``texts`` (the test wants none)."""
    return [form for form in secret_forms(value) for text in texts if form in text]


def request_images(request: dict[str, Any]) -> list[Image.Image]:
    images = []
    for message in request["messages"]:
        for block in message["content"]:
            if block.get("type") == "image":
                images.append(Image.open(io.BytesIO(base64.b64decode(block["source"]["data"]))).convert("RGB"))
    return images


def mean_colour(
    image: Image.Image, box: dict[str, float], inset: int = 4, viewport_width: int = 1280
) -> tuple[float, float, float]:
    """The mean RGB inside ``box`` (a Playwright bounding box, CSS pixels of a page `viewport_width`
    wide), a few pixels in from its edges; the model's screenshot may be scaled down."""
    scale = image.width / viewport_width
    left, top = int(box["x"] * scale) + inset, int(box["y"] * scale) + inset
    right = int((box["x"] + box["width"]) * scale) - inset
    bottom = int((box["y"] + box["height"]) * scale) - inset
    pixels = list(image.crop((left, top, right, bottom)).get_flattened_data())
    return tuple(sum(pixel[channel] for pixel in pixels) / len(pixels) for channel in range(3))  # type: ignore[return-value]


def is_mask_colour(colour: tuple[float, float, float]) -> bool:
    """Playwright paints masked elements magenta (#FF00FF)."""
    red, green, blue = colour
    return red > 200 and green < 60 and blue > 200


def chromium_children() -> set[int]:
    """Running Chromium processes below this test process (the test's own browsers included)."""
    from webtask_core.testing.processes import chromium_processes

    return chromium_processes()
