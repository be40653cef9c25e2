"""Approvals in batch-listing-upload: a listing over the price rule waits for a person in the Prefect UI
while the rest of the batch goes on; "reject" ends it aborted with the reviewer's comment; a changed
field since the SKU's last listing asks again."""

from __future__ import annotations

import asyncio

from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from test_batch_flow import manifest_rows, params, write_photos
from test_human_flow import paused_run, resume_as_the_ui_does

from webtask_core.testing import MarketplaceListingPolicy
from webtask_flows.listings.approvals import ApprovalRule, approval_reason
from webtask_flows.listings.batch import batch_listing_upload, batch_results
from webtask_flows.listings.records import ListingRecord


def test_the_rules_say_why_a_listing_needs_approval():
    listing = ListingRecord(sku="A-1", title="Bag", description="d", price="600", category="Bags",
                            condition="Good", photos=["a.jpg"])
    assert approval_reason(listing, None, None) is None
    assert approval_reason(listing, ApprovalRule(price_above=500), None) == "the price 600 is above 500"
    assert approval_reason(listing, ApprovalRule(price_above=700), None) is None
    changed = ApprovalRule(changed=["price", "title"])
    assert approval_reason(listing, changed, None) is None  # never listed: nothing changed
    assert approval_reason(listing, changed, {"price": "600.00", "title": "Bag"}) is None
    assert approval_reason(listing, changed, {"price": "450", "title": "Bag"}) == (
        "price changed since the last listing of this SKU (450 → 600)")
    assert "category is Bags" in approval_reason(listing, ApprovalRule(categories=["bags"]), None)


async def test_a_listing_over_the_price_rule_waits_for_approval_while_the_batch_goes_on(
        flow_env, shop, shop_secret, monkeypatch, tmp_path):
    rows = manifest_rows(3, prefix="APP")
    rows[1]["price"] = "900.00"
    write_photos(tmp_path, rows)
    monkeypatch.chdir(tmp_path)
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch):
        running = asyncio.ensure_future(batch_listing_upload(
            **params(shop, tmp_path), listings=rows, max_concurrency=2, approve_if={"price_above": 500},
            human={"timeout_s": 120, "poll_s": 0.5}, replay=True, return_state=True))
        paused = await paused_run("APP-2", timeout_s=90)
        # While APP-2 waits for a person, the other listings are published.
        for _ in range(300):
            if len(shop.listings()) == 2:
                break
            await asyncio.sleep(0.2)
        assert sorted(listing.sku for listing in shop.listings()) == ["APP-1", "APP-3"]
        answered = await resume_as_the_ui_does(paused.id, {"decision": "reject", "comment": "price is a typo"})
        state = await running

    assert answered.json()["status"] == "ACCEPT"
    results = {result.sku: result for result in await batch_results(state)}
    assert [results[sku].status for sku in ("APP-1", "APP-2", "APP-3")] == ["completed", "aborted", "completed"]
    assert results["APP-2"].feedback == "rejected by the reviewer (Prefect UI): price is a typo"
    assert shop.listing_by_sku("APP-2") == []
