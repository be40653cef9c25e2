"""A local HTTP server that speaks the Anthropic Messages API, driven by a scripted policy.

The real `anthropic` client talks to it over HTTP, so its retries, timeouts and error mapping are
exercised exactly as against the real API::

    def policy(request: dict) -> Reply:            # the JSON body Claude would get
        return Reply(tool_uses=[ToolUse("complete", {"feedback": "done"})])

    with FakeAnthropicServer(policy) as server:    # 127.0.0.1, random port, own thread
        llm = AnthropicLLM(base_url=server.base_url, api_key="test")
        server.inject("overloaded", times=2)       # the next two requests get a 529
        ...
        server.requests                            # every request body, faults included

Faults (see FAULT_KINDS) come from the queue filled by :meth:`inject`, else from ``fault_policy``
(``callable(request_index) -> kind | None``; :meth:`set_fault_rate` installs a seeded random one).
Requests are checked like the API would (see ``fake_anthropic_checks``) and answered with a 400 when
they break a rule, so a bug in how messages are built shows up offline. What is answered comes from
:class:`~webtask_core.testing.fake_messages.FakeMessagesAPI`, which the in-process
:class:`~webtask_core.testing.FakeLLM` shares; this module adds the HTTP side.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from typing import Any
from urllib.parse import unquote, urlsplit

from webtask_core.testing.fake_anthropic_http import (
    MessagesHandler,
    MessagesHTTPServer,
    client_gone,
    error_body,
    presented_key,
)
from webtask_core.testing.fake_messages import (
    ERROR_FAULTS,
    FAULT_KINDS,
    KIT_READER,
    MODEL_FAULTS,
    TRANSIENT_FAULTS,
    Exchange,
    FakeMessagesAPI,
    Policy,
)

__all__ = [
    "FakeAnthropicServer",
    "Exchange",
    "FAULT_KINDS",
    "TRANSIENT_FAULTS",
    "MODEL_FAULTS",
    "ERROR_FAULTS",
]

_BEDROCK_PREFIX = "/model/"


class FakeAnthropicServer(FakeMessagesAPI):
    """Messages API on 127.0.0.1:random, answering with ``policy(request) -> Reply``.

    Args (besides FakeMessagesAPI's policy, latency_s, min_cache_tokens, validate, thinking, reader):
        policy: sync or async callable; called with the parsed JSON body. Calls are serialised (one
            at a time) unless ``serialize_policy=False``, so a stateful policy needs no lock.
        slow_s: how long a "slow" fault stalls; set it above the client's timeout.
        retry_after_ms: sent as ``retry-after-ms`` on 429/500/529 so the SDK retries quickly; None to
            leave the SDK's own exponential backoff.
        api_key: when set, requests presenting another key (``x-api-key`` or bearer) get a 401.
        model: the ``model`` reported in replies (default: the one requested).
    """

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        latency_s: float = 0.0,
        slow_s: float = 5.0,
        retry_after_ms: int | None = 10,
        min_cache_tokens: int = 1024,
        api_key: str | None = None,
        validate: bool = True,
        model: str | None = None,
        thinking: bool = False,
        serialize_policy: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        reader: Policy | None = KIT_READER,
    ):
        super().__init__(
            policy, latency_s=latency_s, min_cache_tokens=min_cache_tokens, validate=validate, reply_model=model,
            thinking=thinking, reader=reader,
        )
        self.slow_s = slow_s
        self.retry_after_ms = retry_after_ms
        self.api_key = api_key
        self._policy_lock = threading.Lock() if serialize_policy else None
        self._stopping = threading.Event()
        self._address = (host, port)
        self._httpd: MessagesHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------------------------- lifecycle
    def start(self) -> FakeAnthropicServer:
        if self._httpd is None:
            self._stopping.clear()
            self._httpd = MessagesHTTPServer(self._address, self._handle)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-anthropic", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()  # wakes handlers sleeping in "slow" or latency
        self._httpd.shutdown()
        self._httpd.close_open_connections()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def __aenter__(self) -> FakeAnthropicServer:
        return self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.to_thread(self.stop)

    @property
    def model(self) -> str | None:
        """The ``model`` reported in replies (None: the one requested)."""
        return self.reply_model

    @model.setter
    def model(self, value: str | None) -> None:
        self.reply_model = value

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("FakeAnthropicServer is not running: use it as a context manager or call start()")
        host, port = self._httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET address (typeshed allows bytes too)
        return f"http://{host}:{port}"

    # ------------------------------------------------------------------------------------ handling
    def _handle(self, handler: MessagesHandler) -> None:
        path = urlsplit(handler.path).path
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        if path != "/v1/messages" and not (path.startswith(_BEDROCK_PREFIX) and path.endswith("/invoke")):
            handler.send_json(404, error_body("not_found_error", f"{path}: only POST /v1/messages is served"))
            return
        try:
            request = json.loads(raw)
        except ValueError as error:
            handler.send_json(400, error_body("invalid_request_error", f"request body is not valid JSON: {error}"))
            return
        if not isinstance(request, dict):
            handler.send_json(400, error_body("invalid_request_error", "request body must be a JSON object"))
            return
        if path.startswith(_BEDROCK_PREFIX):  # Bedrock puts the model in the path
            request.setdefault("model", unquote(path[len(_BEDROCK_PREFIX) : -len("/invoke")]))
        exchange = self._record(request)
        status, body, headers = self._answer(handler, exchange)
        if status is None:
            exchange.dropped = True
            handler.close_connection = True
            return
        if self.latency_s > 0:
            self._stopping.wait(self.latency_s)
        exchange.status, exchange.body = status, body
        if not handler.send_json(status, body, headers):
            exchange.dropped = True

    def _answer(self, handler: MessagesHandler, exchange: Exchange) -> tuple[int | None, dict[str, Any], dict[str, str]]:
        fault = exchange.fault
        if self.api_key is not None and presented_key(handler) != self.api_key:
            return 401, error_body("authentication_error", "invalid x-api-key"), {}
        if fault == "drop":
            return None, {}, {}
        if fault == "slow":
            self._stopping.wait(self.slow_s)
            if self._stopping.is_set() or client_gone(handler.connection):
                return None, {}, {}
        answer = self._answer_before_policy(exchange, retry_after_ms=self.retry_after_ms)
        if answer is not None:
            return answer
        try:
            result = self._call_policy(exchange.request)
        except Exception as failure:  # a broken policy is answered with a 400 naming it
            return self._policy_failed(failure)
        return self._answer_from_policy(exchange, result)

    def _call_policy(self, request: dict[str, Any]) -> Any:
        def call() -> Any:
            result = self.policy_for(request)(request)
            if inspect.isawaitable(result):
                result = asyncio.run(_awaited(result))
            return result

        if self._policy_lock is not None:
            with self._policy_lock:
                return call()
        return call()


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
