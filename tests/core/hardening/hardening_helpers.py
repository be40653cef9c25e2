"""Helpers for the hardening tests (imported as a top-level module, like tests/core/agent)."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import threading
from collections.abc import AsyncIterator, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, quote_plus, urlsplit

from PIL import Image

from webtask_core.llm.anthropic import AnthropicLLM
from webtask_core.testing import FakeAnthropicServer

SHOP_PASSWORD = "Sh0p-s3cret pass/+&"

# Page handlers get (path, query, body) and return (status, html, extra headers).
Handler = Callable[[str, dict[str, list[str]], bytes], tuple[int, str, dict[str, str]]]


class Site:
    """A real HTTP server on ``host``:random that serves ``pages`` and records every request."""

    def __init__(self, host: str = "127.0.0.1", pages: dict[str, str | Handler] | None = None):
        self.host = host
        self.pages: dict[str, str | Handler] = dict(pages or {})
        self.requests: list[tuple[str, str]] = []  # (method, path with query)
        self.bodies: list[bytes] = []
        site = self

        class RequestHandler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                site.requests.append((method, self.path))
                site.bodies.append(body)
                parts = urlsplit(self.path)
                page = site.pages.get(parts.path)
                if page is None:
                    status, html, headers = 404, "<h1>Not found</h1>", {}
                elif callable(page):
                    status, html, headers = page(parts.path, parse_qs(parts.query), body)
                else:
                    status, html, headers = 200, page, {}
                data = html.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                self._serve("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

        self.server = ThreadingHTTPServer((host, 0), RequestHandler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.origin + path

    def __enter__(self) -> "Site":
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()


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
