"""Task outcome events, read back through the Prefect events API."""

from __future__ import annotations

import uuid

import pytest
from flow_helpers import (
    flow_env,  # noqa: F401 (fixture)
    read_events_for,
)
from prefect import flow

from webtask_core.errors import ConfigError
from webtask_flows.events import emit_task_event


@flow
async def outcome_flow(status: str) -> str:
    from prefect.runtime import flow_run

    emit_task_event(status, task="List the red boots for $45", reason="login failed", steps_used=3, max_steps=20,
                    session_key="shop-demo", extra={"sku": "BOOT-1"})
    return flow_run.id


@pytest.mark.parametrize(
    "status, name",
    [("completed", "webtask.task.completed"), ("aborted", "webtask.task.aborted"),
     ("max_steps", "webtask.task.max-steps")],
)
async def test_event_from_inside_a_flow(status, name):
    flow_run_id = await outcome_flow(status)
    events = await read_events_for(f"webtask.task.{flow_run_id}")
    assert [e.event for e in events] == [name]
    event = events[0]
    assert event.payload == {
        "status": status, "task": "List the red boots for $45", "reason": "login failed",
        "flow_run_id": flow_run_id, "session_key": "shop-demo", "steps_used": 3, "max_steps": 20, "sku": "BOOT-1",
    }
    assert event.resource["webtask.status"] == status
    assert event.resource.name == "List the red boots for $45"
    flow_runs = [r for r in event.related if r.role == "flow-run"]
    assert [r.id for r in flow_runs] == [f"prefect.flow-run.{flow_run_id}"]
    assert flow_runs[0].name  # the run's generated name
    assert "flow" in {r.role for r in event.related}  # added by Prefect from the run context


async def test_event_with_an_explicit_flow_run_id_outside_a_flow():
    run_id = str(uuid.uuid4())
    emit_task_event("aborted", task="t" * 10_000, reason=None, flow_run_id=run_id)
    (event,) = await read_events_for(f"webtask.task.{run_id}")
    assert event.event == "webtask.task.aborted" and event.payload["reason"] is None
    assert len(event.payload["task"]) == 4000  # clipped, stays well under the event size limit


def test_bad_status_and_missing_flow_run_are_refused():
    with pytest.raises(ConfigError, match="status"):
        emit_task_event("exploded", task="t", reason="r", flow_run_id=uuid.uuid4())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="flow_run_id"):
        emit_task_event("completed", task="t", reason="r")


@flow
async def listing_outcome_flow() -> str:
    from prefect.runtime import flow_run

    emit_task_event("aborted", task="Create a listing with these photos ...", reason="no photo", steps_used=2,
                    max_steps=30, labels={"sku": "NIGHT-003", "batch_flow_run_id": BATCH_RUN,
                                          "batch_name": "nightly-owl"})
    return flow_run.id


BATCH_RUN = str(uuid.uuid4())


async def test_a_listing_event_names_its_sku_and_batch():
    flow_run_id = await listing_outcome_flow()
    (event,) = await read_events_for(f"webtask.task.{flow_run_id}")
    # A short name a person recognises, not the task template's first line (the same for every listing).
    assert event.resource.name == "listing NIGHT-003"
    assert event.payload["sku"] == "NIGHT-003" and event.payload["batch_flow_run_id"] == BATCH_RUN
    related = {r.role: r for r in event.related}
    assert related["listing"].id == "webtask.listing.NIGHT-003" and related["listing"].name == "NIGHT-003"
    assert related["batch"].id == f"prefect.flow-run.{BATCH_RUN}" and related["batch"].name == "nightly-owl"


async def test_a_run_that_fails_with_an_error_emits_failed(flow_env, monkeypatch):
    from webtask_flows.run_flow import run_webtask

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    state = await run_webtask(task="List SKU-9", start_url="not a url", labels={"sku": "SKU-9"}, return_state=True)
    assert state.is_failed() and state.name == "Failed"
    (event,) = await read_events_for(f"webtask.task.{state.state_details.flow_run_id}")
    assert event.event == "webtask.task.failed" and event.resource.name == "listing SKU-9"
    assert "start_url" in event.payload["reason"] and event.payload["sku"] == "SKU-9"


async def test_batch_events_count_and_name_the_failures():
    from webtask_flows.listings.events import emit_batch_event
    from webtask_flows.listings.models import ListingResult

    @flow
    async def batch_flow() -> str:
        from prefect.runtime import flow_run

        results = [ListingResult(sku="A-1", status="completed"), ListingResult(sku="A-2", status="aborted",
                   feedback="the form kept failing"), ListingResult(sku="A-3", status="completed", skipped=True),
                   ListingResult(sku="row-4", status="invalid", feedback="row 4, price: must be > 0")]
        emit_batch_event(results, source="s3://b/m.jsonl", message="2 of 3 listing(s) failed: A-2")
        return flow_run.id

    run_id = await batch_flow()
    (event,) = await read_events_for(f"webtask.batch.{run_id}")
    assert event.event == "webtask.batch.failed"
    assert event.payload["failed_skus"] == ["A-2", "row-4"] and event.payload["total"] == 3
    assert event.payload["counts"] == {"completed": 1, "aborted": 1, "already done": 1, "invalid": 1}
    assert event.payload["failed"][0] == {"sku": "A-2", "status": "aborted", "reason": "the form kept failing",
                                          "flow_run_id": None}
