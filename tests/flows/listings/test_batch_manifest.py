"""The batch's input: manifests from S3 or a folder, relative photos, every bad row at once."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from webtask_core.errors import ConfigError
from webtask_flows.listings.manifest import artifact_slug, load_batch_input
from webtask_flows.listings.records import ManifestError

# These tests are about reading and validating rows; whether the photos are there is
# test_batch_checks.py's subject, so they pass check_photos=False.
ROW = {"sku": "BAG-1", "title": "Red bag", "description": "Roomy", "price": "20", "category": "Bags",
       "condition": "Good", "photos": ["photos/bag-1.jpg", "s3://elsewhere/x.jpg"]}


async def test_an_s3_manifest_resolves_relative_photos_against_its_prefix(s3_endpoint: str, s3_bucket: str,
                                                                           s3_client: Any, monkeypatch):
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    s3_client.put_object(Bucket=s3_bucket, Key="nightly/manifest.jsonl", Body=json.dumps(ROW) + "\n")
    batch = await load_batch_input(f"s3://{s3_bucket}/nightly/manifest.jsonl", None, check_photos=False)
    assert batch.listings[0].photos == [f"s3://{s3_bucket}/nightly/photos/bag-1.jpg", "s3://elsewhere/x.jpg"]
    assert re.fullmatch(r"[a-z0-9-]*", batch.artifact_key) and "manifest-jsonl" in batch.artifact_key

    with pytest.raises(ConfigError, match=f"object not found: s3://{s3_bucket}/nightly/missing.jsonl"):
        await load_batch_input(f"s3://{s3_bucket}/nightly/missing.jsonl", None)


async def test_a_local_csv_manifest_resolves_photos_against_its_folder(tmp_path: Path):
    manifest = tmp_path / "m.csv"
    manifest.write_text("sku,title,description,price,category,condition,photos\n"
                        "BAG-1,Red bag,Roomy,20,Bags,Good,photos/a.jpg|/abs/b.jpg\n")
    batch = await load_batch_input(str(manifest), None, check_photos=False)
    assert batch.listings[0].photos == [str(tmp_path / "photos/a.jpg"), "/abs/b.jpg"]
    assert batch.source == str(manifest)


async def test_invalid_rows_are_all_reported_or_skipped_on_request(tmp_path: Path):
    rows = [ROW, {**ROW, "sku": "BAG-2", "price": "free"}, {**ROW, "sku": "BAG-3", "title": ""}]
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(ManifestError) as caught:
        await load_batch_input(str(manifest), None, check_photos=False)
    assert {(p.row, p.field) for p in caught.value.problems} == {(2, "price"), (3, "title")}

    batch = await load_batch_input(str(manifest), None, skip_invalid=True, check_photos=False)
    assert [listing.sku for listing in batch.listings] == ["BAG-1"] and len(batch.problems) == 2


async def test_listings_from_an_upstream_flow_need_no_manifest():
    batch = await load_batch_input(None, [ROW, {**ROW, "sku": "BAG-2"}], check_photos=False)
    assert [listing.sku for listing in batch.listings] == ["BAG-1", "BAG-2"]
    assert batch.listings[0].photos == ROW["photos"]  # not resolved: no manifest to resolve against
    assert batch.source == "listings"
    with pytest.raises(ConfigError, match="either a manifest"):
        await load_batch_input("m.jsonl", [ROW])


def test_artifact_slugs_are_valid_keys_and_differ_by_name():
    first = artifact_slug("listing-batch", "s3://Bucket/Nightly Run/2024_05_01.JSONL")
    second = artifact_slug("listing-batch", "s3://Bucket/Nightly Run/2024_05_02.JSONL")
    assert re.fullmatch(r"[a-z0-9-]*", first) and first != second
