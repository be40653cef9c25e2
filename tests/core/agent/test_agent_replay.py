"""Replay through Agent.do in real Chromium on the demo marketplace: the first listing is the model's
and records a script; the next listings replay it with their own values and zero model calls; where
the page differs from the recording the model takes over, and never does replay act on a guess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import SHOP_PASSWORD, ListingOutput
from pydantic import SecretStr

from webtask_core import Agent, WorkerStatus
from webtask_core.browser import Browser
from webtask_core.errors import BrowserCrashedError
from webtask_core.replay import Replay, ScriptStore, script_key
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM, MarketplaceListingPolicy
from webtask_core.testing.marketplace import Layout, Marketplace
from webtask_core.tools.registry import ToolRegistry
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
    # One step per model call, and a step that filled a form and submitted it in one turn is two:
    # replay looks at the filled form before it submits.
    assert script is not None and script.revision == 1 and len(script.steps) >= calls_first
    assert sum(1 for step in script.steps if step.commit is not None) >= 2  # Next, Publish

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


def script_text(store: ScriptStore) -> str:
    (key,) = store.keys()
    return (store.backend.read_bytes(key) or b"").decode()


async def test_scripts_keep_placeholders_never_secrets_or_this_runs_values(browser, shop, photos, tmp_path):
    store = scripts_in(tmp_path)
    data = listing("SECRET-1", shop, title="Green velvet jacket SECRET-1")
    result = await list_with_replay(FakeLLM(MarketplaceListingPolicy()), browser, shop, photos, store, data)
    assert result.replay == "recorded"
    text = script_text(store)
    # The password field gets the task's placeholder back through the parameter: never the value.
    assert SHOP_PASSWORD not in text and '"{{param:password}}"' in text
    for value in ("SECRET-1", "Green velvet jacket", "Worn twice", shop.base_url):
        assert value.casefold() not in text.casefold(), f"{value!r} was stored as a literal"
    assert "{{param:title}}" in text and "{{param:price}}" in text and "{{param:photos}}" in text


async def test_an_item_listed_already_is_the_models_and_the_script_stays(browser, shop, photos, tmp_path):
    """A rerun after a crash mid-replay (the listing was published, the run never reported it):
    replay recognises the search that now finds the SKU as this item's state, not a site change;
    the model reports the existing listing; nothing is listed twice, and the script is kept."""
    store = scripts_in(tmp_path)
    llm = FakeLLM(MarketplaceListingPolicy())
    await list_with_replay(llm, browser, shop, photos, store, listing("CRASH-0", shop))
    (key,) = store.keys()
    recorded = store.load(key)

    data = listing("CRASH-1", shop, price="12.50")
    tab = await browser.new_tab()  # step by step, and the "worker dies" right after Publish
    agent = Agent(llm, browser=tab, options=SECRETS,
                  resources={"listing_image_1": photos[0], "listing_image_2": photos[1]})
    agent.set_task(task_for(data), max_steps=20, output_schema=ListingOutput,
                   replay=Replay(key=key, params=data, store=store, identifying=("sku", "title")))
    while not shop.listing_by_sku("CRASH-1"):
        outcome = await agent.run_step()
        assert not outcome.finished and outcome.step.replayed
    await tab.close()  # gone before it reported the URL or saved anything

    before = len(llm.requests)
    result = await list_with_replay(llm, browser, shop, photos, store, data)
    assert result.status is WorkerStatus.completed, result.feedback
    (stored,) = shop.listing_by_sku("CRASH-1")
    assert result.output.listing_url == stored.url
    assert result.replay == "handed_over" and result.replayed_steps >= 1
    assert len(llm.requests) > before  # the model decided what the item's state asked for
    assert store.load(key) == recorded  # the next new item replays the original script


async def test_a_replayed_step_that_fails_is_retried_as_the_same_scripted_step(browser, shop, photos, tmp_path,
                                                                              monkeypatch):
    """A replayed step whose action raises a transient error (the browser died mid-click) is retried
    by Agent.do; the retry replays the same scripted step, not the next one, and asks no model."""
    store = scripts_in(tmp_path)
    llm = FakeLLM(MarketplaceListingPolicy())
    await list_with_replay(llm, browser, shop, photos, store, listing("RETRY-0", shop))
    failures = []
    real_run_calls = ToolRegistry.run_calls

    async def dies_once_at_step_three(self, calls, *args, **kwargs):
        if calls and calls[0].id.startswith("replay_3_") and not failures:
            failures.append(calls[0].id)
            raise BrowserCrashedError("the browser died mid-click (injected)")
        return await real_run_calls(self, calls, *args, **kwargs)

    monkeypatch.setattr(ToolRegistry, "run_calls", dies_once_at_step_three)
    before = len(llm.requests)
    result = await list_with_replay(llm, browser, shop, photos, store, listing("RETRY-1", shop))
    assert failures == ["replay_3_1"]
    assert result.status is WorkerStatus.completed, result.feedback
    assert len(llm.requests) == before and result.replay == "replayed"
    assert result.replayed_steps == len(store.load(store.keys()[0]).steps)
    assert len(shop.listing_by_sku("RETRY-1")) == 1


async def test_a_button_that_moved_elsewhere_on_the_page_is_still_replayed(browser, shop, photos, tmp_path):
    """Publish moved from under the summary to a toolbar above the heading, with another class: the
    same one button by what it is and says, so nothing needs the model."""
    store = scripts_in(tmp_path)
    llm = FakeLLM(MarketplaceListingPolicy())
    await list_with_replay(llm, browser, shop, photos, store, listing("MOVED-0", shop))
    shop.set_layout(Layout(moved_button=True))
    before = len(llm.requests)
    result = await list_with_replay(llm, browser, shop, photos, store, listing("MOVED-1", shop))
    assert result.status is WorkerStatus.completed and result.replay == "replayed", result.feedback
    assert len(llm.requests) == before and len(shop.listing_by_sku("MOVED-1")) == 1


@pytest.mark.parametrize("change", ["renamed_field", "extra_step", "all"])
async def test_a_changed_site_hands_over_where_it_changed_and_the_repaired_script_replays(
        change, browser, shop, photos, tmp_path):
    store = scripts_in(tmp_path)
    llm = FakeLLM(MarketplaceListingPolicy())
    await list_with_replay(llm, browser, shop, photos, store, listing(f"{change}-0", shop))
    (key,) = store.keys()
    recorded = store.load(key)

    shop.set_layout(Layout.parse(change))
    before = len(llm.requests)
    repaired = await list_with_replay(llm, browser, shop, photos, store, listing(f"{change}-1", shop))
    assert repaired.status is WorkerStatus.completed, repaired.feedback
    assert repaired.replay == "repaired" and repaired.replayed_steps >= 3  # log in, search, ... before the change
    model_calls = len(llm.requests) - before
    assert 1 <= model_calls < len(recorded.steps)  # the model only from the changed step on
    assert len(shop.listing_by_sku(f"{change}-1")) == 1
    script = store.load(key)
    assert script.revision == 2

    before = len(llm.requests)
    again = await list_with_replay(llm, browser, shop, photos, store, listing(f"{change}-2", shop, price="9.99"))
    assert again.status is WorkerStatus.completed and again.replay == "replayed", again.feedback
    assert len(llm.requests) == before
    (stored,) = shop.listing_by_sku(f"{change}-2")
    assert float(stored.price) == 9.99
    if change == "extra_step":
        assert stored.shipping  # the repaired script answers the new page too
