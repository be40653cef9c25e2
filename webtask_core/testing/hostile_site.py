"""A small web server whose pages misbehave, for fault tests: nothing ever hangs the code under test.

    with HostileSite() as site:
        site.url("/never")     # accepts the connection, never answers (a navigation timeout)
        site.url("/partial")   # answers the head of a page, then never finishes it
        site.url("/busy")      # a page whose script spins forever once loaded (a stuck renderer)
                               # 150 ms after it ran, or ?after=MS
        site.url("/ok")        # a plain page

Hanging handlers wait on an event that ``stop()`` sets, so the server always shuts down promptly.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

__all__ = ["HostileSite"]

_PARTIAL_HEAD = b"<!doctype html><html><head><title>Loading</title></head><body><h1>Still loading</h1><p>Please wait"
# Still loading when its script starts to spin: the navigation times out on a renderer that answers nothing.
_PARTIAL_BUSY_HEAD = _PARTIAL_HEAD + b"<script>setTimeout(() => { for (;;) {} }, 300);</script>"
_BUSY = b"""<!doctype html><title>Busy</title><h1>Busy page</h1><button>Does nothing</button>
<script>setTimeout(() => { for (;;) {} }, AFTER_MS);</script>"""
_OK = b"<!doctype html><title>OK</title><h1>An ordinary page</h1><a href='/ok'>Again</a>"


class HostileSite:
    def __init__(self, host: str = "127.0.0.1"):
        self.requests: list[str] = []
        self._stopping = threading.Event()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                site.requests.append(self.path)
                path = urlsplit(self.path).path
                if path == "/never":
                    site._stopping.wait()
                    self.close_connection = True
                elif path in ("/partial", "/partial-busy"):
                    head = _PARTIAL_HEAD if path == "/partial" else _PARTIAL_BUSY_HEAD
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(head) + 1_000_000))
                    self.end_headers()
                    self.wfile.write(head)
                    self.wfile.flush()
                    site._stopping.wait()
                    self.close_connection = True
                else:
                    after = parse_qs(urlsplit(self.path).query).get("after", ["150"])[0]
                    busy = _BUSY.replace(b"AFTER_MS", str(int(after)).encode())
                    known = {"/busy": busy, "/ok": _OK, "/": _OK}
                    body = known.get(path, b"<h1>Not found</h1>")
                    self.send_response(200 if path in known else 404)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

        self._server = ThreadingHTTPServer((host, 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET address (typeshed allows bytes too)
        return f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return self.origin + path

    def start(self) -> HostileSite:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> HostileSite:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
