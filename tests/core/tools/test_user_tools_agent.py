"""The caller's own tools in the agent loop: offered to the model, called through Agent.do in real
Chromium with the offline model, their results (and their failures) seen by the model next step."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Literal

import pytest

from webtask_core import Agent, ToolContext, Worker, tool
from webtask_core.errors import ActionError, ConfigError, TransientError
from webtask_core.llm.anthropic import AnthropicLLM
from webtask_core.testing import FakeAnthropicServer, Marketplace, ReplayPolicy, Reply, ToolUse
from webtask_core.testing.request_view import last_tool_results

DONE = ToolUse("complete", {"feedback": "done"})
TOKEN = "tok-93b1-very-secret"


@contextlib.asynccontextmanager
async def fake_model(script: Sequence[Reply | ToolUse]) -> AsyncIterator[tuple[FakeAnthropicServer, AnthropicLLM]]:
    async with FakeAnthropicServer(ReplayPolicy(script)) as server:
        async with AnthropicLLM(base_url=server.base_url, api_key="test", max_retries=0, timeout_s=10) as llm:
            yield server, llm


@pytest.fixture
def shop() -> Iterator[Marketplace]:
    with Marketplace(preview_delay_ms=0) as running:
        yield running


async def _run(script: Sequence[Reply | ToolUse], tab: Any, tools: list[Any], **agent_options: Any):
    """Agent.do with these tools and this script; the result, the requests the model got, the agent."""
    async with fake_model(script) as (server, llm):
        agent = Agent(llm, browser=tab, tools=tools, **agent_options)
        result = await agent.do("Price SHOE-001.", max_steps=len(script))
        return result, server.requests, agent


def _results(request: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [tuple(shown) for shown in last_tool_results(request)]


@tool
async def lookup_price(sku: str, currency: Literal["USD", "EUR"] = "USD") -> dict[str, Any]:
    """Look up the catalogue price of an item.

    Args:
        sku: The item's SKU, e.g. SHOE-001.
    """
    if sku == "SHOE-404":
        raise ActionError(f"no item has the SKU {sku!r}; the SKUs are SHOE-001, SHOE-002")
    if sku == "BUG":
        raise KeyError(sku)  # a bug in the tool, not a mistake of the model
    return {"sku": sku, "price": 45.0, "currency": currency}


async def test_the_model_is_offered_a_user_tool_calls_it_and_sees_its_result(browser_session):
    result, requests, agent = await _run(
        [ToolUse("lookup_price", {"sku": "SHOE-001", "currency": "EUR"}), DONE], browser_session, [lookup_price]
    )
    assert result.ok and result.steps == 2
    names = [spec["name"] for spec in requests[0]["tools"]]
    assert names[:2] == ["navigate", "click"] and names[-1] == "lookup_price"
    spec = requests[0]["tools"][-1]
    assert spec["description"] == "Look up the catalogue price of an item."
    assert spec["input_schema"]["required"] == ["sku"]
    assert spec["input_schema"]["properties"]["sku"]["description"] == "The item's SKU, e.g. SHOE-001."
    assert _results(requests[1]) == [
        ("lookup_price", False, '{"sku":"SHOE-001","price":45.0,"currency":"EUR"}')
    ]
    assert agent.last_session.steps[0].tool_calls[0].ok


async def test_bad_input_an_action_error_and_a_bug_are_errors_the_model_sees_and_the_loop_goes_on(
    browser_session, caplog
):
    caplog.set_level(logging.ERROR, logger="webtask_core.tools.function")
    script = [
        Reply(tool_uses=[ToolUse("lookup_price", {"sku": 5, "colour": "red"}), DONE]),
        ToolUse("lookup_price", {"sku": "SHOE-404"}),
        Reply(tool_uses=[ToolUse("lookup_price", {"sku": "BUG"}), DONE]),
        ToolUse("lookup_price", {"sku": "SHOE-001"}),
        DONE,
    ]
    result, requests, _ = await _run(script, browser_session, [lookup_price])

    assert result.ok and result.steps == 5
    assert _results(requests[1]) == [
        ("lookup_price", True, "invalid input for lookup_price: sku: Input should be a valid string (got 5); "
                               "colour: Extra inputs are not permitted"),
        ("complete", True, "not run: an earlier call in this turn (lookup_price) failed"),
    ]
    assert _results(requests[2]) == [
        ("lookup_price", True, "no item has the SKU 'SHOE-404'; the SKUs are SHOE-001, SHOE-002")
    ]
    assert _results(requests[3]) == [
        ("lookup_price", True, "the tool lookup_price failed: KeyError: 'BUG'"),
        ("complete", True, "not run: an earlier call in this turn (lookup_price) failed"),
    ]
    assert not _results(requests[4])[0][1]
    # The developer gets the bug with its traceback in the log.
    [record] = caplog.records
    assert record.getMessage() == "tool lookup_price raised KeyError"
    assert record.exc_info is not None and "raise KeyError(sku)" in caplog.text


async def test_a_transient_error_from_a_tool_propagates_and_the_step_can_be_retried(browser_session):
    attempts: list[str] = []

    @tool
    async def fetch_stock(sku: str) -> int:
        """How many of an item are in stock."""
        attempts.append(sku)
        if len(attempts) == 1:
            raise TransientError("the stock service is restarting")
        return 3

    script = [ToolUse("fetch_stock", {"sku": "SHOE-001"}), ToolUse("fetch_stock", {"sku": "SHOE-001"}), DONE]
    async with fake_model(script) as (server, llm):
        agent = Agent(llm, browser=browser_session, tools=[fetch_stock])
        agent.set_task("How many are in stock?", max_steps=3)
        with pytest.raises(TransientError, match="restarting"):
            await agent.run_step()
        assert agent.task_context.steps == []  # nothing recorded: the step is retried whole
        await agent.run_step()
        await agent.run_step()
        requests = server.requests
    assert attempts == ["SHOE-001", "SHOE-001"] and agent.last_result.ok
    assert _results(requests[2]) == [("fetch_stock", False, "3")]


async def test_a_plain_function_runs_in_a_worker_thread(browser_session):
    threads: list[int] = []

    def count_listings(seller: str) -> str:
        """How many listings a seller has (a blocking call to an internal API)."""
        threads.append(threading.get_ident())
        return f"{seller} has 7 listings"

    result, requests, _ = await _run(
        [ToolUse("count_listings", {"seller": "demo"}), DONE], browser_session, [count_listings]  # undecorated
    )
    assert result.ok
    assert _results(requests[1]) == [("count_listings", False, "demo has 7 listings")]
    assert threads and threads[0] != threading.get_ident()  # not on the event loop's thread


async def test_a_tool_reads_and_drives_the_page_through_its_context(browser_session, shop):
    @tool
    async def read_page(selector: str, ctx: ToolContext) -> str:
        """The text of the first element a CSS selector matches on the current page."""
        assert ctx.tab.page is not None
        return await ctx.tab.page.inner_text(selector, timeout=2000)

    @tool
    async def open_missing(ctx: ToolContext) -> str:
        """Open a page the site does not have."""
        return await ctx.tab.navigate(shop.url("/no-such-page"))

    script = [
        ToolUse("read_page", {"selector": "h1"}),
        # A tool that takes the context may move the page: the click after it names an id of the old page.
        Reply(tool_uses=[ToolUse("open_missing", {}), ToolUse("click", {"element_id": "button-0"})]),
        ToolUse("read_page", {"selector": "body"}),
        DONE,
    ]
    result, requests, _agent = await _run(script, browser_session, [read_page, open_missing], start_url=shop.url("/login"))

    assert result.ok
    assert _results(requests[1]) == [("read_page", False, "Log in")]
    [opened, click] = _results(requests[2])
    assert opened[:2] == ("open_missing", False) and "/no-such-page" in opened[2]
    assert click[1] and click[2].startswith("not run: the page changed to " + shop.url("/no-such-page"))
    assert _results(requests[3]) == [("read_page", False, '{"detail":"Not Found"}')]


async def test_secret_values_in_a_tools_result_error_and_log_are_scrubbed(browser_session, caplog):
    caplog.set_level(logging.ERROR, logger="webtask_core.tools.function")
    received: list[str] = []

    @tool
    async def check_token(token: str, ctx: ToolContext) -> str:
        """Check an API token with the marketplace's API."""
        received.append(token)
        real = await ctx.reveal(token)  # the model writes the placeholder; the tool asks for the value
        if real != TOKEN:
            raise ValueError(f"the API refused {real}")
        return f"the API accepted {real}"

    script = [
        ToolUse("check_token", {"token": "{{secret:api_token}}"}),
        ToolUse("check_token", {"token": "wrong"}),
        ToolUse("check_token", {"token": TOKEN}),  # the model's own text is scrubbed too
        DONE,
    ]
    result, requests, agent = await _run(script, browser_session, [check_token], secrets={"api_token": TOKEN})

    assert result.ok
    assert received == ["{{secret:api_token}}", "wrong", "{{secret:api_token}}"]
    assert _results(requests[1]) == [("check_token", False, "the API accepted {{secret:api_token}}")]
    assert _results(requests[2]) == [("check_token", True, "the tool check_token failed: ValueError: the API refused wrong")]
    assert _results(requests[3]) == [("check_token", False, "the API accepted {{secret:api_token}}")]
    assert not any(TOKEN in str(request) for request in requests)
    assert TOKEN not in agent.last_session.model_dump_json()


async def test_a_failing_tool_never_logs_a_secret_value(browser_session, caplog):
    caplog.set_level(logging.ERROR, logger="webtask_core.tools.function")

    @tool
    async def leak(ctx: ToolContext) -> str:
        """A tool whose error quotes a secret."""
        raise RuntimeError(f"login failed for {await ctx.reveal('{{secret:api_token}}')}")

    result, requests, _ = await _run([ToolUse("leak", {}), DONE], browser_session, [leak], secrets={"api_token": TOKEN})
    assert result.ok
    assert _results(requests[1]) == [("leak", True, "the tool leak failed: RuntimeError: login failed for {{secret:api_token}}")]
    assert "login failed for {{secret:api_token}}" in caplog.text and TOKEN not in caplog.text


@tool
def click(element_id: str) -> str:
    """My own click."""
    return element_id


async def test_a_name_clash_is_a_config_error_from_the_constructor_before_anything_starts():
    async with fake_model([DONE]) as (server, llm):
        with pytest.raises(ConfigError) as caught:
            Agent(llm, tools=[click])
        with pytest.raises(ConfigError, match="another of your tools"):
            Agent(llm, tools=[lookup_price, lookup_price])
        assert server.requests == []
    assert caught.value.parameter == "tools"
    assert "'click' is already the name of a built-in tool" in str(caught.value)


async def test_a_worker_offers_its_tools_in_every_task():
    async with fake_model([]) as (_, llm):
        worker = Worker(llm, lambda: None, tools=[lookup_price])  # type: ignore[arg-type, return-value]
        first = worker.start("one task")
        second = worker.start("another", output_schema={"type": "object", "properties": {"x": {"type": "string"}}})
    assert first.tools.get("lookup_price") is lookup_price
    assert second.tools.names[-2:] == ["ask_human", "lookup_price"]
    assert Worker(llm, lambda: None).start("plain").tools.names[-1] == "ask_human"  # type: ignore[arg-type, return-value]
