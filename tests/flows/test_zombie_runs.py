"""A flow run whose process is SIGKILLed stops sending heartbeats; the shipped webtask-zombie-runs
automation marks it Crashed instead of leaving it Running for good. Prefect's real heartbeat events
and its triggers and actions services (in the harness's server) do the work; only the automation's
silence window is shortened so the test does not wait 90 s."""

from __future__ import annotations

import asyncio
import copy
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from webtask_flows.automations import read_automation_definitions

ZOMBIE_FILE = Path(__file__).parents[2] / "deployments" / "automations" / "webtask-zombie-runs.yaml"

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


@pytest.mark.slow
async def test_a_killed_run_is_marked_crashed_by_the_zombie_automation():
    from prefect.client.orchestration import get_client
    from prefect.events.schemas.automations import AutomationCore
    from prefect.settings import PREFECT_API_URL

    (definition,) = read_automation_definitions(ZOMBIE_FILE)
    assert definition["trigger"]["within"] == 90  # what ships (three 30 s heartbeats)
    definition = copy.deepcopy(definition) | {"name": "webtask-zombie-runs-test"}
    definition["trigger"]["within"] = 10  # the least Prefect allows

    async with get_client() as client:
        automation_id = await client.create_automation(AutomationCore.model_validate(definition))
        process = subprocess.Popen([sys.executable, "-c", SLEEPER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   env={**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()},
                                   start_new_session=True, text=True)
        try:
            flow_run_id = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), timeout=60)
            flow_run_id = flow_run_id.strip()
            run = await client.read_flow_run(flow_run_id)
            assert run.state.is_running()
            await asyncio.sleep(1)  # its first heartbeat is on its way
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                run = await client.read_flow_run(flow_run_id)
                if run.state.is_crashed():
                    break
                await asyncio.sleep(1)
            assert run.state.is_crashed(), f"still {run.state.name} a minute after the kill"
            assert "No heartbeat" in (run.state.message or "")
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            # A short window would crash the session's later (live) runs between their heartbeats.
            await client.delete_automation(automation_id)
