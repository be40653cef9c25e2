"""Every fault the fake can play, through the real SDK's retries, mapped to the two webtask errors."""

from __future__ import annotations

import pytest

from webtask_core.errors import ModelTransientError, PermanentModelError
from webtask_core.llm import AnthropicLLM
from webtask_core.llm.types import Message, TextBlock, ToolResult
from webtask_core.testing import FakeAnthropicServer, Reply


def _llm(server: FakeAnthropicServer, **kwargs) -> AnthropicLLM:
    return AnthropicLLM(base_url=server.base_url, api_key=kwargs.pop("api_key", "test"), **kwargs)


async def _ask(llm: AnthropicLLM, tools, messages=None):
    messages = messages or [Message(role="user", content=[TextBlock(text="<task>go</task>")])]
    return await llm.complete(system="sys", messages=messages, tools=tools)


@pytest.mark.parametrize("fault", ["overloaded", "rate_limit", "server_error"])
async def test_one_transient_error_is_retried_by_the_sdk(tools, fault):
    with FakeAnthropicServer() as server:
        server.inject(fault)
        reply = await _ask(_llm(server), tools)
    assert reply.text == "ok"
    assert [e.fault for e in server.exchanges] == [fault, None]
    assert server.replies[0]["type"] == "error"


@pytest.mark.parametrize(("fault", "status"), [("overloaded", 529), ("rate_limit", 429), ("server_error", 500)])
async def test_more_failures_than_retries_become_model_transient_error(tools, fault, status):
    with FakeAnthropicServer() as server:
        server.inject(fault, times=3)
        with pytest.raises(ModelTransientError) as caught:
            await _ask(_llm(server, max_retries=2), tools)
    assert caught.value.status_code == status
    assert str(status) in str(caught.value) and "after the SDK's 2 retries" in str(caught.value)
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("fault", "status", "message"),
    [
        ("auth_error", 401, "invalid x-api-key"),
        ("bad_request", 400, "rejected by an injected fault"),
        ("permission_denied", 403, "does not have permission"),
        ("not_found", 404, "model: not found"),
    ],
)
async def test_client_errors_are_permanent_and_not_retried(tools, fault, status, message):
    with FakeAnthropicServer() as server:
        server.inject(fault)
        with pytest.raises(PermanentModelError) as caught:
            await _ask(_llm(server), tools)
    assert caught.value.status_code == status
    assert message in str(caught.value)
    assert len(server.requests) == 1


async def test_wrong_api_key_is_a_permanent_authentication_error(tools):
    with FakeAnthropicServer(api_key="right-key") as server:
        with pytest.raises(PermanentModelError, match="authentication_error: invalid x-api-key"):
            await _ask(_llm(server, api_key="wrong-key"), tools)
        assert (await _ask(_llm(server, api_key="right-key"), tools)).text == "ok"


async def test_slow_reply_past_the_timeout_is_transient(tools):
    calls = []
    with FakeAnthropicServer(lambda r: calls.append(r) or Reply(text="late"), slow_s=3.0) as server:
        server.inject("slow")
        with pytest.raises(ModelTransientError, match="timed out") as caught:
            await _ask(_llm(server, timeout_s=0.3, max_retries=0), tools)
    assert caught.value.status_code is None
    assert calls == []  # the stalled request never reached the policy


async def test_slow_reply_then_retry_succeeds_and_calls_the_policy_once(tools):
    calls = []
    with FakeAnthropicServer(lambda r: calls.append(r) or Reply(text="on time"), slow_s=3.0) as server:
        server.inject("slow")
        reply = await _ask(_llm(server, timeout_s=0.3, max_retries=1), tools)
    assert reply.text == "on time"
    assert len(calls) == 1 and len(server.requests) == 2


async def test_dropped_connection_is_transient_and_retried(tools):
    with FakeAnthropicServer() as server:
        server.inject("drop")
        assert (await _ask(_llm(server, max_retries=1), tools)).text == "ok"
        server.inject("drop")
        with pytest.raises(ModelTransientError, match="could not reach the model API"):
            await _ask(_llm(server, max_retries=0), tools)
    assert [e.dropped for e in server.exchanges] == [True, False, True]
    assert server.replies[0] is None


async def test_unreachable_server_is_transient(tools):
    server = FakeAnthropicServer().start()
    base_url = server.base_url
    server.stop()  # nothing listens on that port any more
    llm = AnthropicLLM(base_url=base_url, api_key="test", max_retries=0)
    with pytest.raises(ModelTransientError, match="could not reach"):
        await _ask(llm, tools)


async def test_a_request_the_api_would_reject_is_permanent_with_its_message(tools):
    orphan = [
        Message(role="user", content=[TextBlock(text="<task>go</task>")]),
        Message(role="assistant", content=[TextBlock(text="thinking aloud")]),
        Message(role="user", content=[ToolResult(tool_call_id="toolu_nowhere", content=[TextBlock(text="x")])]),
    ]
    with FakeAnthropicServer() as server:
        with pytest.raises(PermanentModelError, match="unexpected `tool_use_id`") as caught:
            await _ask(_llm(server), tools, orphan)
    assert caught.value.status_code == 400


async def test_a_broken_policy_surfaces_at_once_with_its_exception(tools):
    def policy(request):
        raise KeyError("no page in request")

    with FakeAnthropicServer(policy) as server:
        with pytest.raises(PermanentModelError, match="policy raised KeyError"):
            await _ask(_llm(server), tools)
    assert len(server.requests) == 1 and isinstance(server.policy_errors[0], KeyError)


async def test_bedrock_without_aws_credentials_is_a_permanent_error_naming_them(tools, monkeypatch, tmp_path):
    import os

    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    # Nothing to find: no credential files, and no instance-metadata lookup (it would leave the machine).
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with FakeAnthropicServer() as server:
        # A region no other test signs for: the SDK caches its boto3 session per region.
        llm = AnthropicLLM.bedrock(base_url=server.base_url, aws_region="ap-southeast-4")
        with pytest.raises(PermanentModelError) as caught:
            await _ask(llm, tools)
        await llm.aclose()
    assert "no AWS credentials" in str(caught.value) and "AWS_ACCESS_KEY_ID" in str(caught.value)
    assert "AWS_BEARER_TOKEN_BEDROCK" in str(caught.value) and "ap-southeast-4" in str(caught.value)
    assert server.requests == []  # raised while signing, before anything was sent
