"""The agent loop driven by FakeLLM (no HTTP) does what it does through FakeAnthropicServer and the
real client: the same steps and output on the demo marketplace, the same error for the same fault."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import SHOP_PASSWORD, USERS, ListingOutput, fake_model, listing_task
from pydantic import SecretStr

from webtask_core import Agent, WorkerStatus
from webtask_core.browser import Browser
from webtask_core.errors import ModelTransientError
from webtask_core.testing import FakeLLM, MarketplaceListingPolicy, ReplayPolicy, ToolUse
from webtask_core.testing.marketplace import Marketplace
from webtask_core.worker import WorkerOptions

SECRETS = WorkerOptions(secrets={"shop_password": SecretStr(SHOP_PASSWORD)})


async def list_one(llm: Any, browser: Browser, shop: Marketplace, photos: list[Path]) -> tuple[Any, Any]:
    tab = await browser.new_tab()
    try:
        agent = Agent(llm, browser=tab, options=SECRETS,
                      resources={"listing_image_1": photos[0], "listing_image_2": photos[1]})
        result = await agent.do(listing_task(shop.url("/listings")), max_steps=20, output_schema=ListingOutput)
    finally:
        await tab.close()
    return result, agent.last_session


def what_happened(result: Any, session: Any, requests: list[dict[str, Any]], shop: Marketplace) -> dict[str, Any]:
    """The run with the shop's address (two shops, two ports) and its random draft ids taken out."""
    record = {
        "status": result.status.value, "feedback": result.feedback, "output": result.output.model_dump(),
        "steps": [(step.url, step.model_text, [(c.name, c.input, c.ok) for c in step.tool_calls])
                  for step in session.steps],
        "requests": [(r["model"], r["max_tokens"], r["system"], r["tools"], [m["role"] for m in r["messages"]])
                     for r in requests],
    }
    text = re.sub(r"/listings/drafts/[0-9a-f]+", "/listings/drafts/DRAFT", json.dumps(record))
    return json.loads(text.replace(shop.base_url, "SHOP"))


async def test_the_listing_runs_the_same_in_process_as_over_http(browser: Browser, shop: Marketplace, photos: list[Path]):
    async with fake_model(MarketplaceListingPolicy()) as (server, client):
        result, session = await list_one(client, browser, shop, photos)
        over_http = what_happened(result, session, server.requests, shop)
    fake = FakeLLM(MarketplaceListingPolicy())
    with Marketplace(users=USERS, preview_delay_ms=150) as other_shop:
        result, session = await list_one(fake, browser, other_shop, photos)
        in_process = what_happened(result, session, fake.requests, other_shop)
        assert len(other_shop.listing_by_sku("SHOE-001")) == 1

    assert in_process["status"] == "completed" and in_process["output"]["listing_url"].startswith("SHOP/listings/")
    assert len(in_process["steps"]) >= 6  # log in, search, new listing, fill + upload, next, publish, report
    assert in_process == over_http
    assert result.usage == session.usage and result.usage.cache_read_tokens > 0  # the prompt cache model too


@pytest.mark.parametrize("step_retries", [0, 1])
async def test_an_injected_fault_ends_or_is_retried_as_over_http(browser: Browser, step_retries: int):
    def run_on(llm: Any) -> Agent:
        return Agent(llm, browser=browser, step_retries=step_retries, retry_delay_s=0,
                     options=WorkerOptions(screenshots=False))

    def script() -> ReplayPolicy:
        return ReplayPolicy([ToolUse("complete", {"feedback": "nothing to do"})])

    outcomes = []
    async with fake_model(script(), retry_after_ms=1) as (server, client):
        server.inject("overloaded", times=3)  # the client's 2 retries, then the step fails once
        outcomes.append(await _outcome(run_on(client)))
    fake = FakeLLM(script())
    fake.inject("overloaded")  # FakeLLM does not retry: one fault fails the step once
    outcomes.append(await _outcome(run_on(fake)))
    expected = ("completed", "nothing to do") if step_retries else ("ModelTransientError", 529)
    assert outcomes == [expected, expected]


async def _outcome(agent: Agent) -> tuple[str, Any]:
    try:
        result = await agent.do("Say you are done.", max_steps=3)
    except ModelTransientError as error:
        return type(error).__name__, error.status_code
    finally:
        await agent.close()
    assert result.status is WorkerStatus.completed
    return result.status.value, result.feedback
