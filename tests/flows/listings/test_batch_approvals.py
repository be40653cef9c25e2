"""Approvals in batch-listing-upload: a listing over the price rule waits for a person in the Prefect UI
while the rest of the batch goes on; "reject" ends it aborted with the reviewer's comment; a changed
field since the SKU's last listing asks again."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from test_batch_flow import manifest_rows, params, write_photos
from test_human_flow import paused_run, resume_as_the_ui_does, run_inputs

from webtask_core.testing import MarketplaceListingPolicy
from webtask_core.testing.human_steps import ask_human_results
from webtask_core.testing.page_reader import is_read_back
from webtask_core.testing.request_view import task_json
from webtask_flows.listings.approvals import ApprovalRule, approval_reason
from webtask_flows.listings.batch import batch_listing_upload, batch_results
from webtask_flows.listings.ledger import open_ledger
from webtask_flows.listings.models import ListingResult
from webtask_flows.listings.records import ListingRecord


def asks_per_sku(requests: list[dict[str, Any]]) -> dict[str, int]:
    """How many times the model called ask_human in each listing's conversation (its last request)."""
    last: dict[str, dict[str, Any]] = {}
    for request in requests:
        if is_read_back(request):  # the read-back's requests carry no task
            continue
        sku = task_json(request).get("sku")
        if sku is not None:
            last[sku] = request
    return {sku: len(ask_human_results(request)) for sku, request in last.items()}


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


@pytest.mark.e2e
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

    assert answered.json().get("status") == "ACCEPT", answered.text
    results = {result.sku: result for result in await batch_results(state)}
    assert [results[sku].status for sku in ("APP-1", "APP-2", "APP-3")] == ["completed", "aborted", "completed"]
    assert results["APP-2"].feedback == "rejected by the reviewer (Prefect UI): price is a typo"
    assert shop.listing_by_sku("APP-2") == []


@pytest.mark.e2e
async def test_a_rerun_asks_for_approval_when_a_ruled_field_changed_since_the_last_listing(
        flow_env, shop, shop_secret, monkeypatch, tmp_path):
    # The ledger as an earlier batch left it: the three SKUs listed, each with its fields then
    # (ListingLedger.record, what the batch calls after a completed listing).
    before = manifest_rows(3, prefix="CHG")
    book = await open_ledger(str(tmp_path / "ledger"), site_url=shop.url("/listings"), username="demo")
    for row in before:
        await book.record(ListingRecord.model_validate(row), ListingResult(sku=row["sku"], status="completed",
                                                                           listing_url="http://earlier/1"))
    # The rerun: CHG-1's price changed (the rule's field), CHG-2's description (not in the rule), CHG-3
    # is as it was (the ledger skips it).
    rows = [{**before[0], "price": "99.00"}, {**before[1], "description": "Now with a dust bag."}, before[2]]
    write_photos(tmp_path, rows)
    monkeypatch.chdir(tmp_path)
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        running = asyncio.ensure_future(batch_listing_upload(
            **params(shop, tmp_path), listings=rows, max_concurrency=2, approve_if={"changed": ["price"]},
            human={"timeout_s": 120, "poll_s": 0.5}, return_state=True))
        paused = await paused_run("CHG-1", timeout_s=90)
        (described,) = [item for item in await run_inputs(paused.id) if item.key.endswith("-description")]
        answered = await resume_as_the_ui_does(paused.id, {"decision": "approve", "comment": "new season price"})
        state = await running
        asked = {sku: count for sku, count in asks_per_sku(server.requests).items() if count}

    assert answered.json().get("status") == "ACCEPT", answered.text
    assert f"Why: price changed since the last listing of this SKU ({before[0]['price']} → 99.00)" in json.loads(
        described.value)
    results = {result.sku: result for result in await batch_results(state)}
    assert [(results[sku].status, results[sku].skipped) for sku in ("CHG-1", "CHG-2", "CHG-3")] == [
        ("completed", False), ("completed", False), ("completed", True)]
    assert asked == {"CHG-1": 1}  # CHG-2 ran again (its content changed) without asking anyone
    assert sorted(listing.sku for listing in shop.listings()) == ["CHG-1", "CHG-2"]
    # The ledger now holds the approved price: the next rerun compares with it and does not ask again.
    assert (await book.last_listed("CHG-1"))["price"] == "99.00"
    assert (await book.last_listed("CHG-2"))["description"] == "Now with a dust bag."
