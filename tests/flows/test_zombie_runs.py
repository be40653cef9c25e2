"""The shipped webtask-zombie-runs automation marks a run whose process was SIGKILLed Crashed (it stops
sending heartbeats), and says nothing about runs that had ended: Aborted, MaxSteps, or Completed with
a heartbeat that reached the server after the run's final state. Prefect's real heartbeat events and
its triggers and actions services (in the harness's server) do the work; only the automation's
silence window is shortened so the test does not wait 90 s."""

from __future__ import annotations

import asyncio
import copy
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prefect import flow
from prefect.states import Completed, Failed

from webtask_flows.automations import read_automation_definitions
from webtask_flows.listings.batch import batch_listing_upload
from webtask_flows.run_end import RUN_END_HOOKS, announce_run_end
from webtask_flows.run_flow import run_webtask

ZOMBIE_FILE = Path(__file__).parents[2] / "deployments" / "automations" / "webtask-zombie-runs.yaml"
WITHIN_S = 10  # the least Prefect allows

SLEEPER = """
import asyncio
from prefect import flow

@flow(flow_run_name="zombie-to-be")
async def sleeper():
    from prefect.runtime import flow_run
    print(flow_run.id, flush=True)
    await asyncio.sleep(600)

asyncio.run(sleeper())
"""


def late_heartbeat(flow: Any, flow_run: Any, state: Any) -> None:
    """What the server sees when a heartbeat queued behind a run's other events arrives after its
    final state: a heartbeat of the run, from before the end, received after it."""
    from prefect.events import emit_event

    emit_event("prefect.flow-run.heartbeat", resource={"prefect.resource.id": f"prefect.flow-run.{flow_run.id}"},
               occurred=datetime.now(UTC) - timedelta(seconds=2))


# Like run-webtask and the batch (checked below): the run's last word comes from its state hooks.
@flow(on_completion=RUN_END_HOOKS, on_failure=RUN_END_HOOKS)
async def ends_as(name: str) -> Any:
    """Ends as run-webtask does: Completed, or Failed named Aborted / MaxSteps."""
    return Completed() if name == "Completed" else Failed(name=name, message=f"ended {name}")


@flow(on_completion=[late_heartbeat, *RUN_END_HOOKS])
async def ends_before_its_last_heartbeat_arrives() -> str:
    return "done"


def test_the_webtask_flows_announce_their_end_in_every_final_state():
    for webtask_flow in (run_webtask, batch_listing_upload):
        for hooks in (webtask_flow.on_completion_hooks, webtask_flow.on_failure_hooks,
                      webtask_flow.on_crashed_hooks, webtask_flow.on_cancellation_hooks):
            assert announce_run_end in hooks, webtask_flow.name


async def automation_actions(client: Any, automation_id: Any) -> list[str]:
    from prefect.events.filters import EventFilter, EventResourceFilter

    events = await client.read_events(filter=EventFilter(
        resource=EventResourceFilter(id=[f"prefect.automation.{automation_id}"])), limit=50)
    return sorted(event.event for event in events.events if event.event.startswith("prefect.automation.action"))


@pytest.mark.slow
@pytest.mark.e2e
async def test_only_a_killed_run_is_marked_crashed():
    from prefect.client.orchestration import get_client
    from prefect.events.schemas.automations import AutomationCore
    from prefect.settings import PREFECT_API_URL

    (definition,) = read_automation_definitions(ZOMBIE_FILE)
    assert definition["trigger"]["within"] == 90  # what ships (three 30 s heartbeats)
    definition = copy.deepcopy(definition) | {"name": "webtask-zombie-runs-test"}
    definition["trigger"]["within"] = WITHIN_S

    async with get_client() as client:
        automation_id = await client.create_automation(AutomationCore.model_validate(definition))
        process = subprocess.Popen([sys.executable, "-c", SLEEPER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   env={**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()},
                                   start_new_session=True, text=True)
        try:
            zombie_id = (await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), timeout=60)).strip()
            assert (await client.read_flow_run(zombie_id)).state.is_running()
            await asyncio.sleep(1)  # its first heartbeat is on its way
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

            # Runs that end by themselves, each after its start heartbeat, as the automation watches them.
            finished = {}
            # A second apart: the test server's SQLite once dropped a run's `closed` event ("database is
            # locked" while the automation service wrote buckets for runs ending at the same moment).
            for name in ("Aborted", "MaxSteps", "Completed"):
                state = await ends_as(name, return_state=True)
                finished[state.state_details.flow_run_id] = name
                await asyncio.sleep(1)
            state = await ends_before_its_last_heartbeat_arrives(return_state=True)
            finished[state.state_details.flow_run_id] = "Completed"
            ended = time.monotonic()

            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                run = await client.read_flow_run(zombie_id)
                if run.state.is_crashed() and time.monotonic() > ended + WITHIN_S + 8:
                    break
                await asyncio.sleep(1)
            assert run.state.is_crashed(), f"still {run.state.name} a minute after the kill"
            assert "No heartbeat" in (run.state.message or "")
            for flow_run_id, name in finished.items():
                assert (await client.read_flow_run(flow_run_id)).state.name == name
            # It acted once, on the killed run, and never tried a run that had ended.
            assert await automation_actions(client, automation_id) == [
                "prefect.automation.action.executed", "prefect.automation.action.triggered"]
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            # A short window would crash the session's later (live) runs between their heartbeats.
            await client.delete_automation(automation_id)
