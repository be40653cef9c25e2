"""FakeLLM against FakeAnthropicServer + AnthropicLLM: the same request, reply and error for the same
policy and fault, without HTTP."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from llm_helpers import png_base64

from webtask_core.errors import ModelTransientError, PermanentModelError, UnknownModelError
from webtask_core.llm import LLM, AnthropicLLM, Message, ModelReply, TextBlock, ToolCall, ToolResult, ToolSpec
from webtask_core.llm.types import ImageBlock
from webtask_core.testing import FakeAnthropicServer, FakeLLM, ReplayPolicy, Reply, ToolUse
from webtask_core.testing.fake_messages import ERROR_FAULTS, FAULT_KINDS, MODEL_FAULTS


def conversation(first: Message, page: Message) -> list[Message]:
    """A task, one tool-use turn with its result, and the page: what the worker sends on step 2."""
    return [
        first,
        Message(role="assistant", content=[
            TextBlock(text="Clicking."), ToolCall(id="toolu_1", name="click", input={"element_id": "button-0"})
        ]),
        Message(role="user", content=[
            ToolResult(tool_call_id="toolu_1", content=[TextBlock(text="clicked")]),
            *page.content,
        ], cache=True),
    ]


def script() -> ReplayPolicy:
    return ReplayPolicy([
        Reply(text="Filling.", tool_uses=[ToolUse("fill", {"element_id": "input-0", "text": "boots"}, id="toolu_a")]),
        ToolUse("complete", {"feedback": "done"}, id="toolu_b"),
    ])


@contextlib.asynccontextmanager
async def over_http(policy: Any, **options: Any) -> AsyncIterator[tuple[FakeAnthropicServer, AnthropicLLM]]:
    async with FakeAnthropicServer(policy, **options) as server:
        # No SDK retries: one injected fault is one failed call, as with FakeLLM.
        async with AnthropicLLM(base_url=server.base_url, api_key="test", max_retries=0, timeout_s=1.0) as llm:
            yield server, llm


async def ask(llm: Any, messages: list[Message], tools: list[ToolSpec]) -> ModelReply:
    return await llm.complete(system="You drive a browser.", messages=messages, tools=tools)


def test_it_is_an_llm_and_an_async_context_manager():
    assert isinstance(FakeLLM(), LLM)
    assert FakeLLM().model == AnthropicLLM(base_url="http://127.0.0.1:1", api_key="test").model


async def test_same_requests_and_replies_as_over_http(tools, first_message, page_message):
    messages = conversation(first_message, page_message)
    async with over_http(script()) as (server, client):
        over_the_wire = [await ask(client, messages, tools), await ask(client, messages, tools)]
    async with FakeLLM(script()) as fake:
        in_process = [await ask(fake, messages, tools), await ask(fake, messages, tools)]

    assert fake.requests == server.requests  # the same JSON body, cache breakpoints and image included
    assert fake.requests[0]["messages"][2]["content"][-1]["type"] == "image"
    assert in_process == over_the_wire  # text, tool calls, usage (with prompt caching), model, stop reason
    assert in_process[1].usage.cache_read_tokens == over_the_wire[1].usage.cache_read_tokens
    assert [e.reply for e in fake.exchanges] == [e.reply for e in server.exchanges]


async def test_a_thinking_model_round_trips_its_reasoning(tools, first_message):
    fake = FakeLLM(ReplayPolicy([ToolUse("click", {"element_id": "button-0"}), ToolUse("complete", {"feedback": "ok"})]),
                   thinking=True)
    reply = await ask(fake, [first_message], tools)
    assert [r.data["type"] for r in reply.reasoning] == ["thinking"] and reply.reasoning[0].provider == "anthropic"
    answered = [first_message,
                Message(role="assistant", content=[*reply.reasoning, *reply.tool_calls]),
                Message(role="user", content=[ToolResult(tool_call_id=reply.tool_calls[0].id, content=[TextBlock(text="ok")])])]
    assert (await ask(fake, answered, tools)).tool_calls[0].name == "complete"
    without = [answered[0], Message(role="assistant", content=list(reply.tool_calls)), answered[2]]
    with pytest.raises(PermanentModelError, match="thinking") as caught:
        await ask(fake, without, tools)
    assert caught.value.status_code == 400


ERRORS = {
    "rate_limit": (ModelTransientError, 429), "overloaded": (ModelTransientError, 529),
    "server_error": (ModelTransientError, 500), "bad_request": (PermanentModelError, 400),
    "auth_error": (PermanentModelError, 401), "permission_denied": (PermanentModelError, 403),
    "not_found": (UnknownModelError, 404), "slow": (ModelTransientError, None), "drop": (ModelTransientError, None),
    "refusal": (PermanentModelError, None),
}


def test_every_failing_fault_kind_is_covered():
    assert set(ERRORS) == FAULT_KINDS - set(MODEL_FAULTS) and set(ERROR_FAULTS) < set(ERRORS)


async def fail_then_recover(fake: Any, llm: Any, fault: str, messages: list[Message], tools: list[ToolSpec]) -> Exception:
    """Inject ``fault`` into ``fake``; the call ``llm`` makes fails (returned), the next one does not."""
    fake.inject(fault)
    with pytest.raises(Exception) as caught:
        await ask(llm, messages, tools)
    assert (await ask(llm, messages, tools)).text == "Filling."
    return caught.value


@pytest.mark.parametrize("fault", sorted(ERRORS))
async def test_a_fault_fails_as_it_does_over_http(tools, first_message, fault):
    kind, status = ERRORS[fault]
    async with over_http(script(), slow_s=3.0) as (server, client):
        over_the_wire = await fail_then_recover(server, client, fault, [first_message], tools)
    fake = FakeLLM(script())
    in_process = await fail_then_recover(fake, fake, fault, [first_message], tools)
    assert [type(e) for e in (over_the_wire, in_process)] == [kind, kind]
    assert [getattr(e, "status_code", None) for e in (over_the_wire, in_process)] == [status, status]
    assert len(fake.requests) == 2 and fake.exchanges[0].fault == fault


@pytest.mark.parametrize("fault", MODEL_FAULTS)
async def test_a_model_fault_changes_the_reply_as_it_does_over_http(tools, first_message, fault):
    def names_and_inputs(reply: ModelReply) -> list[tuple[str, Any]]:
        return [(call.name, call.input) for call in reply.tool_calls]

    async with over_http(script()) as (server, client):
        server.inject(fault)
        over_the_wire = await ask(client, [first_message], tools)
    fake = FakeLLM(script())
    fake.inject(fault)
    in_process = await ask(fake, [first_message], tools)
    assert names_and_inputs(in_process) == names_and_inputs(over_the_wire)
    assert (in_process.text, in_process.stop_reason) == (over_the_wire.text, over_the_wire.stop_reason)


async def test_a_request_the_api_would_reject_is_the_same_400(tools, first_message):
    orphan = Message(role="user", content=[ToolResult(tool_call_id="toolu_nowhere", content=[TextBlock(text="?")])])
    messages = [first_message, Message(role="assistant", content=[TextBlock(text="hm")]), orphan]
    async with over_http(script()) as (_, client):
        with pytest.raises(PermanentModelError) as over_the_wire:
            await ask(client, messages, tools)
    with pytest.raises(PermanentModelError) as in_process:
        await ask(FakeLLM(script()), messages, tools)
    assert in_process.value.status_code == over_the_wire.value.status_code == 400
    assert "unexpected `tool_use_id`" in str(in_process.value) and "unexpected `tool_use_id`" in str(over_the_wire.value)


async def test_a_broken_policy_is_a_400_naming_it_and_kept(tools, first_message):
    def broken(request: dict[str, Any]) -> Reply:
        raise KeyError("no page in the request")

    fake = FakeLLM(broken)
    with pytest.raises(PermanentModelError, match="the policy raised KeyError"):
        await ask(fake, [first_message], tools)
    assert isinstance(fake.policy_errors[0], KeyError)
    with pytest.raises(PermanentModelError, match="policy must return a Reply, got str"):
        await ask(FakeLLM(lambda request: "complete"), [first_message], tools)


async def test_an_async_policy_is_awaited_and_latency_is_waited_for(tools, first_message):
    async def policy(request: dict[str, Any]) -> Reply:
        await asyncio.sleep(0)
        return Reply(text=f"{len(request['messages'])} message(s)")

    fake = FakeLLM(policy, latency_s=0.05)
    started = asyncio.get_running_loop().time()
    assert (await ask(fake, [first_message], tools)).text == "1 message(s)"
    assert asyncio.get_running_loop().time() - started >= 0.05


async def test_seeded_fault_rates_and_reset(tools, first_message):
    fake = FakeLLM(script())
    fake.set_fault_rate(1.0, kinds=["overloaded"])
    with pytest.raises(ModelTransientError, match="529"):
        await ask(fake, [first_message], tools)
    fake.clear_faults()
    assert (await ask(fake, [first_message], tools)).text == "Filling."
    fake.reset()
    assert fake.requests == [] and fake.replies == []


async def test_images_are_sent_as_base64_like_the_client_does(tools):
    fake = FakeLLM()
    shot = ImageBlock(media_type="image/png", data=png_base64())
    await ask(fake, [Message(role="user", content=[TextBlock(text="<task>look</task>"), shot])], tools)
    (image,) = [b for b in fake.requests[0]["messages"][0]["content"] if b["type"] == "image"]
    assert image["source"] == {"type": "base64", "media_type": "image/png", "data": shot.data}
