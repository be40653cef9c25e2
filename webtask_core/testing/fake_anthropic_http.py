"""The HTTP plumbing of FakeAnthropicServer: a keep-alive threaded server whose connections can be
closed on stop, and the helpers the Messages API answers are built with."""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["MessagesHandler", "MessagesHTTPServer", "error_body", "new_id", "presented_key", "client_gone"]


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}, "request_id": new_id("req_")}


def new_id(prefix: str) -> str:
    return prefix + "01" + uuid.uuid4().hex[:22]


def presented_key(handler: BaseHTTPRequestHandler) -> str | None:
    # The SDK sends its key as `x-api-key` or, in 2.x, as `Authorization: Bearer <key>`.
    bearer = handler.headers.get("authorization") or ""
    return handler.headers.get("x-api-key") or (bearer[7:] if bearer.lower().startswith("bearer ") else None)


def client_gone(sock: socket.socket) -> bool:
    """True when the client closed the connection (it sends nothing else while awaiting a reply)."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except ConnectionError:
        return True


class MessagesHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    # Headers and body go out as separate writes; with Nagle's algorithm and delayed ACKs each
    # keep-alive request would stall ~40 ms.
    disable_nagle_algorithm = True
    server: MessagesHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Quiet: the exchanges are recorded on the server object instead."""

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self.server.on_request(self)

    def do_GET(self) -> None:  # noqa: N802
        self.send_json(404, error_body("not_found_error", f"{self.path}: only POST /v1/messages is served"))

    def send_json(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> bool:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", body.get("request_id") or body.get("id") or "")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return False


class MessagesHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], on_request: Callable[[MessagesHandler], None]):
        self.on_request = on_request
        self.open_sockets: set[socket.socket] = set()
        self.sockets_lock = threading.Lock()
        super().__init__(address, MessagesHandler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.sockets_lock:
            self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.sockets_lock:
            self.open_sockets.discard(request)
        super().shutdown_request(request)

    def close_open_connections(self) -> None:
        # Keep-alive handler threads would otherwise keep answering after stop().
        with self.sockets_lock:
            sockets, self.open_sockets = list(self.open_sockets), set()
        for sock in sockets:
            with contextlib.suppress(OSError):  # already closed by the client
                sock.shutdown(socket.SHUT_RDWR)
