"""A small real web server for tests: pages (HTML strings or handlers) on 127.0.0.x:random, every
request recorded. For pages that misbehave (hang, never finish) see :mod:`hostile_site`.

    with PageSite(host="127.0.0.2", pages={"/steal": "<h1>thanks</h1>"}) as site:
        site.url("/steal"); site.requests   # [("GET", "/steal?...")]
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

__all__ = ["PageSite", "PageHandler"]

# Page handlers get (path, query, body) and return (status, html, extra headers).
PageHandler = Callable[[str, dict[str, list[str]], bytes], tuple[int, str, dict[str, str]]]


class PageSite:
    """A real HTTP server on ``host``:random that serves ``pages`` and records every request."""

    def __init__(self, host: str = "127.0.0.1", pages: dict[str, str | PageHandler] | None = None):
        self.host = host
        self.pages: dict[str, str | PageHandler] = dict(pages or {})
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
                headers: dict[str, str]
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

    def __enter__(self) -> PageSite:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()
