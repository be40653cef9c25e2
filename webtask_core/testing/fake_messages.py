"""What the fake Messages API answers, whatever carries the request: faults, checks, replies, usage.

:class:`FakeMessagesAPI` is shared by :class:`~webtask_core.testing.FakeAnthropicServer` (over HTTP,
for the real client) and :class:`~webtask_core.testing.FakeLLM` (in process), so a policy, a fault
and a request the API would reject come out the same through both.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from webtask_core.testing.fake_anthropic_checks import PromptCache, estimate_tokens, validate_request
from webtask_core.testing.fake_anthropic_http import error_body, new_id
from webtask_core.testing.replies import Reply, ToolUse

__all__ = [
    "FakeMessagesAPI",
    "Exchange",
    "Policy",
    "FAULT_KINDS",
    "TRANSIENT_FAULTS",
    "MODEL_FAULTS",
    "ERROR_FAULTS",
    "KIT_READER",
]

# kind -> (HTTP status, API error type, message). The SDK maps the status to its exception classes.
ERROR_FAULTS: dict[str, tuple[int, str, str]] = {
    "rate_limit": (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    "overloaded": (529, "overloaded_error", "Overloaded"),
    "server_error": (500, "api_error", "Internal server error"),
    "bad_request": (400, "invalid_request_error", "messages: the request was rejected by an injected fault"),
    "auth_error": (401, "authentication_error", "invalid x-api-key"),
    "permission_denied": (403, "permission_error", "Your API key does not have permission to use this resource."),
    "not_found": (404, "not_found_error", "model: not found"),
}
# Faults the caller is expected to retry (the SDK first, then the step).
TRANSIENT_FAULTS = ("rate_limit", "overloaded", "server_error", "slow", "drop")
# Faults in what the model says: the worker must turn them into tool results the model sees.
MODEL_FAULTS = ("malformed_input", "malformed_types", "unknown_tool", "no_tool_call", "empty")
FAULT_KINDS = frozenset(ERROR_FAULTS) | frozenset(TRANSIENT_FAULTS + MODEL_FAULTS) | {"refusal"}
_RETRYABLE_STATUSES = {429, 500, 529}

Policy = Callable[[dict[str, Any]], Any]  # returns a Reply, or an awaitable of one
KIT_READER: Any = object()  # FakeMessagesAPI(reader=...) default: the kit's ListingPageReader
# (status, JSON body, extra headers) of one answer
Answer = tuple[int, dict[str, Any], dict[str, str]]


@dataclass
class Exchange:
    """One request and what the fake did with it."""

    index: int
    request: dict[str, Any]
    fault: str | None = None
    status: int | None = None  # None while in flight, or when the connection was dropped
    body: dict[str, Any] | None = None  # the JSON answered (a message or an error)
    dropped: bool = False
    reply: Reply | None = None  # what the policy returned, when it was called


def _default_policy(request: dict[str, Any]) -> Reply:
    return Reply(text="ok")


def _forced_tool(request: dict[str, Any]) -> str | None:
    choice = request.get("tool_choice")
    return choice.get("name") if isinstance(choice, dict) and choice.get("type") == "tool" else None


def _wrong_type(value: Any) -> Any:
    if isinstance(value, bool):
        return "maybe"
    if isinstance(value, (int, float)):
        return "not a number"
    if isinstance(value, str):
        return 12345
    return "not a list or object" if value is not None else 12345


class FakeMessagesAPI:
    """The Messages API's answers to request bodies, driven by ``policy(request) -> Reply``.

    Args (shared by the server and FakeLLM):
        policy: called with the JSON request body; returns a Reply (an async one may return an
            awaitable of it).
        latency_s: fixed delay before every answer (0: answer at once).
        min_cache_tokens: shortest prefix the prompt-cache model caches (Sonnet: 1024).
        validate: answer requests the API would reject with a 400 (True by default).
        reply_model: the ``model`` reported in replies (default: the one requested).
        thinking: act like a thinking model: tool-use replies start with a signed ``thinking`` block,
            and a request whose last assistant tool-use turn lacks it (or altered it) gets the 400 the
            API gives when thinking blocks are not passed back unmodified.
        reader: answers the read-back's requests (those forcing ``report_listing``): by default the
            kit's :class:`~webtask_core.testing.page_reader.ListingPageReader`; None sends them to
            ``policy`` like any other request.

    A request forcing a tool (``tool_choice``) must be answered with a call of it, as the API
    guarantees: a reply without one is answered with a 400 naming the policy's mistake.

    Faults (see FAULT_KINDS) come from the queue filled by :meth:`inject`, else from ``fault_policy``
    (``callable(request_index) -> kind | None``; :meth:`set_fault_rate` installs a seeded random one).
    """

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        latency_s: float = 0.0,
        min_cache_tokens: int = 1024,
        validate: bool = True,
        reply_model: str | None = None,
        thinking: bool = False,
        reader: Policy | None = KIT_READER,
    ):
        self.policy: Policy = policy or _default_policy
        if reader is KIT_READER:
            from webtask_core.testing.page_reader import ListingPageReader

            reader = ListingPageReader()
        self.reader: Policy | None = reader
        self.latency_s = latency_s
        self.validate = validate
        self.reply_model = reply_model
        self.thinking = thinking
        self._signing_key = uuid.uuid4().hex
        self.fault_policy: Callable[[int], str | None] | None = None
        self.exchanges: list[Exchange] = []
        self.policy_errors: list[BaseException] = []
        self._cache = PromptCache(min_cache_tokens)
        self._faults: deque[str] = deque()
        self._lock = threading.Lock()
        self._unknown_tool_names = itertools.count(1)

    # -------------------------------------------------------------------------------------- faults
    def inject(self, kind: str, times: int = 1) -> None:
        """Queue ``times`` faults of ``kind``; each is consumed by the next request."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(sorted(FAULT_KINDS))}")
        if times < 1:
            raise ValueError(f"times must be >= 1, got {times}")
        with self._lock:
            self._faults.extend([kind] * times)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
        self.fault_policy = None

    def set_fault_rate(self, rate: float, kinds: Iterable[str] = TRANSIENT_FAULTS, seed: int = 0) -> None:
        """Fault a ``rate`` share of requests with a kind drawn from ``kinds``, reproducibly: the draw
        depends only on the seed and the request index, not on timing."""
        kinds = tuple(kinds)
        unknown = [k for k in kinds if k not in FAULT_KINDS]
        if unknown or not kinds or not 0.0 <= rate <= 1.0:
            raise ValueError(f"need 0 <= rate <= 1 and known kinds; got rate={rate}, kinds={kinds}")

        def draw(index: int) -> str | None:
            rng = random.Random(seed * 1_000_003 + index)
            return rng.choice(kinds) if rng.random() < rate else None

        self.fault_policy = draw

    def _next_fault(self, index: int) -> str | None:
        with self._lock:
            if self._faults:
                return self._faults.popleft()
        return self.fault_policy(index) if self.fault_policy else None

    # ----------------------------------------------------------------------------------- recording
    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received, in arrival order (faulted ones included)."""
        with self._lock:
            return [e.request for e in self.exchanges]

    @property
    def replies(self) -> list[dict[str, Any] | None]:
        """What was answered to each request (a message or an error body; None if dropped/in flight)."""
        with self._lock:
            return [e.body for e in self.exchanges]

    def reset(self) -> None:
        """Forget recorded exchanges, queued faults and the prompt cache."""
        with self._lock:
            self.exchanges.clear()
            self.policy_errors.clear()
            self._faults.clear()
        self._cache.clear()

    def _record(self, request: dict[str, Any]) -> Exchange:
        """Record a request and draw its fault."""
        with self._lock:
            exchange = Exchange(index=len(self.exchanges), request=request)
            self.exchanges.append(exchange)
        exchange.fault = self._next_fault(exchange.index)
        return exchange

    # ------------------------------------------------------------------------------------ answering
    def policy_for(self, request: dict[str, Any]) -> Policy:
        """The reader for a read-back request (when there is one), else the policy."""
        from webtask_core.testing.page_reader import is_read_back

        return self.reader if self.reader is not None and is_read_back(request) else self.policy

    def _error_answer(self, exchange: Exchange, *, retry_after_ms: int | None = None) -> Answer | None:
        """The error for an injected error fault or a request the API would reject; None to go on."""
        request, fault = exchange.request, exchange.fault
        if fault in ERROR_FAULTS:
            status, error_type, message = ERROR_FAULTS[fault]
            headers = {}
            if status in _RETRYABLE_STATUSES and retry_after_ms is not None:
                headers["retry-after-ms"] = str(retry_after_ms)
            return status, error_body(error_type, message), headers
        problem = validate_request(request) if self.validate else None
        if problem is None and self.validate and self.thinking:
            problem = self._check_thinking(request)
        if problem is not None:
            return 400, error_body("invalid_request_error", problem), {}
        return None

    def _policy_failed(self, error: Exception) -> Answer:
        # A broken policy surfaces as a 400 naming it, never retried.
        self.policy_errors.append(error)
        message = f"fake server: the policy raised {type(error).__name__}: {error}"
        return 400, error_body("invalid_request_error", message), {}

    def _answer_before_policy(self, exchange: Exchange, *, retry_after_ms: int | None = None) -> Answer | None:
        """The answer when the policy is not asked (an error fault, a rejected request, a model fault
        that replaces the reply); None when the policy decides."""
        error = self._error_answer(exchange, retry_after_ms=retry_after_ms)
        if error is not None:
            return error
        canned = self._canned_reply(exchange)
        return None if canned is None else (200, self._message_body(exchange.request, canned), {})

    def _answer_from_policy(self, exchange: Exchange, result: Any) -> Answer:
        """The answer to what the policy returned (the transport calls it: threads differ)."""
        try:
            reply = self._policy_reply(exchange, result)
        except Exception as error:  # not a Reply, or one a fault cannot be worked into: a 400 naming it
            return self._policy_failed(error)
        return 200, self._message_body(exchange.request, reply), {}

    def _canned_reply(self, exchange: Exchange) -> Reply | None:
        """The reply of a model fault that replaces the policy's, or None to ask the policy."""
        fault = exchange.fault
        if fault == "unknown_tool":
            name = f"not_a_tool_{next(self._unknown_tool_names)}"
            return Reply(tool_uses=[ToolUse(name=name, input={})])
        if fault == "no_tool_call":
            return Reply(text="I looked at the page and I think everything is fine.", stop_reason="end_turn")
        if fault == "empty":
            return Reply(stop_reason="end_turn")
        if fault == "refusal":
            return Reply(stop_reason="refusal")
        return None

    def _policy_reply(self, exchange: Exchange, result: Any) -> Reply:
        """What the policy returned, checked, with a malformed-reply fault worked in."""
        if not isinstance(result, Reply):
            raise TypeError(f"policy must return a Reply, got {type(result).__name__}")
        exchange.reply = result
        forced = _forced_tool(exchange.request)
        if forced is not None and forced not in [use.name for use in result.tool_uses]:
            raise ValueError(f"the request forces a call of {forced!r} (tool_choice) and the policy's reply "
                             f"does not make one ({[use.name for use in result.tool_uses]})")
        fault = exchange.fault
        if fault not in ("malformed_input", "malformed_types"):
            return result
        tool_names = [name for t in exchange.request.get("tools") or []
                      if isinstance(t, dict) and isinstance(name := t.get("name"), str)]
        uses = [ToolUse(u.name, u.input, u.id) for u in result.tool_uses] or [
            ToolUse(name=(tool_names or ["tool"])[0], input={})
        ]
        first = uses[0]
        if fault == "malformed_input":
            first.input = json.dumps(first.input)[: max(1, len(json.dumps(first.input)) // 2)]
        else:
            items = first.input.items() if isinstance(first.input, dict) else ()
            first.input = {k: _wrong_type(v) for k, v in items} or {"unexpected_field": 1}
        return Reply(text=result.text, tool_uses=uses, stop_reason=result.stop_reason)

    def _sign(self, thinking: str) -> str:
        return hashlib.sha256((self._signing_key + thinking).encode()).hexdigest()[:40]

    def _check_thinking(self, request: dict[str, Any]) -> str | None:
        assistant_turns = [
            (i, m["content"]) for i, m in enumerate(request["messages"])
            if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        ]
        for index, content in assistant_turns:
            for position, block in enumerate(content):
                if block.get("type") == "thinking" and block.get("signature") != self._sign(str(block.get("thinking"))):
                    return f"messages.{index}.content.{position}: Invalid `signature` in `thinking` block"
        if assistant_turns:
            index, content = assistant_turns[-1]
            if any(b.get("type") == "tool_use" for b in content) and content[0].get("type") != "thinking":
                return (
                    f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                    f"`{content[0].get('type')}`. When `thinking` is enabled, a final `assistant` message must start "
                    "with a thinking block (preceding the lastmost set of `tool_use` and `tool_result` blocks)."
                )
        return None

    def _message_body(self, request: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if self.thinking and reply.tool_uses and _forced_tool(request) is None:  # no thinking on a forced call
            thought = f"I will call {', '.join(u.name for u in reply.tool_uses)} next."
            content.append({"type": "thinking", "thinking": thought, "signature": self._sign(thought)})
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for use in reply.tool_uses:
            content.append({"type": "tool_use", "id": use.id or new_id("toolu_"), "name": use.name, "input": use.input})
        stop_reason = reply.stop_reason or ("tool_use" if reply.tool_uses else "end_turn")
        input_tokens, cache_read, cache_write = self._cache.usage(request)
        body: dict[str, Any] = {
            "id": new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": self.reply_model or request.get("model") or "fake-model",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": max(1, estimate_tokens(content)),
                "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": cache_write,
            },
        }
        if stop_reason == "refusal":
            body["stop_details"] = {"type": "refusal", "category": None, "explanation": "injected refusal fault"}
        return body
