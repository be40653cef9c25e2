"""Task outcome events, read back through the Prefect events API."""

from __future__ import annotations

import uuid

import pytest
from flow_helpers import read_events_for
from prefect import flow

from flows.events import emit_task_event
from webtask_core.errors import ConfigError


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
