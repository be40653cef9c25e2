"""The batch checks once, before any listing runs, what every listing would otherwise fail on one by
one: the password's Secret block, the model name, max_steps, and every photo the manifest names."""

from __future__ import annotations

import json

import pytest
from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from test_batch_flow import manifest_rows, params, write_photos

from webtask_core.errors import ConfigError
from webtask_core.testing import MarketplaceListingPolicy
from webtask_flows.listings.batch import batch_listing_upload, batch_results
from webtask_flows.listings.records import ManifestError


async def subflow_runs_of(state) -> list:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    async with get_client() as client:
        return await client.read_flow_runs(flow_run_filter=FlowRunFilter(
            parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[state.state_details.flow_run_id])))


@pytest.mark.parametrize(("override", "parameter", "says"), [
    ({"password_secret": "no-such-block"}, "password_secret", "no Secret block named 'no-such-block'"),
    ({"password_secret": "env:WEBTASK_TEST_UNSET_PASSWORD"}, "password_secret", "is not set"),
    ({"model": ""}, "model", "expected a non-empty model name"),
    ({"model": "gpt-5"}, "model", "is not a Claude model name"),
    ({"max_steps": 0}, "max_steps", "must be a positive integer"),
    ({"totp_secret": "no-such-seed"}, "totp_secret", "no Secret block named 'no-such-seed'"),
    # The password's block holds a password, not a base32 seed.
    ({"totp_secret": "webtask-test-shop-password"}, "totp_secret", "is not a base32 TOTP seed"),
])
async def test_a_parameter_every_listing_would_fail_on_fails_the_batch_first(
        flow_env, shop, shop_secret, monkeypatch, tmp_path, override, parameter, says):
    rows = manifest_rows(2, prefix="CHK")
    write_photos(tmp_path, rows)
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))

    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        state = await batch_listing_upload(manifest=str(manifest), **params(shop, tmp_path) | override,
                                           return_state=True)
        assert state.is_failed()
        with pytest.raises(ConfigError) as caught:
            await state.aresult()
    assert caught.value.parameter == parameter and says in str(caught.value)
    assert server.requests == [] and shop.request_log == []
    assert await subflow_runs_of(state) == []  # not one listing (nor the login) started


async def test_missing_photos_are_found_before_any_listing_runs(flow_env, shop, shop_secret, monkeypatch,
                                                               s3_endpoint, s3_client, s3_bucket, tmp_path):
    rows = manifest_rows(3, prefix="PH")
    photos = write_photos(tmp_path / "source", rows)
    # Row 1's photos are on S3; row 2's photo is a local file that is not there; row 3's second
    # photo is missing from S3.
    for relative, content in photos.items():
        if relative != rows[2]["photos"][1]:
            s3_client.put_object(Bucket=s3_bucket, Key=f"nightly/{relative}", Body=content)
    rows[1]["photos"] = [str(tmp_path / "nowhere" / "gone.jpg")]
    s3_client.put_object(Bucket=s3_bucket, Key="nightly/manifest.jsonl",
                         Body="\n".join(json.dumps(row) for row in rows) + "\n")
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    manifest = f"s3://{s3_bucket}/nightly/manifest.jsonl"

    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        state = await batch_listing_upload(manifest=manifest, **params(shop, tmp_path), return_state=True)
        assert state.is_failed()
        with pytest.raises(ManifestError) as caught:
            await state.aresult()
        assert server.requests == [] and shop.request_log == []
        problems = [(p.row, p.field) for p in caught.value.problems]
        assert problems == [(2, "photos.0"), (3, "photos.1")]
        text = str(caught.value)
        assert f"object not found: s3://{s3_bucket}/nightly/{rows[2]['photos'][1]}" in text and "gone.jpg" in text

        # skip_invalid runs the listing whose photos are all there and reports the other two.
        state = await batch_listing_upload(manifest=manifest, skip_invalid=True, **params(shop, tmp_path),
                                           return_state=True)
    results = await batch_results(state)
    assert [(r.sku, r.status) for r in results] == [("PH-1", "completed"), ("row-2", "invalid"), ("row-3", "invalid")]
    assert "photos.0" in results[1].feedback and "photos.1" in results[2].feedback
    assert [len(shop.listing_by_sku(row["sku"])) for row in rows] == [1, 0, 0]
