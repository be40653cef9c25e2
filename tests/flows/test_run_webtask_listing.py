"""A listing created through the run-webtask flow: photos from S3, a Secret block, artifacts in Prefect."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from flow_helpers import (
    OUTPUT_SCHEMA,
    SHOP_PASSWORD,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    listing_task,
    make_photos,
    read_artifacts,
    read_flow_run,
    read_task_runs,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)

from webtask_core.record import WorkerStatus
from webtask_core.testing import MarketplaceListingPolicy
from webtask_flows.artifacts import ARTIFACT_KEY_PATTERN, summary_artifact_key
from webtask_flows.costs import SPENT_INPUT_PREFIX, SPENT_LABEL, read_spent
from webtask_flows.run_flow import run_webtask
from webtask_flows.run_result import WebtaskResult, webtask_result


async def test_listing_with_two_photos_from_s3(flow_env, shop, shop_secret, monkeypatch, s3_endpoint, s3_client,
                                               s3_bucket, tmp_path):
    photos = make_photos(tmp_path / "photos")
    s3_client.upload_file(str(photos[0]), s3_bucket, "listings/BOOT-001/front.jpg")
    # A key with "../" segments: downloaded under a safe name inside the run's folder.
    s3_client.upload_file(str(photos[1]), s3_bucket, "listings/../../back side.png")
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    resources = {
        "listing_image_1": f"s3://{s3_bucket}/listings/BOOT-001/front.jpg",
        "listing_image_2": f"s3://{s3_bucket}/listings/../../back side.png",
    }

    label_writes = count_label_writes(monkeypatch)
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        state = await run_webtask(
            listing_task(shop.url("/listings")), start_url=shop.url("/listings"), resources=resources,
            max_steps=20, session_key="listing-shop", output_schema=OUTPUT_SCHEMA, secrets=shop_secret,
            return_state=True,
        )
        requests = server.requests

    assert state.is_completed(), state.message
    result = await webtask_result(state)
    assert isinstance(result, WebtaskResult) and result.status is WorkerStatus.completed
    assert state.message == result.feedback

    (listing,) = shop.listing_by_sku("BOOT-001")
    assert result.output == {"listing_url": listing.url, "sku": "BOOT-001"}
    stored = sorted(hashlib.sha256(photo.content).hexdigest() for photo in listing.photos)
    assert stored == sorted(hashlib.sha256(path.read_bytes()).hexdigest() for path in photos)
    assert list(tmp_path.rglob("back side.png")) == [photos[1]]  # nothing escaped the run's folder

    assert result.steps == len(requests) == len(result.step_timings)
    assert result.tokens == result.usage.total_tokens > 0
    assert all(t.attempts == 1 and t.task_ms >= t.step_ms > 0 for t in result.step_timings)
    assert result.step_retries == 0 and result.browser_relaunches == 0

    # Steps are task runs; every step and the summary are artifacts readable back.
    flow_run_id = state.state_details.flow_run_id
    task_runs = await read_task_runs(flow_run_id, expected=result.steps)
    # Each task run is named after what its step did, what the page called the element included.
    names = sorted(run.name for run in task_runs)
    assert [name.split(" · ")[0] for name in names] == [f"step {n}" for n in range(1, result.steps + 1)]
    assert names[0] == 'step 1 · fill "Username" +2' and 'step 3 · click "New listing"' in names
    assert [timing.name for timing in result.step_timings] == names
    assert all(run.state.is_completed() and run.run_count == 1 for run in task_runs)

    artifacts = await read_artifacts(flow_run_id)
    markdown = [a for a in artifacts if a.type == "markdown"]
    steps = [a for a in markdown if a.key is None]
    tables = [a for a in artifacts if a.type == "table"]
    (summary,) = [a for a in markdown if a.key is not None]
    assert len(steps) == result.steps and len(tables) == 1
    assert {a.task_run_id for a in steps} == {run.id for run in task_runs}  # each under its step
    # Written beside the next step (flows/steps.py), yet one after the other in the steps' order.
    in_order = [a.description.split(" ")[1] for a in sorted(steps, key=lambda a: a.created)]
    assert in_order == [str(n) for n in range(1, result.steps + 1)]
    assert summary.key == summary_artifact_key("listing-shop") == "webtask-summary-listing-shop"
    assert all(ARTIFACT_KEY_PATTERN.fullmatch(a.key or "") for a in artifacts)

    upload_step = next(a.data for a in steps if "**upload**" in a.data)
    assert '"resources": ["listing_image_1", "listing_image_2"]' in upload_step
    assert re.search(r"!\[page at step \d+\]\(data:image/jpeg;base64,[A-Za-z0-9+/=]{100,}\)", upload_step)
    assert "Tokens**: input" in upload_step
    login_step = next(a.data for a in steps if "Logging in" in a.data)
    assert "{{secret:shop_password}}" in login_step

    rows = json.loads(tables[0].data)
    assert [row["step"] for row in rows] == list(range(1, result.steps + 1))
    assert [row["name"] for row in rows] == names
    # The model's price (the default model's family in the package's table) in every step and the total.
    assert result.cost_usd is not None and result.cost_usd > 0 and result.model
    assert all(row["cost_usd"] > 0 for row in rows)
    assert "| Cost | $" in summary.data and "**Cost**: $" in upload_step
    assert "completed" in summary.data and listing.url in summary.data and "Steps | " in summary.data

    everything = json.dumps([a.data for a in artifacts]) + state.message + result.model_dump_json()
    assert SHOP_PASSWORD not in everything
    flow_run = await read_flow_run(flow_run_id)
    assert flow_run.name and flow_run.state.name == "Completed"
    # What the run spent: as it went, a flow run input after each step that changed it (never the same
    # value twice); at its end, once, its flow run's label — what read_spent reads of a completed run.
    assert flow_run.labels[SPENT_LABEL] == result.cost_usd
    written = [labels[SPENT_LABEL] for run_id, labels in label_writes if run_id == flow_run_id]
    assert written == [result.cost_usd]
    kept = await read_spent_inputs(flow_run_id)
    assert 1 <= len(kept) <= result.steps and kept == sorted(set(kept)) and kept[-1] <= result.cost_usd
    from prefect.client.orchestration import get_client

    async with get_client() as client:
        assert await read_spent(client, [flow_run]) == {str(flow_run_id): result.cost_usd}


async def read_spent_inputs(flow_run_id: Any) -> list[float]:
    """What the run recorded it had spent so far, oldest first."""
    from prefect.client.orchestration import get_client

    async with get_client() as client:
        inputs = await client.filter_flow_run_input(flow_run_id=flow_run_id, key_prefix=SPENT_INPUT_PREFIX,
                                                    limit=1000, exclude_keys=set())
    return [json.loads(item.value) for item in inputs]


def count_label_writes(monkeypatch: Any) -> list[tuple[Any, dict[str, Any]]]:
    """Every flow-run label update sent to the Prefect API from now on, as (flow run id, labels)."""
    from prefect.client.orchestration import PrefectClient

    writes: list[tuple[Any, dict[str, Any]]] = []
    update = PrefectClient.update_flow_run_labels

    async def counted(client: Any, flow_run_id: Any, labels: Any) -> None:
        writes.append((flow_run_id, dict(labels)))
        await update(client, flow_run_id, labels)

    monkeypatch.setattr(PrefectClient, "update_flow_run_labels", counted)
    return writes
