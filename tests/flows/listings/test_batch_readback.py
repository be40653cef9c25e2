"""A batch reads every listing back: one the site stores otherwise than asked fails loudly — the
listing's run ends Mismatch with webtask.listing.mismatch, the batch fails naming it, its summary
lists it first — and the ledger keeps it as published, so a rerun lists nothing twice; a rerun with
repair_mismatch=True corrects it through the listing's edit page."""

from __future__ import annotations

import json

import pytest
from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    read_artifacts,
    read_events_for,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from test_batch_flow import manifest_rows, params, requests_per_sku, write_photos

from webtask_core.testing import MarketplaceListingPolicy
from webtask_core.testing.marketplace import Alterations
from webtask_core.testing.page_reader import is_read_back
from webtask_flows.listings.batch import batch_listing_upload, batch_results


@pytest.mark.slow
@pytest.mark.e2e
async def test_a_mismatch_fails_loudly_a_rerun_lists_nothing_twice_and_a_repair_corrects_it(
        flow_env, shop, shop_secret, monkeypatch, tmp_path):
    rows = manifest_rows(3, prefix="MM")
    for row in rows:
        row["quantity"] = "9" if row["sku"] == "MM-2" else "2"
    write_photos(tmp_path, rows)
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))
    shop.set_alterations(Alterations(max_quantity=5))  # the site stores at most 5, silently

    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        state = await batch_listing_upload(manifest=str(manifest), replay=True, **params(shop, tmp_path),
                                           return_state=True)
        assert state.is_failed() and state.message == "1 of 3 listing(s) failed: MM-2"
        results = {result.sku: result for result in await batch_results(state)}
        mismatch = results["MM-2"]
        assert mismatch.status == "mismatch" and mismatch.mismatched_fields == ["quantity"]
        assert mismatch.feedback.startswith("Read-back: the site does not show the listing as asked: quantity")
        (listing,) = shop.listing_by_sku("MM-2")
        assert mismatch.listing_url == listing.url and listing.quantity == 5
        assert [(results[sku].status, results[sku].readback) for sku in ("MM-1", "MM-3")] == [("completed", "passed")] * 2
        # The first listing taught the flow (its read-back by the model recorded the page's templates);
        # the others replayed, and their read-back made no model call.
        assert sum(1 for request in server.requests if is_read_back(request)) == 1

        (event,) = await read_events_for(f"webtask.task.{mismatch.flow_run_id}")
        assert event.event == "webtask.listing.mismatch" and event.payload["sku"] == "MM-2"
        assert event.payload["batch_flow_run_id"] == str(state.state_details.flow_run_id)
        assert event.payload["fields"][0] == {"field": "quantity", "expected": "9", "shown": "5",
                                              "verdict": "mismatch", "note": ""}
        (batch_event,) = await read_events_for(f"webtask.batch.{state.state_details.flow_run_id}")
        assert batch_event.payload["failed_skus"] == ["MM-2"]
        (summary,) = [a for a in await read_artifacts(state.state_details.flow_run_id) if a.type == "table"]
        table = json.loads(summary.data) if isinstance(summary.data, str) else summary.data
        assert table[0]["sku"] == "MM-2" and table[0]["status"] == "mismatch"  # listed first
        assert table[0]["reason"].startswith("Read-back")

        # A rerun: the ledger holds the mismatch as published — nothing runs, nothing is listed twice.
        server.reset()
        again = await batch_listing_upload(manifest=str(manifest), replay=True, **params(shop, tmp_path),
                                           return_state=True)
        assert again.is_failed() and server.requests == []
        rerun = {result.sku: result for result in await batch_results(again)}
        assert all(result.skipped for result in rerun.values()) and rerun["MM-2"].status == "mismatch"
        assert [len(shop.listing_by_sku(row["sku"])) for row in rows] == [1, 1, 1]

        # The site stops capping; a rerun with repair_mismatch corrects the listing on its edit page.
        shop.set_alterations(Alterations())
        fixed = await batch_listing_upload(manifest=str(manifest), replay=True, repair_mismatch=True,
                                           **params(shop, tmp_path), return_state=True)
        assert fixed.is_completed(), fixed.message
        repaired = {result.sku: result for result in await batch_results(fixed)}
        assert not repaired["MM-2"].skipped and repaired["MM-2"].status == "completed"
        assert repaired["MM-2"].readback == "passed" and requests_per_sku(server.requests).keys() == {"MM-2"}
        (listing,) = shop.listing_by_sku("MM-2")
        assert listing.quantity == 9 and listing.url == mismatch.listing_url
        assert [result.skipped for result in await batch_listing_upload(
            manifest=str(manifest), replay=True, repair_mismatch=True, **params(shop, tmp_path))] == [True] * 3
