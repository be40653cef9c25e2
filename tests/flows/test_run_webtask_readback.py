"""run-webtask reads its listing back: a listing the site stored otherwise ends Failed(name="Mismatch")
with the webtask.listing.mismatch event (each field expected vs shown, the URL, a picture), the
read-back's table in the summary, and the page's picture as an artifact; bad read-back input fails
before anything starts."""

from __future__ import annotations

import json

import pytest
from flow_helpers import (
    OUTPUT_SCHEMA,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    listing_task,
    make_photos,
    read_artifacts,
    read_events_for,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)

from webtask_core.errors import ConfigError
from webtask_core.record import WorkerStatus
from webtask_core.testing import MarketplaceListingPolicy
from webtask_core.testing.marketplace import Alterations
from webtask_flows.artifacts import summary_artifact_key
from webtask_flows.run_flow import run_webtask
from webtask_flows.run_result import webtask_result


def fields(shop, sku: str) -> dict:
    data = json.loads(listing_task(shop.url("/listings"), sku=sku).split("```json\n")[1].split("\n```")[0])
    return {name: data[name] for name in ("sku", "title", "description", "price", "category", "condition", "photos")}


async def test_a_listing_stored_otherwise_ends_mismatch_with_an_event_naming_each_field(
        flow_env, shop, shop_secret, monkeypatch, tmp_path):
    photos = make_photos(tmp_path / "photos")
    shop.set_alterations(Alterations(vat_percent=19))
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        state = await run_webtask(
            listing_task(shop.url("/listings"), sku="VAT-1"), start_url=shop.url("/listings"),
            resources={"listing_image_1": str(photos[0]), "listing_image_2": str(photos[1])},
            output_schema=OUTPUT_SCHEMA, secrets=shop_secret, labels={"sku": "VAT-1"},
            readback={"fields": fields(shop, "VAT-1")}, return_state=True)
    assert state.is_failed() and state.name == "Mismatch"
    result = await webtask_result(state)
    assert result.status is WorkerStatus.mismatch and result.readback is not None
    assert result.readback.method == "model" and result.readback.screenshot is None  # the picture is an artifact
    assert [check.field for check in result.readback.mismatches] == ["price"]
    assert state.message.startswith("Read-back: the site does not show the listing as asked: price: expected '45.0'")
    assert sum(1 for request in server.requests if request.get("tool_choice")) == 1

    run_id = state.state_details.flow_run_id
    (event,) = await read_events_for(f"webtask.task.{run_id}")
    assert event.event == "webtask.listing.mismatch" and event.payload["sku"] == "VAT-1"
    assert event.payload["mismatched_fields"] == ["price"]
    assert event.payload["fields"][0] == {"field": "price", "expected": "45.0", "shown": "$53.55",
                                          "verdict": "mismatch", "note": ""}
    (listing,) = shop.listing_by_sku("VAT-1")
    assert event.payload["listing_url"] == listing.url and event.payload["readback_method"] == "model"
    assert event.payload["picture_artifact_id"]

    artifacts = await read_artifacts(run_id)
    (summary,) = [artifact for artifact in artifacts if artifact.key == summary_artifact_key(None, "VAT-1")]
    assert "**Read-back**: mismatch" in summary.data and "| price | 45.0 | $53.55 | mismatch |" in summary.data
    pictures = [artifact for artifact in artifacts if artifact.type == "image"]
    assert any("read-back saw" in (artifact.description or "") for artifact in pictures)


async def test_bad_read_back_input_fails_before_anything_starts(flow_env, shop, shop_secret, monkeypatch):
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        with pytest.raises(ConfigError, match=r"readback.check.*names colour, which are not in readback.fields"):
            await run_webtask(listing_task(shop.url("/listings")), start_url=shop.url("/listings"),
                              secrets=shop_secret, readback={"fields": {"title": "x"}, "check": ["colour"]})
        assert server.requests == [] and shop.request_log == []
