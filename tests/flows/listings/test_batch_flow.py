"""batch-listing-upload against the demo marketplace: a manifest from S3, the ledger, failures."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    read_artifacts,
    read_flow_run,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from PIL import Image

from webtask_core.testing import MarketplaceListingPolicy
from webtask_core.testing.page_reader import is_read_back
from webtask_core.testing.request_view import task_json
from webtask_flows.listings.batch import BatchFailed, batch_listing_upload, batch_results
from webtask_flows.listings.manifest import artifact_slug
from webtask_flows.listings.records import ManifestError

CATEGORIES = ["Women's Shoes", "Bags", "Jewelry", "Home", "Toys"]


def manifest_rows(count: int, *, prefix: str = "SKU") -> list[dict[str, Any]]:
    return [
        {"sku": f"{prefix}-{n}", "title": f"Item number {n}", "description": f"A fine item.\nNumber {n}.",
         "price": f"{10 + n}.50", "category": CATEGORIES[n % len(CATEGORIES)], "condition": "Good",
         "photos": [f"photos/{prefix}-{n}-a.jpg", f"photos/{prefix}-{n}-b.png"][: 1 + n % 2]}
        for n in range(1, count + 1)
    ]


def write_photos(folder: Path, rows: list[dict[str, Any]]) -> dict[str, bytes]:
    """A distinct small image per photo; returns relative path -> bytes."""
    made: dict[str, bytes] = {}
    for index, row in enumerate(rows):
        for position, relative in enumerate(row["photos"]):
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            colour = (40 * index % 256, 90 + 30 * position, 200 - 20 * index % 200)
            Image.new("RGB", (48 + index, 40), colour).save(path, "PNG" if relative.endswith(".png") else "JPEG")
            made[relative] = path.read_bytes()
    return made


def requests_per_sku(requests: list[dict[str, Any]]) -> dict[str, int]:
    """Model requests per listing (the batch's login task has no SKU and is left out, and so are the
    read-back's requests: they carry no task)."""
    counts: dict[str, int] = {}
    for request in requests:
        if is_read_back(request):
            continue
        sku = task_json(request).get("sku")
        if sku is not None:
            counts[sku] = counts.get(sku, 0) + 1
    return counts


def login_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model requests of the batch's shared login task."""
    return [request for request in requests if not is_read_back(request) and "sku" not in task_json(request)]


def params(shop: Any, tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {"site_url": shop.url("/listings"), "username": "demo",
            "password_secret": "webtask-test-shop-password", "ledger": str(tmp_path / "ledger"), **extra}


@pytest.mark.slow
@pytest.mark.e2e
async def test_five_listings_from_an_s3_manifest(flow_env, shop, shop_secret, monkeypatch, s3_endpoint,
                                                 s3_client, s3_bucket, tmp_path):
    rows = manifest_rows(5)
    photos = write_photos(tmp_path / "photos-src", rows)
    for relative, content in photos.items():
        s3_client.put_object(Bucket=s3_bucket, Key=f"nightly/{relative}", Body=content)
    s3_client.put_object(Bucket=s3_bucket, Key="nightly/manifest.jsonl",
                         Body="\n".join(json.dumps(row) for row in rows) + "\n")
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    manifest = f"s3://{s3_bucket}/nightly/manifest.jsonl"

    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        state = await batch_listing_upload(manifest=manifest, max_concurrency=3,
                                           **params(shop, tmp_path), return_state=True)
        first_requests = requests_per_sku(server.requests)

        assert state.is_completed(), state.message
        results = await batch_results(state)
        assert [r.sku for r in results] == [row["sku"] for row in rows]
        for row, result in zip(rows, results):
            (listing,) = shop.listing_by_sku(row["sku"])  # exactly once
            assert result.status == "completed" and not result.skipped
            assert result.listing_url == listing.url and result.steps > 0 and result.tokens > 0
            # tokens by kind, to price the listing: later steps read the earlier ones from the cache
            assert result.tokens == result.usage.total_tokens and result.usage.cache_read_tokens > 0
            assert 0 < result.uncached_input_tokens < result.tokens
            assert sorted(p.sha256 for p in listing.photos) == sorted(
                hashlib.sha256(photos[relative]).hexdigest() for relative in row["photos"])
            run = await read_flow_run(result.flow_run_id)  # a run-webtask subflow named after the SKU
            assert run.name == row["sku"] and run.parent_task_run_id is not None

        # The progress and the summary artifacts, read back through the API.
        artifacts = await read_artifacts(state.state_details.flow_run_id)
        key = artifact_slug("listing-batch", manifest)
        (summary,) = [a for a in artifacts if a.type == "table"]
        (progress,) = [a for a in artifacts if a.type == "progress"]
        assert summary.key == key and progress.key == f"{key}-progress"
        table = json.loads(summary.data) if isinstance(summary.data, str) else summary.data
        assert [row["sku"] for row in table] == [row["sku"] for row in rows]
        assert {row["status"] for row in table} == {"completed"}
        assert float(progress.data) == 100.0 and "5/5 done" in progress.description

        # A rerun with one changed listing runs only that one; the rest come from the ledger. The
        # agent finds it listed (no second one), and reading it back shows the site still has the old
        # price: a mismatch, not a silent "completed" (repair_mismatch=True would correct it).
        rows[2]["price"] = "99.00"
        s3_client.put_object(Bucket=s3_bucket, Key="nightly/manifest.jsonl",
                             Body="\n".join(json.dumps(row) for row in rows) + "\n")
        server.reset()
        again = await batch_listing_upload(manifest=manifest, **params(shop, tmp_path), return_state=True)
        assert again.is_failed() and again.message == "1 of 5 listing(s) failed: SKU-3"
        again_results = await batch_results(again)
        assert requests_per_sku(server.requests).keys() == {"SKU-3"}
        assert [r.skipped for r in again_results] == [True, True, False, True, True]
        assert [r.status for r in again_results] == ["completed", "completed", "mismatch", "completed", "completed"]
        assert again_results[2].mismatched_fields == ["price"] and "shown '$13.50'" in again_results[2].feedback
        assert len(shop.listing_by_sku("SKU-3")) == 1
        assert first_requests.keys() == {row["sku"] for row in rows}


@pytest.mark.slow
@pytest.mark.e2e
async def test_one_aborted_listing_fails_the_batch_by_name_and_the_others_finish(
        flow_env, shop, shop_secret, monkeypatch, tmp_path):
    rows = manifest_rows(3, prefix="AB")
    write_photos(tmp_path, rows)
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))

    async with fake_model_env(MarketplaceListingPolicy(abort_on_sku=["AB-2"]), monkeypatch):
        state = await batch_listing_upload(manifest=str(manifest), **params(shop, tmp_path), return_state=True)
    assert state.is_failed() and "AB-2" in state.message and "AB-1" not in state.message
    results = {r.sku: r for r in await batch_results(state)}
    assert results["AB-2"].status == "aborted" and "abort" in results["AB-2"].feedback
    assert {results["AB-1"].status, results["AB-3"].status} == {"completed"}
    assert [len(shop.listing_by_sku(sku)) for sku in ("AB-1", "AB-2", "AB-3")] == [1, 0, 1]

    with pytest.raises(BatchFailed) as caught:  # a direct call raises, carrying the results
        async with fake_model_env(MarketplaceListingPolicy(abort_on_sku=["AB-2"]), monkeypatch):
            await batch_listing_upload(manifest=str(manifest), **params(shop, tmp_path))
    assert [r.sku for r in caught.value.results if r.failed] == ["AB-2"]
    assert [r.skipped for r in caught.value.results] == [True, False, True]


async def test_invalid_rows_are_reported_together_and_nothing_touches_the_site(
        flow_env, shop, shop_secret, monkeypatch, tmp_path):
    rows = manifest_rows(3, prefix="BAD")
    write_photos(tmp_path, rows)
    rows[0]["price"] = "-1"
    del rows[2]["title"]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))

    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        state = await batch_listing_upload(manifest=str(manifest), **params(shop, tmp_path), return_state=True)
        assert state.is_failed()
        with pytest.raises(ManifestError) as caught:
            await state.aresult()
        assert {(p.row, p.field) for p in caught.value.problems} == {(1, "price"), (3, "title")}
        assert server.requests == [] and shop.request_log == []

        # skip_invalid runs the valid row and reports the other two.
        state = await batch_listing_upload(manifest=str(manifest), skip_invalid=True, **params(shop, tmp_path),
                                           return_state=True)
    assert state.is_completed() and state.message == "1/1 done: 1 completed; 2 invalid manifest row(s) skipped"
    results = await batch_results(state)
    assert [(r.sku, r.status) for r in results] == [("BAD-2", "completed"), ("row-1", "invalid"), ("row-3", "invalid")]
    assert len(shop.listing_by_sku("BAD-2")) == 1
