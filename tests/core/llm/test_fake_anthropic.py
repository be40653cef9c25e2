"""FakeAnthropicServer on its own: plain HTTP in, Messages API JSON out."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from llm_helpers import png_base64

from webtask_core.errors import ModelTransientError
from webtask_core.llm import AnthropicLLM
from webtask_core.llm.types import Message, TextBlock
from webtask_core.testing import FakeAnthropicServer, Reply, ToolUse
from webtask_core.testing.fake_anthropic import FAULT_KINDS, TRANSIENT_FAULTS

TOOLS = [
    {"name": "click", "description": "Click.",
     "input_schema": {"type": "object", "properties": {"element_id": {"type": "string"}}}},
    {"name": "fill", "description": "Fill.", "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}},
]


def body(*messages: dict, tools=TOOLS, system="You drive a browser.", **extra) -> dict:
    return {"model": "claude-test", "max_tokens": 100, "system": system, "tools": tools, "messages": list(messages), **extra}


def user(*blocks) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]}


def post(server: FakeAnthropicServer, payload: dict, path: str = "/v1/messages", headers=None):
    request = urllib.request.Request(
        server.base_url + path, data=json.dumps(payload).encode(), method="POST",
        headers={"content-type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


def test_records_requests_and_answers_in_the_messages_api_shape():
    policy = lambda request: Reply(text="Clicking.", tool_uses=[ToolUse("click", {"element_id": "button-1"})])  # noqa: E731
    with FakeAnthropicServer(policy) as server:
        status, reply, headers = post(server, body(user("<task>go</task>")))
    assert status == 200 and server.requests == [body(user("<task>go</task>"))]
    assert server.replies == [reply] and server.exchanges[0].reply.text == "Clicking."
    assert reply["type"] == "message" and reply["role"] == "assistant" and reply["model"] == "claude-test"
    assert reply["id"].startswith("msg_") and headers["request-id"] == reply["id"]
    assert reply["content"][0] == {"type": "text", "text": "Clicking."}
    tool_use = reply["content"][1]
    assert tool_use["type"] == "tool_use" and tool_use["id"].startswith("toolu_")
    assert tool_use["input"] == {"element_id": "button-1"}
    assert reply["stop_reason"] == "tool_use"
    assert set(reply["usage"]) == {"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}
    assert reply["usage"]["input_tokens"] > 0


def test_unknown_paths_are_404_and_not_recorded():
    with FakeAnthropicServer() as server:
        status, reply, _ = post(server, body(user("x")), path="/v1/complete")
    assert status == 404 and reply["error"]["type"] == "not_found_error" and server.requests == []


def test_error_faults_use_the_api_error_shape_and_fast_retry_header():
    with FakeAnthropicServer(retry_after_ms=5) as server:
        server.inject("overloaded")
        server.inject("auth_error")
        overloaded = post(server, body(user("x")))
        auth = post(server, body(user("x")))
        ok = post(server, body(user("x")))
    assert overloaded[0] == 529 and overloaded[1]["type"] == "error"
    assert overloaded[1]["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert overloaded[2]["retry-after-ms"] == "5"
    assert auth[0] == 401 and "retry-after-ms" not in auth[2]
    assert ok[0] == 200
    assert [e.fault for e in server.exchanges] == ["overloaded", "auth_error", None]


def test_inject_rejects_unknown_kinds_and_bad_counts():
    server = FakeAnthropicServer()
    with pytest.raises(ValueError, match="unknown fault kind 'meteor'"):
        server.inject("meteor")
    with pytest.raises(ValueError, match="times must be >= 1"):
        server.inject("overloaded", times=0)


def test_fault_policy_by_request_index():
    with FakeAnthropicServer() as server:
        server.fault_policy = lambda index: "rate_limit" if index % 2 == 0 else None
        statuses = [post(server, body(user("x")))[0] for _ in range(4)]
        server.clear_faults()
        statuses.append(post(server, body(user("x")))[0])
    assert statuses == [429, 200, 429, 200, 200]


def test_seeded_fault_rate_is_reproducible_and_independent_of_timing():
    server = FakeAnthropicServer()
    server.set_fault_rate(0.3, seed=7)
    first = [server.fault_policy(i) for i in range(200)]
    server.set_fault_rate(0.3, seed=7)
    assert [server.fault_policy(i) for i in reversed(range(200))] == list(reversed(first))
    faulted = [k for k in first if k]
    assert 30 <= len(faulted) <= 90 and set(faulted) <= set(TRANSIENT_FAULTS)
    server.set_fault_rate(1.0, kinds=["empty"])
    assert {server.fault_policy(i) for i in range(20)} == {"empty"}
    with pytest.raises(ValueError):
        server.set_fault_rate(0.5, kinds=["meteor"])


@pytest.mark.parametrize(
    ("fault", "check"),
    [
        ("unknown_tool", lambda c, r: c[0]["type"] == "tool_use" and c[0]["name"] not in {"click", "fill"}),
        ("no_tool_call", lambda c, r: [b["type"] for b in c] == ["text"] and r["stop_reason"] == "end_turn"),
        ("empty", lambda c, r: c == [] and r["stop_reason"] == "end_turn"),
        ("refusal", lambda c, r: r["stop_reason"] == "refusal" and r["stop_details"]["type"] == "refusal"),
        ("malformed_input", lambda c, r: c[0]["name"] == "fill" and isinstance(c[0]["input"], str)),
        ("malformed_types", lambda c, r: c[0]["name"] == "fill" and c[0]["input"] == {"text": 12345}),
    ],
)
def test_model_fault_shapes(fault, check):
    policy = lambda request: Reply(tool_uses=[ToolUse("fill", {"text": "Red shoes"})])  # noqa: E731
    with FakeAnthropicServer(policy) as server:
        server.inject(fault)
        status, reply, _ = post(server, body(user("x")))
    assert status == 200 and check(reply["content"], reply)
    # Faults that replace the reply leave a stateful policy untouched; malformed ones use its reply.
    assert (server.exchanges[0].reply is not None) == fault.startswith("malformed")


def test_every_fault_kind_is_documented_in_one_set():
    assert {"rate_limit", "overloaded", "server_error", "slow", "drop", "malformed_input", "unknown_tool",
            "no_tool_call", "empty", "auth_error", "bad_request"} <= FAULT_KINDS


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (body(user("  ")), "non-whitespace text"),
        (body(user("text first", {"type": "tool_result", "tool_use_id": "toolu_1"})), "tool_result blocks must come first"),
        (body(user("x"), tools=[*TOOLS, TOOLS[0]]), "Tool names must be unique"),
        (body(user({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "bm90IGFuIGltYWdl"}})),
         "Could not process image"),
        (body(user("a"), {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "click", "input": {}}]},
              user("b")),
         "without `tool_result` blocks"),
        (body(*[user({"type": "text", "text": f"m{i}", "cache_control": {"type": "ephemeral"}}) for i in range(5)]),
         "maximum of 4 blocks with cache_control"),
        ({"model": "claude-test", "messages": [user("x")]}, "max_tokens"),
    ],
)
def test_requests_the_api_would_reject_get_its_400(payload, message):
    with FakeAnthropicServer() as server:
        status, reply, _ = post(server, payload)
    assert status == 400 and reply["error"]["type"] == "invalid_request_error"
    assert message in reply["error"]["message"]


def test_validation_can_be_switched_off_and_good_images_pass():
    with FakeAnthropicServer(validate=False) as server:
        assert post(server, body(user("  ")))[0] == 200
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png_base64(750, 100)}}
    with FakeAnthropicServer() as server:
        status, with_image, _ = post(server, body(user("look", image), tools=[], system=""))
        _, without_image, _ = post(server, body(user("look"), tools=[], system=""))
    assert status == 200
    assert with_image["usage"]["input_tokens"] - without_image["usage"]["input_tokens"] == 100  # 750*100/750


def test_prompt_cache_model_reads_the_longest_written_prefix():
    cached = {"type": "text", "text": "<task>" + "list the shoes " * 400 + "</task>", "cache_control": {"type": "ephemeral"}}
    system = [{"type": "text", "text": "rules " * 800, "cache_control": {"type": "ephemeral"}}]
    with FakeAnthropicServer(min_cache_tokens=1024) as server:
        first = post(server, body(user(cached, "page 1"), system=system))[1]["usage"]
        second = post(server, body(user(cached, "page 2"), system=system))[1]["usage"]
        other_task = dict(cached, text="<task>sell a hat</task>")
        third = post(server, body(user(other_task, "page 3"), system=system))[1]["usage"]
        server.reset()
        fourth = post(server, body(user(cached, "page 4"), system=system))[1]["usage"]
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 1024
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["cache_creation_input_tokens"] == 0 and second["input_tokens"] < 10
    # Same tools and system, another task: only the system prefix is read, the task is written.
    assert 0 < third["cache_read_input_tokens"] < first["cache_creation_input_tokens"]
    assert third["cache_creation_input_tokens"] > 0
    assert fourth == first  # reset() forgot the cache


def test_short_prefixes_are_not_cached():
    short = {"type": "text", "text": "short task", "cache_control": {"type": "ephemeral"}}
    with FakeAnthropicServer(min_cache_tokens=1024) as server:
        usages = [post(server, body(user(short)))[1]["usage"] for _ in range(2)]
    assert all(u["cache_read_input_tokens"] == 0 and u["cache_creation_input_tokens"] == 0 for u in usages)


def test_a_broken_or_wrongly_typed_policy_answers_400_naming_it():
    with FakeAnthropicServer(lambda request: "just text") as server:
        status, reply, _ = post(server, body(user("x")))
    assert status == 400 and "policy must return a Reply, got str" in reply["error"]["message"]
    assert isinstance(server.policy_errors[0], TypeError)


def test_wrong_key_is_401_when_the_server_checks_keys():
    with FakeAnthropicServer(api_key="k") as server:
        assert post(server, body(user("x")), headers={"x-api-key": "nope"})[0] == 401
        assert post(server, body(user("x")), headers={"x-api-key": "k"})[0] == 200
        assert post(server, body(user("x")), headers={"authorization": "Bearer k"})[0] == 200


def test_policy_calls_are_serialised_unless_asked_otherwise():
    inside, most = [0], [0]
    lock = threading.Lock()

    def policy(request):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.05)
        with lock:
            inside[0] -= 1
        return Reply(text="ok")

    for serialize, expected in ((True, 1), (False, 4)):
        most[0] = 0
        with FakeAnthropicServer(policy, serialize_policy=serialize) as server:
            with ThreadPoolExecutor(4) as pool:
                assert list(pool.map(lambda _: post(server, body(user("x")))[0], range(4))) == [200] * 4
        assert (most[0] == 1) if expected == 1 else (most[0] > 1)


async def test_async_policy_async_context_and_a_free_event_loop(tools):
    async def policy(request):
        await asyncio.sleep(0.01)
        return Reply(text="from async")

    ticks = []

    async def ticker():
        while True:
            ticks.append(1)
            await asyncio.sleep(0.01)

    def slow_sync_policy(request):
        time.sleep(0.2)  # would freeze the caller's loop if the server ran on it
        return Reply(text="slow")

    message = [Message(role="user", content=[TextBlock(text="go")])]
    async with FakeAnthropicServer(policy) as server:
        llm = AnthropicLLM(base_url=server.base_url, api_key="test")
        assert (await llm.complete(system="s", messages=message, tools=tools)).text == "from async"
        server.policy = slow_sync_policy
        task = asyncio.create_task(ticker())
        assert (await llm.complete(system="s", messages=message, tools=tools)).text == "slow"
        task.cancel()
    assert len(ticks) > 3


async def test_stop_closes_keep_alive_connections(tools):
    message = [Message(role="user", content=[TextBlock(text="go")])]
    server = FakeAnthropicServer().start()
    llm = AnthropicLLM(base_url=server.base_url, api_key="test", max_retries=0)
    assert (await llm.complete(system="s", messages=message, tools=tools)).text == "ok"
    server.stop()
    with pytest.raises(ModelTransientError):
        await llm.complete(system="s", messages=message, tools=tools)
    assert len(server.requests) == 1
    with pytest.raises(RuntimeError, match="not running"):
        server.base_url  # noqa: B018 - reading it raises
