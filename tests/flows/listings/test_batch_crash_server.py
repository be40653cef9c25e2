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
from prefect_ui import artifact_table_widths
from test_batch_flow import manifest_rows, write_photos
from test_deployments_server import (
    PREFECT,
    PROJECT,
    deploy_nightly,
    processes,  # noqa: F401 (fixture)
    wait_for_attempt,
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
@pytest.mark.timeout(900)
async def test_a_sigkilled_batch_alerts_with_the_listings_that_had_not_completed(flow_env, shop, processes,
                                                                                 monkeypatch, tmp_path):
    from prefect.client.orchestration import PrefectClient
    from prefect.events.filters import EventFilter, EventNameFilter

    rows = manifest_rows(3, prefix="NIGHT")
    write_photos(tmp_path, rows)
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))
    thinking, released, retried = threading.Event(), threading.Event(), threading.Event()
    lister = MarketplaceListingPolicy()

    def policy(request: dict[str, Any]) -> Any:
        sku = task_json(request).get("sku")
        if sku == "NIGHT-2" and not released.is_set():  # the model "thinks" until the process is gone
            thinking.set()
            released.wait(120)
        if sku == "NIGHT-3" and retried.is_set():  # in the retry, the API refuses NIGHT-3's request
            raise RuntimeError("the listing of SKU NIGHT-3 is set to fail (faults.json)")
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
                report = await wait_for_run(client, "report-webtask-crash/crash-report", quiet_s=60)
                assert report.state.is_completed()
                # What the killed attempt spent is in the crash event (every run kept it as it went).
                (crash_event,) = await stored_events(client, "webtask.batch.crashed")
                first_spent = crash_event.payload["cost_usd"]
                assert first_spent > 0 and [(item["attempt"], item["cost_usd"]) for item in
                                            crash_event.payload["cost_by_attempt"]] == [(1, first_spent)]
                # Nothing the dead process ran is left Running: its task runs and in-process listings.
                assert await unfinished_runs(client, batch.id) == []

                retried.set()
                processes.run(PREFECT, "flow-run", "retry", str(batch.id))
                batch = await wait_for_attempt(client, batch.id, 2, quiet_s=300)
                assert batch.state.is_failed() and "NIGHT-3" in batch.state.message, batch.state.message
                assert await unfinished_runs(client, batch.id) == []
                await check_the_cost_of_both_attempts(client, batch, first_spent)
                await check_the_summary_fits_the_artifact_page(client, batch, processes.env["PREFECT_API_URL"])
    assert [len(shop.listing_by_sku(row["sku"])) for row in rows] == [1, 1, 0]


async def stored_events(client: Any, name: str, count: int = 1) -> list[Any]:
    """The events named ``name``, once the server has stored ``count`` of them (storage follows the
    event stream in batches)."""
    from prefect.events.filters import EventFilter, EventNameFilter

    found: list[Any] = []
    for _ in range(60):
        found = (await client.read_events(filter=EventFilter(event=EventNameFilter(name=[name])), limit=10)).events
        if len(found) >= count:
            return found
        await asyncio.sleep(1)
    raise AssertionError(f"{len(found)} {name} event(s) stored, expected {count}")


async def unfinished_runs(client: Any, batch_id: Any) -> list[str]:
    """The batch's task runs and child flow runs (and theirs) not in a final state."""
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    from webtask_flows.listings.spend import child_runs

    children = await child_runs(client, batch_id)
    flow_run_ids = [batch_id, *(child.id for child in children)]
    task_runs = await client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=flow_run_ids)))
    return [f"{run.name}: {run.state.name}" for run in [*children, *task_runs]
            if run.state is not None and not run.state.is_final()]


async def check_the_cost_of_both_attempts(client: Any, batch: Any, first_spent: float) -> None:
    """The batch's cost is what both attempts spent, by attempt: its event and its summary say so, and
    the errored listing has a cost, not a missing price."""
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    (failed,) = await stored_events(client, "webtask.batch.failed")
    by_attempt = failed.payload["cost_by_attempt"]
    assert [item["attempt"] for item in by_attempt] == [1, 2] and by_attempt[0]["cost_usd"] == first_spent
    assert by_attempt[1]["cost_usd"] > 0  # NIGHT-2 listed again in the retry
    assert failed.payload["cost_usd"] == round(first_spent + by_attempt[1]["cost_usd"], 6)
    (summary,) = [artifact for artifact in await client.read_artifacts(
        artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[batch.id]))) if artifact.type == "table"]
    assert failed.payload["cost_line"] in summary.description and "over 2 attempts (attempt 1: $" in summary.description
    assert "without a price" not in summary.description
    rows = {row["sku"]: row for row in json.loads(summary.data)}
    assert rows["NIGHT-3"]["status"] == "error" and rows["NIGHT-3"]["cost"] == "$0.0000", rows["NIGHT-3"]
    assert rows["NIGHT-3"]["reason"].startswith("the listing of SKU NIGHT-3"), rows["NIGHT-3"]


async def check_the_summary_fits_the_artifact_page(client: Any, batch: Any, api_url: str) -> None:
    """On the artifact page of both of the server's UIs, in a real Chromium whose window leaves the table
    ~844 px, the first columns — why, which listing, how it ended, what it cost, where it is — show whole."""
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    (summary,) = [artifact for artifact in await client.read_artifacts(
        artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[batch.id]))) if artifact.type == "table"]
    ui = api_url.removesuffix("/api")
    first = ["reason", "sku", "status", "cost", "listing_url"]
    # The classic UI in a 1,400 px window, the new one (a wider side bar) in a 1,540 px one.
    for page, window in ((f"{ui}/artifacts/artifact/{summary.id}", 1400), (f"{ui}/v2/artifacts/artifact/{summary.id}",
                                                                            1540)):
        seen = await artifact_table_widths(page, window)
        assert 800 <= seen["room"] <= 900, (page, seen["room"])
        assert seen["headers"][: len(first)] == first, seen["headers"]
        edge = seen["edges"][len(first) - 1]  # where the listing_url column ends
        assert edge <= seen["room"], (page, seen["room"], seen["edges"])
        shown = {row[1]["text"]: row[: len(first)] for row in seen["cells"]}
        assert shown["NIGHT-3"][0]["text"].startswith("the listing of SKU NIGHT-3"), shown
        assert shown["NIGHT-2"][4]["text"].startswith("http://") and "/listings/" in shown["NIGHT-2"][4]["text"]
        assert all(cell["fits"] for row in shown.values() for cell in row), shown
