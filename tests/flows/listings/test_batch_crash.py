"""Crash safety: the batch process is SIGKILLed mid-batch; the rerun finishes every listing exactly
once and never reruns one that had completed (model requests counted per SKU on the fake server), and
removes the browser and photo folders the killed process left in the temp dir."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from typing import Any

import pytest
from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from test_batch_flow import manifest_rows, requests_per_sku, write_photos

from webtask_core.testing import MarketplaceListingPolicy
from webtask_flows.listings.batch import batch_listing_upload

RUN_BATCH = """
import asyncio, json, sys
from webtask_flows.listings.batch import batch_listing_upload
asyncio.run(batch_listing_upload(**json.loads(sys.argv[1])))
"""


class KillWhenPublished:
    """Answers like the listing policy, but SIGKILLs the batch's process group as soon as the model
    is asked about a page after ``sku`` was published: that listing is in flight, on the site, and
    not yet in the ledger."""

    def __init__(self, shop: Any, sku: str):
        self.policy = MarketplaceListingPolicy()
        self.shop, self.sku = shop, sku
        self.process: subprocess.Popen[bytes] | None = None
        self.killed = False

    def __call__(self, request: dict[str, Any]) -> Any:
        if not self.killed and self.process is not None and self.shop.listing_by_sku(self.sku):
            os.killpg(self.process.pid, signal.SIGKILL)  # python, Playwright's driver and Chromium
            self.killed = True
        return self.policy(request)


@pytest.mark.slow
@pytest.mark.e2e
async def test_a_killed_batch_reruns_without_duplicates(flow_env, shop, shop_secret, monkeypatch, s3_endpoint,
                                                        s3_bucket, tmp_path):
    from prefect.settings import PREFECT_API_URL

    rows = manifest_rows(3, prefix="CR")
    write_photos(tmp_path, rows)
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    parameters = {
        "manifest": str(manifest), "site_url": shop.url("/listings"), "username": "demo",
        "password_secret": "webtask-test-shop-password", "max_concurrency": 1,  # one listing after another
        # On S3, so a rerun on another machine would see it just the same.
        "ledger": f"s3://{s3_bucket}/ledger",
    }

    killer = KillWhenPublished(shop, "CR-2")
    async with fake_model_env(killer, monkeypatch) as server:
        env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "TMPDIR": str(flow_env.temp)}
        killer.process = subprocess.Popen(
            [sys.executable, "-c", RUN_BATCH, json.dumps(parameters)], env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        try:
            code = await asyncio.wait_for(asyncio.to_thread(killer.process.wait), timeout=180)
        finally:
            if killer.process.poll() is None:
                os.killpg(killer.process.pid, signal.SIGKILL)
                killer.process.wait()
        assert killer.killed and code == -signal.SIGKILL, killer.process.stderr.read().decode()[-3000:]
        before = requests_per_sku(server.requests)
        assert set(before) == {"CR-1", "CR-2"}  # one listing done, the second one in flight
        assert [len(shop.listing_by_sku(row["sku"])) for row in rows] == [1, 1, 0]

        # The killed process could not remove its browser profile and photo folders.
        left = {prefix: list(flow_env.temp.glob(f"{prefix}*")) for prefix in ("webtask-browser-", "webtask-resources-")}
        assert all(left.values()), left

        server.reset()
        results = await batch_listing_upload(**parameters | {"max_concurrency": 2})
        # The next start removed them (its own folders are gone too: it ended normally).
        assert list(flow_env.temp.glob("webtask-browser-*")) == []
        after = requests_per_sku(server.requests)

    assert [(r.sku, r.status, r.skipped) for r in results] == [
        ("CR-1", "completed", True), ("CR-2", "completed", False),
        ("CR-3", "completed", False),
    ]
    assert "CR-1" not in after  # completed before the crash: not run again
    assert set(after) == {"CR-2", "CR-3"}
    assert [len(shop.listing_by_sku(row["sku"])) for row in rows] == [1, 1, 1]  # each exactly once
    (in_flight,) = shop.listing_by_sku("CR-2")
    assert results[1].listing_url == in_flight.url and "already listed" in results[1].feedback
