"""SubflowStarts: in-process subflow runs start one at a time, then run side by side."""

from __future__ import annotations

import asyncio
from typing import Any

from prefect import flow

from webtask_flows.run_signals import SubflowStarts, note_run_started

events: list[str] = []
both_running = asyncio.Event()


@flow(name="starts-child", validate_parameters=True)
async def child(name: str, wait_for_the_other: bool = False) -> str:
    note_run_started()
    events.append(f"{name} started")
    if wait_for_the_other:  # finishes only once the other run's body runs too: they overlap
        await asyncio.wait_for(both_running.wait(), timeout=60)
    else:
        both_running.set()
    events.append(f"{name} done")
    return name


@flow(name="starts-parent")
async def parent() -> list[Any]:
    starts = SubflowStarts()
    events.clear()
    both_running.clear()

    async def start(name: str, **options: Any) -> Any:
        events.append(f"{name} asked")
        return await starts.run(lambda: child.with_options(flow_run_name=name)(name, return_state=True, **options))

    return await asyncio.gather(
        start("A", wait_for_the_other=True),
        start("B"),
        start("C", wait_for_the_other="not a bool"),  # fails validation: its body never runs
        start("D"),
    )


async def test_runs_start_in_turn_and_run_side_by_side():
    states = await parent()
    assert [state.is_completed() for state in states] == [True, True, False, True]
    assert events[:4] == ["A asked", "B asked", "C asked", "D asked"]
    started = [event for event in events if event.endswith("started")]
    assert started == ["A started", "B started", "D started"]  # in turn; C failing did not block D
    assert events.index("A done") > events.index("B started")  # A was still running when B started
