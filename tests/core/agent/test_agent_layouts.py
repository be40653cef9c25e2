"""The scripted listing model (FakeLLM, real Chromium) publishes on every layout of the demo shop,
and goes on publishing when the site switches layout between two tasks of one agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_helpers import SHOP_PASSWORD, ListingOutput, listing_task
from pydantic import SecretStr

from webtask_core import Agent, WorkerStatus
from webtask_core.browser import Browser
from webtask_core.testing import FakeLLM, MarketplaceListingPolicy
from webtask_core.testing.marketplace import Layout, Marketplace
from webtask_core.worker import WorkerOptions

SECRETS = WorkerOptions(secrets={"shop_password": SecretStr(SHOP_PASSWORD)})


def make_agent(llm: FakeLLM, tab: Any, photos: list[Path]) -> Agent:
    return Agent(llm, browser=tab, options=SECRETS,
                 resources={"listing_image_1": photos[0], "listing_image_2": photos[1]})


async def list_one(agent: Agent, shop: Marketplace, sku: str, **extra: Any) -> None:
    result = await agent.do(listing_task(shop.url("/listings"), sku=sku, **extra), max_steps=20,
                            output_schema=ListingOutput)
    assert result.status is WorkerStatus.completed, result.feedback
    [listing] = shop.listing_by_sku(sku)
    assert result.output.listing_url == listing.url and len(listing.photos) == 2


# (layout, the task's shipping key if any, what the listing stores)
CASES = [
    (Layout(renamed_field=True), {}, None),
    (Layout(extra_step=True), {}, "Prepaid label (we email it)"),  # no say in the task: the first option
    (Layout(moved_button=True), {}, None),
    (Layout.every_change(), {"shipping": "Local pickup"}, "Local pickup"),
]


@pytest.mark.parametrize(("layout", "extra", "stored"), CASES, ids=[str(case[0]) for case in CASES])
async def test_the_listing_model_publishes_in_each_layout(tab, shop: Marketplace, photos: list[Path],
                                                          layout: Layout, extra: dict[str, str], stored: str | None):
    shop.set_layout(layout)
    await list_one(make_agent(FakeLLM(MarketplaceListingPolicy()), tab, photos), shop, "LAY-1", **extra)
    assert shop.listing_by_sku("LAY-1")[0].shipping == stored
    assert shop.listing_by_sku("LAY-1")[0].title == "Blue suede shoes"


async def test_the_model_keeps_going_when_the_site_switches_between_tasks(browser: Browser, shop: Marketplace,
                                                                          photos: list[Path]):
    tab = await browser.new_tab()
    try:
        agent = make_agent(FakeLLM(MarketplaceListingPolicy()), tab, photos)
        await list_one(agent, shop, "SW-1")
        shop.set_layout(Layout.every_change())  # the same tab and log-in meet the redesign
        await list_one(agent, shop, "SW-2", shipping="I'll ship it myself")
    finally:
        await tab.close()
    assert [(r.sku, r.shipping) for r in shop.listings()] == [("SW-1", None), ("SW-2", "I'll ship it myself")]
