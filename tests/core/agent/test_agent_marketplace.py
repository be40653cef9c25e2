"""Agent.do end to end: the scripted listing model, the fake Messages API, real Chromium, the demo shop."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from agent_helpers import SHOP_PASSWORD, ListingOutput, fake_model, last_user_texts, listing_task, request_text
from pydantic import SecretStr

from webtask_core import Agent, TaskRecord, WorkerStatus
from webtask_core.testing import MarketplaceListingPolicy, ReplayPolicy, ToolUse
from webtask_core.testing.request_view import task_text
from webtask_core.worker import WorkerOptions

SECRETS = WorkerOptions(secrets={"shop_password": SecretStr(SHOP_PASSWORD)})


async def test_the_listing_model_creates_one_listing_with_both_photos(tab, shop, photos: list[Path]):
    async with fake_model(MarketplaceListingPolicy()) as (server, llm):
        agent = Agent(llm, browser=tab, options=SECRETS,
                      resources={"listing_image_1": photos[0], "listing_image_2": photos[1]})
        result = await agent.do(listing_task(shop.url("/listings")), max_steps=20, output_schema=ListingOutput)
        requests = server.requests

    assert result.status is WorkerStatus.completed, result.feedback
    assert isinstance(result.output, ListingOutput)
    listings = shop.listing_by_sku("SHOE-001")
    assert len(listings) == 1
    assert result.output.listing_url == listings[0].url
    stored = sorted(hashlib.sha256(photo.content).hexdigest() for photo in listings[0].photos)
    assert stored == sorted(hashlib.sha256(path.read_bytes()).hexdigest() for path in photos)
    assert result.steps == len(requests) and result.usage.input_tokens > 0

    # The model never saw the password or a file path; it typed the placeholder.
    everything = json.dumps(requests)
    assert SHOP_PASSWORD not in everything and str(photos[0].parent) not in everything
    assert "{{secret:shop_password}}" in everything

    for number, request in enumerate(requests, start=1):
        # messages alternate, starting with the task message
        assert [m["role"] for m in request["messages"]] == ["user", "assistant"] * (number - 1) + ["user"]
        assert task_text(request).startswith("Create a listing")
        # exactly one full page state, at the end of the last user message, then history, then the
        # image (none for the blank tab the task starts on: it would be 500 tokens of white)
        last = request["messages"][-1]["content"]
        blank = number == 1
        assert last[-1]["type"] == ("text" if blank else "image")
        texts = last_user_texts(request)
        assert texts[-2].startswith('<page url="about:blank"') == blank
        assert texts[-2].startswith('<page url="') and f'step="{number}">' in texts[-2]
        assert texts[-1].startswith("<history>")
        full_pages = re.findall(r'<page [^>]*step="\d+">', request_text(request))
        collapsed = re.findall(r"<page [^>]*collapsed/>", request_text(request))
        assert len(full_pages) == 1 and len(collapsed) == number - 1
        assert sum(block.get("type") == "image" for m in request["messages"] for block in m["content"]) == (not blank)

    session = agent.last_session
    assert session is not None and TaskRecord.from_json(session.to_json()) == session
    assert session.final_dom and session.final_screenshot and session.final_url.startswith(listings[0].url)
    assert all(step.timings.total_ms > 0 for step in session.steps)
    assert session.steps[0].screenshot is None and all(step.screenshot for step in session.steps[1:])
    upload = next(call for step in session.steps for call in step.tool_calls if call.name == "upload")
    assert upload.ok and "listing_image_1" in upload.message


async def test_persist_context_shows_the_earlier_task_and_fresh_agents_do_not(tab, shop):
    first = "Open my listings on the marketplace."
    script = [
        ToolUse("navigate", {"url": shop.url("/login")}),
        ToolUse("complete", {"feedback": "The log-in page is open."}),
        ToolUse("complete", {"feedback": "Price changed to 45."}),
    ]
    async with fake_model(ReplayPolicy(script)) as (server, llm):
        agent = Agent(llm, browser=tab, persist_context=True)
        assert (await agent.do(first)).status is WorkerStatus.completed
        second = await agent.do("Now change the price to 45.")
        request = server.requests[-1]
    assert second.status is WorkerStatus.completed
    assert task_text(request) == "Now change the price to 45."
    assert "<previous_tasks>" in request_text(request) and first in request_text(request)
    earlier_calls = [b["name"] for m in request["messages"] for b in m["content"] if b.get("type") == "tool_use"]
    assert earlier_calls == ["navigate", "complete"]
    assert agent.last_session.previous_tasks[0].task == first

    async with fake_model(ReplayPolicy(script[1:])) as (server, llm):
        agent = Agent(llm, browser=tab)
        await agent.do(first)
        await agent.do("Now change the price to 45.")
        request = server.requests[-1]
    assert "<previous_tasks>" not in request_text(request) and first not in request_text(request)
    assert len(request["messages"]) == 1
