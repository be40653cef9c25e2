"""Prefect's Retry of a failed batch (`prefect flow-run retry`, the UI's Retry button) reruns exactly the
listings that did not complete, each as a fresh run of its own, and never hands one listing another
listing's earlier result.

Prefect identifies a subflow call by its position among the parent's calls; a retried batch skips the
listings the ledger holds, so positions shift. Each listing's subflow therefore runs inside a task of
its own (see webtask_flows.subflows), which gives the subflow a fresh identity on every attempt.
"""

from __future__ import annotations

import json

import pytest
from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    read_task_runs,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from test_batch_flow import manifest_rows, params, requests_per_sku, write_photos

from webtask_core.testing import MarketplaceListingPolicy
from webtask_flows.listings.batch import batch_listing_upload, batch_results


async def retry_like_the_ui(flow_run_id: str) -> None:
    """What the UI's Retry (and `prefect flow-run retry`) does: the same flow run is set Scheduled and
    run again, as attempt 2. A worker then runs it through the engine; here the engine runs it in this
    process (the CLI's own local path does not await async flows in Prefect 3.8). The real-server test
    in test_deployments_server.py retries through the CLI and a worker."""
    from prefect.client.orchestration import get_client
    from prefect.flow_engine import run_flow_async
    from prefect.states import Scheduled

    async with get_client() as client:
        await client.set_flow_run_state(flow_run_id, Scheduled(message="Retried"), force=True)
        flow_run = await client.read_flow_run(flow_run_id)
    await run_flow_async(batch_listing_upload, flow_run=flow_run, parameters=flow_run.parameters,
                         return_type="state")


@pytest.mark.slow
@pytest.mark.e2e
async def test_retry_of_a_failed_batch_reruns_only_the_failed_listing(flow_env, shop, shop_secret, monkeypatch,
                                                                      tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    rows = manifest_rows(3, prefix="RT")
    write_photos(tmp_path, rows)
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))
    policy = MarketplaceListingPolicy(abort_on_sku=["RT-3"])

    async with fake_model_env(policy, monkeypatch) as server:
        state = await batch_listing_upload(manifest=str(manifest), max_concurrency=1, **params(shop, tmp_path),
                                           return_state=True)
        assert state.is_failed() and "RT-3" in state.message
        batch_id = str(state.state_details.flow_run_id)

        policy.abort_on_sku.clear()  # the cause is cleared; the operator presses Retry
        server.reset()
        await retry_like_the_ui(batch_id)
        rerun = requests_per_sku(server.requests)

    async with get_client() as client:
        batch = await client.read_flow_run(batch_id)
        children = await client.read_flow_runs(flow_run_filter=FlowRunFilter(
            parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[batch_id])))
    assert batch.run_count == 2 and batch.state.is_completed(), batch.state.message
    results = {r.sku: r for r in await batch_results(batch.state)}
    assert results["RT-3"].status == "completed" and not results["RT-3"].skipped
    assert [results[sku].skipped for sku in ("RT-1", "RT-2")] == [True, True]
    assert rerun.keys() == {"RT-3"}  # only the failed listing asked the model again
    (listed,) = shop.listing_by_sku("RT-3")
    assert results["RT-3"].listing_url == listed.url
    assert [len(shop.listing_by_sku(row["sku"])) for row in rows] == [1, 1, 1]

    # RT-3 ran twice, each time a subflow run of its own; its result is the second run's.
    rt3_runs = sorted((run for run in children if run.name == "RT-3"), key=lambda run: run.created)
    assert len(rt3_runs) == 2 and rt3_runs[0].state.name == "Aborted" and rt3_runs[1].state.is_completed()
    assert results["RT-3"].flow_run_id == str(rt3_runs[1].id)
    # In the UI each listing is a task run named after it, holding its subflow runs.
    task_runs = await read_task_runs(batch_id, expected=7)
    assert {run.name for run in task_runs} >= {"listing RT-1", "listing RT-2", "listing RT-3"}
    by_id = {run.id: run for run in task_runs}
    # subflow run -> its tracking task run -> the task it was called from (the UI nests them so)
    callers = {by_id[parent.id].name for run in rt3_runs
               for parent in by_id[run.parent_task_run_id].task_inputs["__parents__"]}
    assert callers == {"listing RT-3"}
