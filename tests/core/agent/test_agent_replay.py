"""Replay through Agent.do in real Chromium on the demo marketplace: the first listing is the model's
and records a script; the next listings replay it with their own values and zero model calls; where
the page differs from the recording the model takes over, and never does replay act on a guess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_helpers import SHOP_PASSWORD, ListingOutput
from pydantic import SecretStr

from webtask_core import Agent, WorkerStatus
from webtask_core.browser import Browser
from webtask_core.replay import Replay, ScriptStore, script_key
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM, MarketplaceListingPolicy
from webtask_core.testing.marketplace import Marketplace
from webtask_core.worker import WorkerOptions

SECRETS = WorkerOptions(secrets={"shop_password": SecretStr(SHOP_PASSWORD)})


def listing(sku: str, shop: Marketplace, **changes: Any) -> dict[str, Any]:
    """The task's fields: what the template renders the task from, and the replay's parameters."""
    data = {
        "sku": sku, "title": f"Blue suede shoes {sku}", "description": f"Worn twice.\nSize 8 ({sku}).",
        "price": "45.00", "category": "Women's Shoes", "condition": "Like new",
        "photos": ["listing_image_1", "listing_image_2"], "username": "demo",
        "password": "{{secret:shop_password}}", "site_url": shop.url("/listings"),
    }
    return data | changes


def task_for(data: dict[str, Any]) -> str:
    return ("Create a listing with these photos on the marketplace, then report its URL.\n"
            f"```json\n{json.dumps(data, indent=2)}\n```")


async def list_with_replay(llm: FakeLLM, browser: Browser, shop: Marketplace, photos: list[Path],
                           store: ScriptStore, data: dict[str, Any]) -> Any:
    tab = await browser.new_tab()
    try:
        agent = Agent(llm, browser=tab, options=SECRETS,
                      resources={"listing_image_1": photos[0], "listing_image_2": photos[1]})
        replay = Replay(key=script_key("listing-task", "demo-shop"), params=data, store=store,
                        identifying=("sku", "title"))
        return await agent.do(task_for(data), max_steps=20, output_schema=ListingOutput, replay=replay)
    finally:
        await tab.close()


def scripts_in(tmp_path: Path) -> ScriptStore:
    return ScriptStore(LocalSessionStore(tmp_path / "sessions"))


async def test_the_first_run_records_and_the_next_replay_with_their_own_values(browser, shop, photos, tmp_path):
    store = scripts_in(tmp_path)
    llm = FakeLLM(MarketplaceListingPolicy())

    first = await list_with_replay(llm, browser, shop, photos, store, listing("REP-1", shop))
    assert first.status is WorkerStatus.completed and first.replay == "recorded" and first.replayed_steps == 0
    calls_first = len(llm.requests)
    assert calls_first >= 6
    (key,) = store.keys()
    script = store.load(key)
    assert script is not None and script.revision == 1 and len(script.steps) == calls_first

    for sku, price in (("REP-2", "19.99"), ("REP-3", "120.00")):
        before = len(llm.requests)
        data = listing(sku, shop, price=price, category="Bags", condition="Good")
        result = await list_with_replay(llm, browser, shop, photos, store, data)
        assert result.status is WorkerStatus.completed, result.feedback
        assert len(llm.requests) == before, "a replayed listing asked the model"
        assert result.replay == "replayed" and result.replayed_steps == len(script.steps)
        (stored,) = shop.listing_by_sku(sku)  # listed once, with this run's values
        assert (stored.title, float(stored.price), stored.category, stored.condition) == (
            data["title"], float(price), "Bags", "Good")
        assert stored.description == data["description"] and len(stored.photos) == 2
        assert result.output.sku == sku and result.output.listing_url == stored.url
    assert store.load(key).revision == 1  # a replay that needed no model keeps the script as it is
