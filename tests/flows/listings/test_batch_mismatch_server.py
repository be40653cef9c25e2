"""The mismatch alert on a real `prefect server start`: `prefect deploy --all`, the shipped
webtask-listing-mismatch automation with a webhook block, a process worker, and the nightly batch
on a demo marketplace that adds VAT to every price it stores. The listing's run ends Mismatch, the
alert names the listing, the field expected vs shown and the listing's page, and posts to a local
webhook. Every process the test starts is stopped by its PID at the end."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from flow_helpers import (
    WebhookReceiver,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    shop,  # noqa: F401 (fixture)
)
from test_batch_flow import manifest_rows, write_photos
from test_deployments_server import (
    PREFECT,
    PROJECT,
    deploy_nightly,
    processes,  # noqa: F401 (fixture)
    wait_for_run,
)

from webtask_core.testing import MarketplaceListingPolicy
from webtask_core.testing.marketplace import Alterations

AUTOMATION = PROJECT / "deployments" / "automations" / "webtask-listing-mismatch.yaml"


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_a_mismatched_listing_alerts_a_webhook_from_a_real_server(flow_env, shop, processes, monkeypatch,
                                                                          tmp_path):
    from prefect.client.orchestration import PrefectClient

    rows = manifest_rows(1, prefix="NIGHT")  # NIGHT-1, 11.50
    write_photos(tmp_path, rows)
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))
    shop.set_alterations(Alterations(vat_percent=19))  # 11.50 is stored as 13.69

    with WebhookReceiver() as webhook:
        async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
            await deploy_nightly(processes, server.base_url, shop.url("/listings"), manifest)
            processes.run(sys.executable, "-m", "webtask_flows.automations", "webhook-block", "webtask-alerts",
                          webhook.url)
            processes.run(sys.executable, "-m", "webtask_flows.automations", "create", str(AUTOMATION))
            processes.start("worker", PREFECT, "worker", "start", "--pool", "webtask-pool", "--name", "worker")
            processes.run(PREFECT, "deployment", "run", "batch-listing-upload/nightly", "--param", "replay=false")

            posts = await webhook.wait_for(lambda post: post["subject"].startswith("webtask listing mismatch"),
                                           timeout_s=240)
            assert posts, f"no mismatch alert; worker log:\n{processes.log('worker')[-3000:]}"
            (post,) = posts
            assert post["subject"].startswith("webtask listing mismatch: listing NIGHT-1 (price) (batch ")
            (listing,) = shop.listing_by_sku("NIGHT-1")
            body = post["body"]
            assert "- price: expected 11.50, shown $13.69" in body and "SKU: NIGHT-1" in body
            assert f"Listing: {listing.url}" in body and "Picture of the page: the run's artifacts" in body
            assert sum(1 for request in server.requests if request.get("tool_choice")) == 1
            async with PrefectClient(processes.env["PREFECT_API_URL"]) as client:
                batch = await wait_for_run(client, "batch-listing-upload/nightly", quiet_s=120)
                assert batch.state.is_failed() and "NIGHT-1" in (batch.state.message or "")
            await asyncio.sleep(0)
    assert listing.price == 13.69
