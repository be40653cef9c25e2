"""report-webtask-crash on runs marked Crashed through the API (as the worker or the zombie
automation marks them): what it emits for a run of its own, a batch's listing, a batch, and what it
refuses. The whole chain from a SIGKILL to the alert runs in
tests/flows/listings/test_batch_crash_server.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flow_helpers import read_events_for

from webtask_core.errors import ConfigError
from webtask_flows.listings.batch import batch_listing_upload
from webtask_flows.listings.crashes import report_webtask_crash
from webtask_flows.run_flow import run_webtask


async def crashed_run(flow: Any, parameters: dict[str, Any], message: str = "No heartbeat for 90 s") -> Any:
    from prefect.client.orchestration import get_client
    from prefect.states import Crashed, Running

    async with get_client() as client:
        run = await client.create_flow_run(flow, parameters=parameters)
        await client.set_flow_run_state(run.id, Running(), force=True)
        await client.set_flow_run_state(run.id, Crashed(message=message), force=True)
        return await client.read_flow_run(run.id)


async def test_a_crashed_run_of_its_own_is_reported_and_a_batch_listing_is_left_to_its_batch():
    run = await crashed_run(run_webtask, {"task": "Refresh the prices\nof every item", "max_steps": 9})
    assert (await report_webtask_crash(f"prefect.flow-run.{run.id}"))["reported"] is True
    (event,) = await read_events_for(f"webtask.task.{run.id}")
    assert event.event == "webtask.task.crashed" and event.payload["reason"] == "No heartbeat for 90 s"
    assert event.resource["webtask.batch"] == "none" and event.resource.name == "Refresh the prices"
    assert event.payload["max_steps"] == 9

    listing = await crashed_run(run_webtask, {"task": "List it", "labels": {"sku": "A-1", "batch_flow_run_id": "b"}})
    assert (await report_webtask_crash(str(listing.id))) == {"reported": False, "batch_flow_run_id": "b"}


async def test_a_crashed_batch_names_the_listings_its_ledger_does_not_hold(tmp_path):
    rows = [{"sku": f"C-{n}", "title": f"Item {n}", "description": "d", "price": "10", "category": "Bags",
             "condition": "Good", "photos": [f"p{n}.jpg"]} for n in (1, 2)]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))
    parameters = {"manifest": str(manifest), "site_url": "http://127.0.0.1:9/listings", "username": "ops",
                  "ledger": str(tmp_path / "ledger")}
    batch = await crashed_run(batch_listing_upload, parameters, message="exited with status code -9")
    reported = await report_webtask_crash(str(batch.id))
    assert reported == {"reported": True, "completed": [], "in_flight": [], "not_started": ["C-1", "C-2"]}
    (event,) = await read_events_for(f"webtask.batch.{batch.id}")
    assert event.event == "webtask.batch.crashed"
    assert (event.payload["total"], event.payload["not_completed_skus"]) == (2, ["C-1", "C-2"])

    # Where the manifest cannot be read again, it says so (and can name only listings that started).
    manifest.unlink()
    batch = await crashed_run(batch_listing_upload, parameters)
    assert (await report_webtask_crash(str(batch.id)))["not_started"] == []
    (event,) = await read_events_for(f"webtask.batch.{batch.id}")
    assert event.payload["total"] is None and "could not be read again" in event.payload["note"]


async def test_what_it_does_not_report():
    from prefect.client.orchestration import get_client
    from prefect.states import Completed

    async with get_client() as client:
        run = await client.create_flow_run(run_webtask, parameters={"task": "t"})
        await client.set_flow_run_state(run.id, Completed(), force=True)
    assert await report_webtask_crash(str(run.id)) == {"reported": False, "state": "Completed"}
    with pytest.raises(ConfigError, match="flow_run_id"):
        await report_webtask_crash("prefect.flow-run.not-an-id")
