"""What a run spent, as the Prefect server keeps it (webtask_flows.costs): records written as it goes
(flow run inputs) and the label written when it ends, read back by ``read_spent`` for the batch's
cost and the crash report — on a real server (the session's test harness)."""

from __future__ import annotations

from typing import Any

from prefect import flow

from webtask_flows.costs import SPENT_INPUT_PREFIX, SPENT_LABEL, read_spent, record_spent


@flow(name="spend-record-test")
def _never_run() -> None:
    """Only its flow runs are created here, never run."""


async def _new_run(client: Any) -> Any:
    return await client.create_flow_run(flow=_never_run)


async def test_what_a_run_spent_is_its_newest_record_until_it_ends_then_its_label():
    from prefect.client.orchestration import get_client
    from prefect.states import Completed, Crashed, Running

    async with get_client() as client:
        running, ended, killed, silent = [await _new_run(client) for _ in range(4)]
        for run in (running, ended, killed):
            await record_spent(str(run.id), 0.01)
            await record_spent(str(run.id), 0.0375)
        await client.set_flow_run_state(running.id, Running(), force=True)
        # A run that ended: its label, the whole run's cost (retried calls too), is what it spent.
        await record_spent(str(ended.id), 0.04, final=True)
        await client.set_flow_run_state(ended.id, Completed(), force=True)
        # A killed run: nothing at its end, so its newest record — a junk record is passed over.
        await client.create_flow_run_input(killed.id, key=f"{SPENT_INPUT_PREFIX}junk", value="not a number")
        await client.set_flow_run_state(killed.id, Crashed(), force=True)
        runs = [await client.read_flow_run(run.id) for run in (running, ended, killed, silent)]

        assert [run.labels.get(SPENT_LABEL) for run in runs] == [None, 0.04, None, None]
        spent = await read_spent(client, runs)
        assert [spent[str(run.id)] for run in runs] == [0.0375, 0.04, 0.0375, None]


async def test_a_run_stopped_by_an_error_or_signal_counts_the_larger_of_its_record_and_label():
    """A run going down labels what it spent as it goes (finish_records): a Crashed or Cancelled run
    with a label counts the larger of it and its newest record (what a run spent only grows); a
    run recorded before records existed has only its label."""
    from prefect.client.orchestration import get_client
    from prefect.states import Cancelled, Crashed

    async with get_client() as client:
        signalled, older = await _new_run(client), await _new_run(client)
        await record_spent(str(signalled.id), 0.02)
        await record_spent(str(signalled.id), 0.03, final=True)  # a call after the last step's record
        await client.set_flow_run_state(signalled.id, Cancelled(), force=True)
        await client.update_flow_run_labels(older.id, {SPENT_LABEL: 0.05})
        await client.set_flow_run_state(older.id, Crashed(), force=True)
        runs = [await client.read_flow_run(run.id) for run in (signalled, older)]

        spent = await read_spent(client, runs)
        assert [spent[str(run.id)] for run in runs] == [0.03, 0.05]
