"""`FakeLLM`: the offline model in process, an `LLM` with no HTTP, for fast loop tests::

    llm = FakeLLM(MarketplaceListingPolicy())       # any policy FakeAnthropicServer takes
    async with Agent(llm, start_url=shop.url("/login"), ...) as agent:
        result = await agent.do(task)
    llm.requests                                    # the JSON bodies the policy was given
    llm.inject("overloaded")                        # the next complete() raises ModelTransientError

The request body is built by the real client's code (``build_request``) and answered by the same
:class:`~webtask_core.testing.fake_messages.FakeMessagesAPI` as :class:`FakeAnthropicServer`; the
answer is read by the real client's parser and error mapping. So a policy, its replies, the usage
figures, a request the API would reject (a 400) and an injected fault come out as they would over
HTTP. What it leaves out is the transport: no SDK retries (one injected transient fault fails one
call, where the real client first retries it ``max_retries`` times), no timeouts to wait for, no API
key. To exercise those, use FakeAnthropicServer with ``AnthropicLLM``.
"""

from __future__ import annotations

import asyncio
import inspect
import json

from anthropic.types import Message as _SDKMessage

from webtask_core.errors import ModelTransientError
from webtask_core.llm.anthropic import DEFAULT_MODEL, build_request, checked_reply, status_error
from webtask_core.llm.types import Message, ModelReply, ToolSpec
from webtask_core.testing.fake_messages import KIT_READER, Answer, Exchange, FakeMessagesAPI, Policy

__all__ = ["FakeLLM"]

_NOT_RETRIED = "(FakeLLM: injected, not retried)"
# Transport faults have no HTTP answer in process: they fail as the client reports them.
_TRANSPORT_FAULTS = {
    "slow": "model API timed out",
    "drop": "could not reach the model API: the connection was dropped",
}


class FakeLLM(FakeMessagesAPI):
    """The `LLM` protocol answered in process by ``policy(request) -> Reply``.

    Args:
        policy: called with the JSON request body the API would receive (``model``, ``max_tokens``,
            ``system``, ``tools``, ``messages``); a sync policy runs on the event loop, an async one
            is awaited. Default: reply "ok".
        model: the model requested (``self.model``, as on AnthropicLLM).
        max_tokens: sent in the request, as AnthropicLLM does.
        latency_s: an ``asyncio.sleep`` before every answer, standing in for the model's time.
        min_cache_tokens, validate, thinking, reader: as on FakeAnthropicServer (``reader``: who
            answers the read-back's requests; by default the kit's ListingPageReader).
        reply_model: the ``model`` reported in replies (default: the one requested).

    Faults (:meth:`inject`, ``fault_policy``, :meth:`set_fault_rate`): every kind FakeAnthropicServer
    knows. Error kinds (``rate_limit``, ``overloaded``, ``server_error``, ``bad_request``,
    ``auth_error``, ``permission_denied``, ``not_found``) raise what AnthropicLLM raises for that
    answer once its retries are spent (ModelTransientError, PermanentModelError, UnknownModelError);
    ``slow`` and ``drop`` raise ModelTransientError at once; model faults (``malformed_input``,
    ``unknown_tool``...) change the reply; ``refusal`` raises PermanentModelError.
    """

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        model: str = DEFAULT_MODEL,
        max_tokens: int = 4096,
        latency_s: float = 0.0,
        min_cache_tokens: int = 1024,
        validate: bool = True,
        thinking: bool = False,
        reply_model: str | None = None,
        reader: Policy | None = KIT_READER,
    ):
        super().__init__(
            policy, latency_s=latency_s, min_cache_tokens=min_cache_tokens, validate=validate,
            reply_model=reply_model, thinking=thinking, reader=reader,
        )
        self.model = model
        self.max_tokens = max_tokens

    async def complete(
        self,
        *,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        cache_system: bool = True,
        tool_choice: str | None = None,
    ) -> ModelReply:
        params = build_request(system=system, messages=messages, tools=tools, cache_system=cache_system,
                               tool_choice=tool_choice)
        # Through JSON, as the server receives it: the policy gets plain data, never our objects.
        request = json.loads(json.dumps({"max_tokens": self.max_tokens, "model": self.model, **params}))
        exchange = self._record(request)
        if exchange.fault in _TRANSPORT_FAULTS:
            exchange.dropped = True
            raise ModelTransientError(f"{_TRANSPORT_FAULTS[exchange.fault]} {_NOT_RETRIED}")
        status, body, _ = await self._answer(exchange)
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        exchange.status, exchange.body = status, body
        if status != 200:
            error = body["error"]
            raise status_error(status, error["type"], error["message"], retried=_NOT_RETRIED, model=self.model)
        # The SDK's own Message, built the way the client builds it from a response body.
        return checked_reply(_SDKMessage.construct(**body))

    async def _answer(self, exchange: Exchange) -> Answer:
        answer = self._answer_before_policy(exchange)
        if answer is not None:
            return answer
        try:
            result = self.policy_for(exchange.request)(exchange.request)
            if inspect.isawaitable(result):
                result = await result
        except Exception as failure:  # a broken policy is answered with a 400 naming it
            return self._policy_failed(failure)
        return self._answer_from_policy(exchange, result)

    async def aclose(self) -> None:
        """Nothing to close; here so FakeLLM can stand wherever AnthropicLLM does."""

    async def __aenter__(self) -> FakeLLM:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"FakeLLM(model={self.model!r}, policy={self.policy!r})"
