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
    starts = SubflowStarts(turn_s=60)  # starts strictly in turn here: none waits 60 s to get going
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


async def test_a_start_that_does_not_get_going_gives_up_its_turn():
    """A start stuck before its body (Prefect's client sleeping 2-8 s after a 503) holds the next
    start back for at most ``turn_s``; one that gets going in time holds it until it does."""
    starts = SubflowStarts(turn_s=0.3)
    order: list[str] = []
    release = asyncio.Event()

    async def stuck() -> str:  # never says it started: waits until the test releases it
        order.append("stuck begins")
        await release.wait()
        return "stuck"

    async def quick(name: str, delay: float) -> str:
        order.append(f"{name} begins")
        await asyncio.sleep(delay)
        note_run_started()
        order.append(f"{name} started")
        await release.wait()
        return name

    loop = asyncio.get_running_loop()
    begun = loop.time()
    first = asyncio.ensure_future(starts.run(stuck))
    second = asyncio.ensure_future(starts.run(lambda: quick("second", 0.0)))
    while "second started" not in order:
        await asyncio.sleep(0.02)
    waited = loop.time() - begun
    assert order == ["stuck begins", "second begins", "second started"]
    assert 0.25 <= waited < 5, waited  # the stuck start's turn ended after turn_s, not when it got going

    # A start that notes before turn_s keeps the turn until it does (here 0.1 s of a 5 s turn).
    patient = SubflowStarts(turn_s=5)
    third = asyncio.ensure_future(patient.run(lambda: quick("third", 0.1)))
    fourth = asyncio.ensure_future(patient.run(lambda: quick("fourth", 0.0)))
    while "fourth started" not in order:
        await asyncio.sleep(0.02)
    assert order[3:] == ["third begins", "third started", "fourth begins", "fourth started"]
    release.set()
    assert await asyncio.gather(first, second, third, fourth) == ["stuck", "second", "third", "fourth"]
