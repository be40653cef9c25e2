"""Static test pages served over real HTTP: one site on 127.0.0.1 and a second, cross-origin one on
localhost (another port, and another site, so Chromium puts its frames in their own process)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

PAGES = Path(__file__).parent / "pages"
PIXEL_GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")


@dataclass
class PageServer:
    host: str
    other_origin: str = ""
    requests: list[str] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def origin(self) -> str:
        assert self.server is not None
        return f"http://{self.host}:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.origin + "/" + path.lstrip("/")

    def start(self) -> None:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                return

            def _send(self, status: int, body: bytes, content_type: str = "text/html; charset=utf-8", **headers: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for key, value in headers.items():
                    self.send_header(key.replace("_", "-"), value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                site.requests.append(self.path)
                parts = urlsplit(self.path)
                if parts.path == "/redirect":
                    target = parse_qs(parts.query)["to"][0]
                    self._send(302, b"", Location=target)
                elif parts.path == "/pixel.gif":
                    self._send(200, PIXEL_GIF, "image/gif")
                else:
                    file = (PAGES / parts.path.lstrip("/")).resolve()
                    if not file.is_file() or PAGES not in file.parents:
                        self._send(404, b"<h1>Not found</h1>")
                        return
                    html = file.read_text(encoding="utf-8").replace("{{OTHER_ORIGIN}}", site.other_origin)
                    self._send(200, html.encode())

            def do_POST(self) -> None:  # noqa: N802
                site.requests.append(self.path)
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length).decode(errors="replace")
                self._send(200, f"<title>Posted</title><p id='posted'>{body}</p>".encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@dataclass
class Sites:
    site: PageServer
    other: PageServer

    def url(self, path: str) -> str:
        return self.site.url(path)


@pytest.fixture(scope="session")
def sites() -> Iterator[Sites]:
    # The other site is reached as "localhost": a different site from 127.0.0.1, so its iframe is
    # an out-of-process frame, the hard case for frame handling.
    other = PageServer(host="localhost")
    other.start()
    site = PageServer(host="127.0.0.1", other_origin=other.origin)
    site.start()
    other.other_origin = site.origin
    yield Sites(site=site, other=other)
    site.stop()
    other.stop()
