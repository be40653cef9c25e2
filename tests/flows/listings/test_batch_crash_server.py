"""A nightly batch whose process is SIGKILLed mid-listing alerts, naming the listings that had not
completed. On a real `prefect server start` with `prefect deploy --all` and a process worker: the
worker sees its flow run's process die and marks the batch Crashed; the crash-report deployment's
trigger runs report-webtask-crash on the pool, which emits webtask.batch.crashed (and
webtask.task.crashed for the listing in flight); the shipped webtask-batch-crashed automation posts
to a local webhook. Every process the test starts is stopped by its PID at the end."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

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
from webtask_core.testing.request_view import task_json

AUTOMATION = PROJECT / "deployments" / "automations" / "webtask-batch-crashed.yaml"


def processes_of_flow_run(flow_run_id: str) -> list[int]:
    """Every process running for a flow run — its Python process, Playwright's driver, Chromium —
    found by the PREFECT__FLOW_RUN_ID the worker put in its environment (they all inherit it)."""
    marker = f"PREFECT__FLOW_RUN_ID={flow_run_id}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:  # gone meanwhile, or not ours
                continue
    return found


async def running_run(client: Any, deployment: str, timeout_s: float = 60) -> Any:
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    found = await client.read_deployment_by_name(deployment)
    for _ in range(int(timeout_s)):
        runs = await client.read_flow_runs(deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[found.id])))
        if running := [run for run in runs if run.state is not None and run.state.is_running()]:
            return running[0]
        await asyncio.sleep(1)
    raise AssertionError(f"no running run of {deployment}")


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(420)
async def test_a_sigkilled_batch_alerts_with_the_listings_that_had_not_completed(flow_env, shop, processes,
                                                                                 monkeypatch, tmp_path):
    from prefect.client.orchestration import PrefectClient
    from prefect.events.filters import EventFilter, EventNameFilter

    rows = manifest_rows(3, prefix="NIGHT")
    write_photos(tmp_path, rows)
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))
    thinking, released = threading.Event(), threading.Event()
    lister = MarketplaceListingPolicy()

    def policy(request: dict[str, Any]) -> Any:
        if task_json(request).get("sku") == "NIGHT-2":  # the model "thinks" until the process is gone
            thinking.set()
            released.wait(120)
        return lister(request)

    api_url = processes.env["PREFECT_API_URL"]
    with WebhookReceiver() as webhook:
        async with fake_model_env(policy, monkeypatch) as server:
            # The crash-report deployment and its trigger are deployed with the nightly batch.
            await deploy_nightly(processes, server.base_url, shop.url("/listings"), manifest)
            processes.run(sys.executable, "-m", "webtask_flows.automations", "webhook-block", "webtask-alerts",
                          webhook.url)
            processes.run(sys.executable, "-m", "webtask_flows.automations", "create", str(AUTOMATION))
            processes.start("worker", PREFECT, "worker", "start", "--pool", "webtask-pool", "--name", "worker")

            async with PrefectClient(api_url) as client:
                processes.run(PREFECT, "deployment", "run", "batch-listing-upload/nightly",
                              "--param", "max_concurrency=1", "--param", "replay=false")
                assert await asyncio.to_thread(thinking.wait, 180), "NIGHT-2 never reached the model"
                batch = await running_run(client, "batch-listing-upload/nightly")
                killed = processes_of_flow_run(str(batch.id))
                assert killed, "the batch's process was not found"
                for pid in killed:  # the whole job, as an out-of-memory kill or an evicted pod would
                    os.kill(pid, signal.SIGKILL)
                released.set()

                posts = await webhook.wait_for(lambda post: post["subject"].startswith("webtask batch crashed"),
                                               timeout_s=240)
                assert posts, f"no crash alert; worker log:\n{processes.log('worker')[-3000:]}"
                (post,) = posts
                assert post["subject"].startswith("webtask batch crashed: 2 of 3 listing(s) not completed (")
                body = post["body"]
                assert "Not completed: NIGHT-2, NIGHT-3" in body and "Not started: NIGHT-3" in body
                assert "- NIGHT-2: was running" in body and "Completed before the crash: 1" in body
                assert f"prefect flow-run retry {batch.id}" in body
                batch = await client.read_flow_run(batch.id)
                assert batch.state.is_crashed()
                # The listing in flight got its own event, naming its batch. The alert comes from the
                # event stream; the server stores events a moment later, in batches: read until it is there.
                crashed = []
                for _ in range(30):
                    crashed = (await client.read_events(filter=EventFilter(
                        event=EventNameFilter(name=["webtask.task.crashed"])), limit=10)).events
                    if crashed:
                        break
                    await asyncio.sleep(1)
                assert [(event.payload["sku"], event.payload["batch_flow_run_id"]) for event in crashed] == [
                    ("NIGHT-2", str(batch.id))]
                report = await wait_for_run(client, "report-webtask-crash/crash-report", timeout_s=60)
                assert report.state.is_completed()
    assert [len(shop.listing_by_sku(row["sku"])) for row in rows] == [1, 0, 0]
