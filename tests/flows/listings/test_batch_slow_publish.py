"""A replayed Publish whose answer comes 30 s late (issue 25 §9): the listing is stored at once, the
browser gives up waiting for the page. Replay hands over saying the submit may have gone through; the
model looks first and finds it listed; the listing is listed once, and a rerun of the batch takes it
from the ledger."""

from __future__ import annotations

import json

import pytest
from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from test_batch_flow import params, requests_per_sku
from test_batch_replay import rows_with_photos

from webtask_core.testing import MarketplaceListingPolicy
from webtask_flows.listings.batch import batch_listing_upload, batch_results


@pytest.mark.slow
@pytest.mark.e2e
async def test_a_publish_answered_late_is_listed_once_and_a_rerun_takes_it_from_the_ledger(
        flow_env, shop, shop_secret, monkeypatch, tmp_path):
    rows = rows_with_photos(tmp_path, 2, "SLOW")
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        recorded = await batch_results(await batch_listing_upload(listings=rows[:1], replay=True,
                                                                  **params(shop, tmp_path), return_state=True))
        assert [result.replay for result in recorded] == ["recorded"]
        shop.slow_publish(30)
        before = len(server.requests)
        state = await batch_listing_upload(listings=rows[1:], replay=True, **params(shop, tmp_path), return_state=True)
        (result,) = await batch_results(state)
        asked = server.requests[before:]
        shop.slow_publish(0)
        assert state.is_completed(), (state.message, result.status, result.replay, result.feedback, result.model_calls)
        # the model was asked once replay lost the page, and told to look before submitting again
        notes = [json.dumps(request["messages"][-1]) for request in asked]
        assert asked and "may have gone through" in notes[0], notes[:1]
        assert (result.status, result.replay) == ("completed", "handed_over"), result.feedback
        assert len(shop.listing_by_sku("SLOW-2")) == 1, "the slow Publish was repeated"
        # The model found it listed: by looking it up, or on the page the late answer finally showed
        # (it can land while the model takes its look); never by publishing again (the count above).
        assert "already listed" in result.feedback or "Listed SKU SLOW-2" in result.feedback, result.feedback

        rerun = await batch_results(await batch_listing_upload(listings=rows, replay=True, **params(shop, tmp_path),
                                                               return_state=True))
        assert [(item.sku, item.skipped) for item in rerun] == [("SLOW-1", True), ("SLOW-2", True)]
        assert requests_per_sku(server.requests[before + len(asked):]) == {}
    assert [len(shop.listing_by_sku(sku)) for sku in ("SLOW-1", "SLOW-2")] == [1, 1]
