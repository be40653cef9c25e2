"""AnthropicLLM through the real SDK against FakeAnthropicServer: what is sent, what comes back."""

from __future__ import annotations

import asyncio
import threading

import pytest
from anthropic.resources.messages.messages import DEPRECATED_MODELS
from llm_helpers import png_base64

from webtask_core.errors import ConfigError, PermanentModelError
from webtask_core.llm import DEFAULT_MODEL, LLM, AnthropicLLM, known_models
from webtask_core.llm.anthropic import MAX_CACHE_BREAKPOINTS
from webtask_core.llm.types import ImageBlock, Message, TextBlock, ToolCall, ToolResult
from webtask_core.testing import FakeAnthropicServer, Reply, ToolUse


def _llm(server: FakeAnthropicServer, **kwargs) -> AnthropicLLM:
    return AnthropicLLM(base_url=server.base_url, api_key="test", **kwargs)


def _breakpoints(request: dict) -> list[str]:
    """Where the request carries cache_control, as readable labels."""
    found = [f"tool:{t['name']}" for t in request.get("tools", []) if "cache_control" in t]
    found += ["system" for b in request.get("system", []) if "cache_control" in b]
    for index, message in enumerate(request["messages"]):
        for position, block in enumerate(message["content"]):
            if "cache_control" in block:
                found.append(f"messages.{index}.{position}")
    return found


def test_default_model_is_known_and_not_deprecated():
    assert DEFAULT_MODEL in known_models()
    assert DEFAULT_MODEL not in DEPRECATED_MODELS
    assert "sonnet" in DEFAULT_MODEL


@pytest.mark.parametrize("model", ["", "   ", None, 42])
def test_empty_or_non_string_model_is_rejected_with_known_models(model):
    with pytest.raises(ConfigError) as caught:
        AnthropicLLM(model, base_url="http://127.0.0.1:9", api_key="test")
    assert caught.value.parameter == "model"
    assert DEFAULT_MODEL in str(caught.value)


def test_unknown_but_well_formed_model_is_accepted():
    llm = AnthropicLLM("claude-future-9", base_url="http://127.0.0.1:9", api_key="test")
    assert llm.model == "claude-future-9"
    assert isinstance(llm, LLM)


def test_missing_credentials_are_a_config_error(monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path))  # no profile on disk either
    with pytest.raises(ConfigError) as caught:
        AnthropicLLM(base_url="http://127.0.0.1:9")
    assert caught.value.parameter == "api_key"


async def test_request_carries_system_tools_messages_and_cache_markers(tools, first_message, page_message):
    with FakeAnthropicServer() as server:
        reply = await _llm(server, max_tokens=1000).complete(
            system="You drive a browser.", messages=[first_message, page_message], tools=tools
        )
    request = server.requests[0]
    assert reply.text == "ok"
    assert request["model"] == DEFAULT_MODEL and request["max_tokens"] == 1000
    assert "temperature" not in request  # current models reject non-default sampling parameters
    assert request["system"] == [
        {"type": "text", "text": "You drive a browser.", "cache_control": {"type": "ephemeral"}}
    ]
    assert [t["name"] for t in request["tools"]] == ["click", "fill"]
    assert request["tools"][0]["input_schema"]["required"] == ["element_id"]
    assert _breakpoints(request) == ["tool:fill", "system", "messages.0.0"]


async def test_cache_system_false_and_temperature_when_set(tools, first_message):
    with FakeAnthropicServer() as server:
        await _llm(server, temperature=0.2).complete(
            system="sys", messages=[first_message], tools=tools, cache_system=False
        )
    assert "cache_control" not in server.requests[0]["system"][0]
    assert server.requests[0]["temperature"] == 0.2


async def test_never_more_than_four_breakpoints_and_the_latest_are_kept(tools):
    messages = []
    for step in range(6):
        messages.append(Message(role="user", content=[TextBlock(text=f"user {step}")], cache=True))
        messages.append(Message(role="assistant", content=[TextBlock(text=f"assistant {step}")]))
    messages.append(Message(role="user", content=[TextBlock(text="now")], cache=True))
    with FakeAnthropicServer() as server:  # the server answers 400 to more than four
        await _llm(server).complete(system="sys", messages=messages, tools=tools)
    marks = _breakpoints(server.requests[0])
    assert len(marks) == MAX_CACHE_BREAKPOINTS
    assert marks == ["messages.6.0", "messages.8.0", "messages.10.0", "messages.12.0"]


async def test_image_and_tool_round_trip_encoding(tools, first_message):
    image = png_base64(64, 48)
    conversation = [
        first_message,
        Message(
            role="assistant",
            content=[TextBlock(text="Clicking."), ToolCall(id="toolu_a", name="click", input={"element_id": "b-1"})],
        ),
        Message(
            role="user",
            content=[
                ToolResult(
                    tool_call_id="toolu_a",
                    content=[TextBlock(text="element covered"), ImageBlock(media_type="image/png", data=image)],
                    is_error=True,
                ),
                TextBlock(text="<page/>"),
                ImageBlock(media_type="image/jpeg", data=png_base64()),
            ],
            cache=True,
        ),
    ]
    with FakeAnthropicServer() as server:
        await _llm(server).complete(system="sys", messages=conversation, tools=tools)
    sent = server.requests[0]["messages"]
    assert sent[1]["content"][1] == {"type": "tool_use", "id": "toolu_a", "name": "click", "input": {"element_id": "b-1"}}
    result = sent[2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_a" and result["is_error"] is True
    assert result["content"][1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}}
    assert sent[2]["content"][2]["source"]["media_type"] == "image/jpeg"
    assert sent[2]["content"][2]["cache_control"] == {"type": "ephemeral"}  # last block of a cached message


async def test_several_tool_calls_usage_and_model_are_parsed(tools, first_message):
    def policy(request):
        return Reply(
            text="Filling the form.",
            tool_uses=[
                ToolUse("fill", {"element_id": "input-0", "text": "Red shoes"}), ToolUse("click", {"element_id": "button-3"})
            ],
        )

    with FakeAnthropicServer(policy, min_cache_tokens=0) as server:
        llm = _llm(server)
        first = await llm.complete(system="sys " * 200, messages=[first_message], tools=tools)
        second = await llm.complete(system="sys " * 200, messages=[first_message], tools=tools)
    assert first.text == "Filling the form." and first.stop_reason == "tool_use" and first.model == DEFAULT_MODEL
    assert [(c.name, c.input) for c in first.tool_calls] == [
        ("fill", {"element_id": "input-0", "text": "Red shoes"}),
        ("click", {"element_id": "button-3"}),
    ]
    sent_ids = [b["id"] for b in server.replies[0]["content"] if b["type"] == "tool_use"]
    assert [c.id for c in first.tool_calls] == sent_ids and all(i.startswith("toolu_") for i in sent_ids)
    assert first.usage.cache_write_tokens > 0 and first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens == first.usage.cache_write_tokens and second.usage.cache_write_tokens == 0
    assert first.usage.output_tokens > 0
    assert first.usage.input_tokens == server.replies[0]["usage"]["input_tokens"]


@pytest.mark.parametrize("fault", ["malformed_input", "malformed_types"])
async def test_malformed_tool_input_is_kept_as_sent(tools, first_message, fault):
    def policy(request):
        return Reply(tool_uses=[ToolUse("fill", {"element_id": "input-0", "text": "x"})])

    with FakeAnthropicServer(policy) as server:
        server.inject(fault)
        reply = await _llm(server).complete(system="sys", messages=[first_message], tools=tools)
    sent_input = server.replies[0]["content"][0]["input"]
    assert reply.tool_calls[0].input == sent_input
    if fault == "malformed_input":
        assert isinstance(sent_input, str)
    else:
        assert sent_input == {"element_id": 12345, "text": 12345}


async def test_malformed_input_is_wrapped_when_sent_back(tools, first_message):
    conversation = [
        first_message,
        Message(role="assistant", content=[ToolCall(id="toolu_b", name="fill", input='{"element_id": ')]),
        Message(role="user", content=[ToolResult(tool_call_id="toolu_b", content=[TextBlock(text="bad input")], is_error=True)]),
    ]
    with FakeAnthropicServer() as server:  # the server, like the API, rejects a non-object input
        await _llm(server).complete(system="sys", messages=conversation, tools=tools)
    assert server.requests[0]["messages"][1]["content"][0]["input"] == {"invalid_input": '{"element_id": '}


@pytest.mark.parametrize(
    ("fault", "text", "calls"),
    [("no_tool_call", True, 0), ("empty", False, 0), ("unknown_tool", False, 1)],
)
async def test_model_faults_reach_the_caller_as_replies(tools, first_message, fault, text, calls):
    with FakeAnthropicServer() as server:
        server.inject(fault)
        reply = await _llm(server).complete(system="sys", messages=[first_message], tools=tools)
    assert bool(reply.text) is text and len(reply.tool_calls) == calls
    if fault == "unknown_tool":
        assert reply.tool_calls[0].name not in {t.name for t in tools}
    else:
        assert reply.stop_reason == "end_turn"


async def test_refusal_is_permanent(tools, first_message):
    with FakeAnthropicServer() as server:
        server.inject("refusal")
        with pytest.raises(PermanentModelError, match="model refused: injected refusal fault"):
            await _llm(server).complete(system="sys", messages=[first_message], tools=tools)


async def test_thinking_blocks_of_a_tool_turn_are_sent_back_unmodified(tools, first_message):
    """Thinking models want the thinking of the last tool-use turn back as it was (the fake checks)."""

    def conversation(reply):
        call = reply.tool_calls[0]
        return [
            first_message,
            Message(role="assistant", content=[*reply.reasoning, TextBlock(text=reply.text), call]),
            Message(role="user", content=[ToolResult(tool_call_id=call.id, content=[TextBlock(text="clicked")])]),
        ]

    policy = lambda request: Reply(text="Going.", tool_uses=[ToolUse("click", {"element_id": "button-0"})])  # noqa: E731
    with FakeAnthropicServer(policy, thinking=True) as server:
        llm = _llm(server)
        reply = await llm.complete(system="sys", messages=[first_message], tools=tools)
        assert server.replies[0]["content"][0]["type"] == "thinking"
        assert reply.text == "Going."  # thinking is not part of the text
        await llm.complete(system="sys", messages=conversation(reply), tools=tools)
        assistant = server.requests[1]["messages"][1]["content"]
        assert assistant[0] == server.replies[0]["content"][0]
        assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use"]
        # The reasoning travels in the message itself, so another AnthropicLLM (another process, a
        # resumed session) sends it back too; leaving it out is what the API refuses.
        await _llm(server).complete(system="sys", messages=conversation(reply), tools=tools)
        reply.reasoning = []
        with pytest.raises(PermanentModelError, match="must start with a thinking block"):
            await _llm(server).complete(system="sys", messages=conversation(reply), tools=tools)


def test_a_new_event_loop_gets_a_fresh_http_client(tools, first_message):
    """asyncio.run twice (or Prefect running steps on another loop) must not hit a closed loop."""
    with FakeAnthropicServer() as server:
        llm = _llm(server)
        replies = [asyncio.run(llm.complete(system="s", messages=[first_message], tools=tools)) for _ in range(2)]
        in_thread: list = []
        thread = threading.Thread(
            target=lambda: in_thread.append(asyncio.run(llm.complete(system="s", messages=[first_message], tools=tools)))
        )
        thread.start()
        thread.join()
    assert [r.text for r in replies + in_thread] == ["ok", "ok", "ok"]


async def test_bedrock_client_reaches_the_fake_through_bedrock_paths(tools, first_message):
    with FakeAnthropicServer() as server:
        llm = AnthropicLLM.bedrock(base_url=server.base_url, aws_region="us-east-1", api_key="test-bearer")
        reply = await llm.complete(system="sys", messages=[first_message], tools=tools)
        await llm.aclose()
    request = server.requests[0]
    assert reply.text == "ok"
    assert request["model"] == "global.anthropic.claude-sonnet-5-5"  # taken from /model/{id}/invoke
    assert request["anthropic_version"]  # Bedrock's body field
