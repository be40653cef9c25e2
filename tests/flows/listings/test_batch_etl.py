"""ETL chaining as a subflow call: the example upstream flow writes a manifest and photos to S3,
then runs the batch on them. (The deployment-trigger way is in test_deployments_server.py.)"""

from __future__ import annotations

import hashlib
import json

import pytest
from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)

from webtask_core.errors import ConfigError
from webtask_core.testing import MarketplaceListingPolicy
from webtask_flows.listings.etl_example import listings_etl, sample_products


@pytest.mark.slow
@pytest.mark.e2e
async def test_the_etl_flow_writes_to_s3_and_runs_the_batch(flow_env, shop, shop_secret, monkeypatch, s3_endpoint,
                                                            s3_client, s3_bucket, tmp_path):
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    manifest = f"s3://{s3_bucket}/etl/2024-05-01/manifest.jsonl"
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch):
        written = await listings_etl(
            manifest_uri=manifest, count=2, sku_prefix="ETL", run_batch=True, site_url=shop.url("/listings"),
            username="demo", password_secret="webtask-test-shop-password",
            batch_options={"ledger": str(tmp_path / "ledger"), "max_concurrency": 2},
        )
    assert written == manifest
    body = s3_client.get_object(Bucket=s3_bucket, Key="etl/2024-05-01/manifest.jsonl")["Body"].read()
    rows = [json.loads(line) for line in body.decode().splitlines()]
    assert [row["sku"] for row in rows] == ["ETL-001", "ETL-002"]
    for row, photos in sample_products(2, prefix="ETL"):  # the same made-up products, photo bytes included
        (listing,) = shop.listing_by_sku(row["sku"])
        assert listing.title == row["title"] and f"{listing.price:.2f}" == row["price"]
        assert sorted(p.sha256 for p in listing.photos) == sorted(hashlib.sha256(b).hexdigest() for b in photos)


async def test_the_etl_flow_needs_the_site_to_run_the_batch(s3_bucket):
    with pytest.raises(ConfigError, match="needs site_url and username"):
        await listings_etl(manifest_uri=f"s3://{s3_bucket}/m.jsonl", run_batch=True)
