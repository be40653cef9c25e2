"""The model read: one call forcing report_listing, given the fields' names and labels (never their
values); a reply that is no reading is an error the read-back reports as unread. The fakes keep the
API's rules for a forced tool."""

from __future__ import annotations

import pytest

from webtask_core.browser.models import Observation
from webtask_core.errors import PermanentModelError
from webtask_core.llm.anthropic import AnthropicLLM, build_request
from webtask_core.llm.types import Message, TextBlock, ToolSpec
from webtask_core.readback import READ_TOOL, ReadBack
from webtask_core.readback.reader import ReadError, read_with_model
from webtask_core.testing import FakeAnthropicServer, FakeLLM, Reply, ToolUse

PAGE = Observation(url="http://shop/listings/1", title="Red boots", tabs=[], elements={}, scroll="",
                   tree='- h1 "Red boots"\n- text: "$45.00"\n- text: "Condition"\n- text: "Good"\n')
SPEC = ReadBack(fields={"title": "Red boots", "price": "45", "condition": "Good", "colour": "red"},
                labels={"condition": "Zustand"})


async def test_the_kit_reads_the_page_as_a_model_would_from_a_forced_call():
    llm = FakeLLM()
    reading, usage = await read_with_model(llm, SPEC, PAGE, None)
    assert {name: field.shown for name, field in reading.fields.items()} == {
        "title": "Red boots", "price": "$45.00", "condition": "Good", "colour": None}
    assert reading.fields["condition"].label == "Condition" and reading.fields["title"].label is None
    (request,) = llm.requests
    assert request["tool_choice"] == {"type": "tool", "name": READ_TOOL}
    text = request["messages"][0]["content"][0]["text"]
    assert '"condition": "Zustand"' in text and "45" not in text.split("<page")[0]  # labels, not values
    assert usage.input_tokens > 0


async def test_the_real_client_sends_the_forced_call_to_the_api():
    async with FakeAnthropicServer() as server:
        async with AnthropicLLM(base_url=server.base_url, api_key="test", max_retries=0) as llm:
            reading, _ = await read_with_model(llm, SPEC, PAGE, None)
    assert reading.fields["price"].shown == "$45.00"
    assert server.requests[0]["tool_choice"] == {"type": "tool", "name": READ_TOOL}


async def test_a_reply_that_is_no_reading_is_a_read_error():
    not_a_reading = FakeLLM(reader=lambda request: Reply(tool_uses=[ToolUse(READ_TOOL, {"fields": "everything ok"})]))
    with pytest.raises(ReadError, match="does not validate: fields"):
        await read_with_model(not_a_reading, SPEC, PAGE, None)


async def test_a_policy_that_does_not_make_the_forced_call_is_told_so():
    llm = FakeLLM(lambda request: Reply(text="All fine."), reader=None)  # the policy answers read-backs
    with pytest.raises(PermanentModelError, match="forces a call of 'report_listing'"):
        await read_with_model(llm, SPEC, PAGE, None)


def test_a_forced_tool_must_be_one_of_the_tools_and_the_fakes_say_so():
    message = Message(role="user", content=[TextBlock(text="hi")])
    tool = ToolSpec(name="report_listing", description="d", input_schema={"type": "object"})
    with pytest.raises(PermanentModelError, match="not one of the tools"):
        build_request(system="s", messages=[message], tools=[tool], cache_system=False, tool_choice="other")
    from webtask_core.testing.fake_anthropic_checks import validate_request

    request = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}],
               "tools": [{"name": "report_listing", "input_schema": {}}]}
    assert "not found" in validate_request(request | {"tool_choice": {"type": "tool", "name": "nope"}})
    assert "Thinking may not be enabled" in validate_request(
        request | {"tool_choice": {"type": "tool", "name": "report_listing"}, "thinking": {"type": "enabled"}})
    assert validate_request(request | {"tool_choice": {"type": "tool", "name": "report_listing"}}) is None
