"""The ledger of completed listings: keyed by site, SKU and content; in a folder or on S3."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from webtask_core.errors import ConfigError
from webtask_core.llm.types import Usage
from webtask_flows.listings.ledger import LedgerRecordError, open_ledger, site_namespace
from webtask_flows.listings.models import ListingResult
from webtask_flows.listings.records import ListingRecord

LISTING = ListingRecord(
    sku="BOOT-1", title="Red boots", description="Leather", price="45.50", category="Shoes",
    condition="Good", photos=["s3://b/boot-1.jpg"],
)
DONE = ListingResult(sku="BOOT-1", status="completed", listing_url="http://shop/listings/1", steps=7,
                     tokens=1234, usage=Usage(input_tokens=300, output_tokens=34, cache_read_tokens=800,
                                              cache_write_tokens=100), flow_run_id="run-1")


async def test_a_completed_listing_is_found_again_and_a_changed_one_is_not(tmp_path: Path):
    ledger = await open_ledger(str(tmp_path), site_url="http://shop.example", username="demo")
    assert await ledger.lookup(LISTING) is None
    await ledger.record(LISTING, DONE)

    # A fresh ledger object (a rerun, another process) reads it back from the folder.
    again = await open_ledger(str(tmp_path), site_url="http://shop.example", username="demo")
    found = await again.lookup(LISTING)
    assert found is not None and found.skipped and found.listing_url == DONE.listing_url
    assert found.flow_run_id == "run-1" and found.content_hash == LISTING.content_hash()

    changed = ListingRecord.model_validate({**LISTING.model_dump(), "price": "50.00"})
    assert await again.lookup(changed) is None
    other_site = await open_ledger(str(tmp_path), site_url="http://other.example", username="demo")
    assert await other_site.lookup(LISTING) is None
    assert (tmp_path / site_namespace("http://shop.example", "demo")).is_dir()


async def test_only_completed_or_mismatched_listings_are_recorded(tmp_path: Path):
    ledger = await open_ledger(str(tmp_path), site_url="http://shop.example", username="demo")
    with pytest.raises(ValueError, match="only completed or mismatched"):
        await ledger.record(LISTING, DONE.model_copy(update={"status": "aborted"}))


async def test_the_ledger_on_s3_is_seen_by_another_ledger_object(s3_endpoint: str, s3_bucket: str,
                                                                  s3_client: Any, monkeypatch):
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    where = f"s3://{s3_bucket}/webtask/ledger"
    ledger = await open_ledger(where, site_url="http://shop.example", username="demo")
    await ledger.check_writable("batch-1")
    await ledger.record(LISTING, DONE)
    keys = [o["Key"] for o in s3_client.list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert f"webtask/ledger/{ledger.key(LISTING)}" in keys

    again = await open_ledger(where, site_url="http://shop.example", username="demo")
    found = await again.lookup(LISTING)
    assert found is not None and found.skipped and found.tokens == 1234
    assert found.usage == DONE.usage and found.uncached_input_tokens == 400


async def test_an_unreachable_ledger_fails_before_anything_runs(s3_endpoint: str, monkeypatch):
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    ledger = await open_ledger("s3://no-such-bucket-here/ledger", site_url="http://shop", username="demo")
    with pytest.raises(ConfigError, match="cannot write to the ledger at s3://no-such-bucket-here"):
        await ledger.check_writable("batch-1")


async def test_a_ledger_path_that_is_a_file_is_refused(tmp_path: Path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is not a folder"):
        await open_ledger(str(tmp_path / "file"), site_url="http://shop", username="demo")


async def test_a_record_that_is_not_a_listing_result_is_reported(tmp_path: Path):
    ledger = await open_ledger(str(tmp_path), site_url="http://shop.example", username="demo")
    await ledger.store.awrite({"something": "else"}, key=ledger.key(LISTING))
    with pytest.raises(LedgerRecordError, match="is not a listing result"):
        await ledger.lookup(LISTING)
    # A damaged file (a crash in the middle of a write) simply counts as not done.
    (tmp_path / ledger.key(LISTING)).write_text('{"result": ')
    assert await ledger.lookup(LISTING) is None


async def test_a_record_written_before_usage_was_recorded_still_reads(tmp_path: Path):
    ledger = await open_ledger(str(tmp_path), site_url="http://shop.example", username="demo")
    older = DONE.model_dump(mode="json", exclude={"usage"})  # what the ledger held before `usage`
    await ledger.store.awrite(older, key=ledger.key(LISTING))
    found = await ledger.lookup(LISTING)
    assert found is not None and found.tokens == 1234 and found.usage == Usage()
