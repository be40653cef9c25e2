"""``report-webtask-crash``: what a Crashed batch (or task) had not finished, as events to alert on.

A run marked Crashed — by Prefect (its worker saw the process die) or by the ``webtask-zombie-runs``
automation (its heartbeats stopped) — ran none of its own code at the end: a SIGKILLed process
runs no hook. So the crash is reported from outside, by this flow, which the ``crash-report``
deployment in ``prefect.yaml`` runs on the work pool whenever a ``batch-listing-upload`` or
``run-webtask`` flow run turns Crashed (a deployment trigger on ``prefect.flow-run.Crashed``):

- a batch: ``webtask.batch.crashed`` naming the listings that had not completed — those in flight
  (their run, and the state it was left in) and those that had not started — with the ones that had;
  and ``webtask.task.crashed`` for each listing in flight. What completed is read the way a retry
  reads it: the manifest again and the batch's ledger (plus the listing runs that completed);
- a ``run-webtask`` run of its own: ``webtask.task.crashed``. A batch's listing is left to its batch:
  the batch reports it (crashed with it) or gets its Crashed state back and reports it as an error.

Either way the runs the dead process left unfinished — task runs, a batch's in-process listings — are
marked Crashed (webtask_flows.orphans), and the events say what the run (or every attempt of the
batch) spent: each run keeps it on its flow run as it goes (webtask_flows.costs).

Alerts: ``deployments/automations/webtask-batch-crashed.yaml`` and ``webtask-crashed.yaml``.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from prefect import flow, get_run_logger

from webtask_core.errors import ConfigError
from webtask_flows.costs import read_spent
from webtask_flows.events import cost_payload, emit_task_event
from webtask_flows.listings.events import emit_batch_crashed
from webtask_flows.listings.ledger import LedgerRecordError, open_ledger
from webtask_flows.listings.manifest import load_batch_input
from webtask_flows.listings.spend import batch_spend, child_runs
from webtask_flows.orphans import crash_orphans
from webtask_flows.run_end import RUN_END_HOOKS

__all__ = ["report_webtask_crash", "BATCH_FLOW", "TASK_FLOW"]

BATCH_FLOW = "batch-listing-upload"
TASK_FLOW = "run-webtask"
_LOGIN_RUN = "login"


def _flow_run_uuid(flow_run_id: str) -> UUID:
    """The id from ``prefect.flow-run.<id>`` (the triggering event's resource) or ``<id>``."""
    raw = flow_run_id.strip().removeprefix("prefect.flow-run.")
    try:
        return UUID(raw)
    except ValueError:
        raise ConfigError("flow_run_id", f"{flow_run_id!r} is not a flow run id") from None


@flow(name="report-webtask-crash", on_completion=RUN_END_HOOKS, on_failure=RUN_END_HOOKS,
      on_crashed=RUN_END_HOOKS, on_cancellation=RUN_END_HOOKS)
async def report_webtask_crash(flow_run_id: str) -> dict[str, Any]:
    """Emit the crash events of a Crashed batch or run-webtask run (``flow_run_id``: its id, or the
    ``prefect.flow-run.<id>`` resource of its Crashed event). Returns what it reported."""
    from prefect.client.orchestration import get_client

    logger = get_run_logger()
    run_id = _flow_run_uuid(flow_run_id)
    async with get_client() as client:
        run = await client.read_flow_run(run_id)
        flow_name = (await client.read_flow(run.flow_id)).name
        if run.state is None or not run.state.is_crashed():
            logger.info("%s %r is %s, not Crashed: nothing to report", flow_name, run.name,
                        run.state.name if run.state else "without a state")
            return {"reported": False, "state": run.state.name if run.state else None}
        if flow_name == BATCH_FLOW:
            return await _report_batch(client, run)
        if flow_name == TASK_FLOW:
            await crash_orphans(client, run.id, reason=_orphan_reason(run))
            return _report_task(run, (await read_spent(client, [run]))[str(run.id)])
    logger.info("Not a webtask flow (%s): nothing to report", flow_name)
    return {"reported": False, "flow": flow_name}


def _orphan_reason(run: Any) -> str:
    return f"left unfinished when the process of flow run {run.name!r} died ({_crash_reason(run)})"


def _report_task(run: Any, spent: float | None) -> dict[str, Any]:
    logger = get_run_logger()
    parameters = run.parameters or {}
    found = parameters.get("labels")
    labels: dict[str, Any] = found if isinstance(found, dict) else {}
    if labels.get("batch_flow_run_id"):
        logger.info("Run %r is part of batch %s, which reports it", run.name, labels["batch_flow_run_id"])
        return {"reported": False, "batch_flow_run_id": labels["batch_flow_run_id"]}
    emit_task_event("crashed", task=str(parameters.get("task") or ""), reason=_crash_reason(run),
                    flow_run_id=run.id, flow_run_name=run.name, session_key=parameters.get("session_key"),
                    max_steps=parameters.get("max_steps"), labels=labels,
                    extra=cost_payload(spent, None, model=str(parameters.get("model") or "")))
    logger.info("Reported the crash of run-webtask run %r", run.name)
    return {"reported": True, "flow_run_id": str(run.id)}


def _crash_reason(run: Any) -> str:
    return run.state.message or "the run was marked Crashed"


async def _report_batch(client: Any, run: Any) -> dict[str, Any]:
    logger = get_run_logger()
    parameters = run.parameters or {}
    children = await child_runs(client, run.id)  # oldest first, every attempt's
    spent = await read_spent(client, children)
    # The listing runs, newest per SKU (a retried batch starts them afresh; they are named by SKU).
    runs: dict[str, Any] = {}
    for child in children:
        if child.name != _LOGIN_RUN:
            runs[child.name] = child
    ran_ok = {sku for sku, child in runs.items() if child.state is not None and child.state.is_completed()}

    skus, done, note = await _listings_and_ledger(parameters)
    if skus is None:
        skus, done = sorted(runs), set()
    completed = [sku for sku in skus if sku in done or sku in ran_ok]
    in_flight, not_started = [], []
    for sku in skus:
        if sku in completed:
            continue
        child = runs.get(sku)
        if child is None:
            not_started.append(sku)
            continue
        state = child.state.name if child.state is not None else "no state"
        in_flight.append({"sku": sku, "flow_run_id": str(child.id), "state": state})
        child_parameters = child.parameters or {}
        emit_task_event(
            "crashed", task=str(child_parameters.get("task") or f"listing {sku}"),
            reason=f"its batch {run.name!r} crashed ({_crash_reason(run)}); this listing's run was left {state}",
            flow_run_id=child.id, flow_run_name=child.name, max_steps=child_parameters.get("max_steps"),
            labels=child_parameters.get("labels") if isinstance(child_parameters.get("labels"), dict)
            else {"sku": sku, "batch_flow_run_id": str(run.id), "batch_name": run.name},
            extra=cost_payload(spent[str(child.id)], None, model=str(child_parameters.get("model") or "")),
        )
    source = str(parameters.get("manifest") or f"{len(parameters.get('listings') or [])} listing record(s)")
    emit_batch_crashed(flow_run_id=run.id, flow_run_name=run.name, source=source, reason=_crash_reason(run),
                       total=len(skus) if note == "" else None, completed=completed, in_flight=in_flight,
                       not_started=not_started, note=note, spend=batch_spend(children, spent, attempts=run.run_count))
    await crash_orphans(client, run.id, reason=_orphan_reason(run))  # after naming the state each was left in
    logger.info("Reported the crash of batch %r: %d listing(s) had not completed (%d in flight, %d not started)",
                run.name, len(in_flight) + len(not_started), len(in_flight), len(not_started))
    return {"reported": True, "completed": completed, "in_flight": [item["sku"] for item in in_flight],
            "not_started": not_started}


async def _listings_and_ledger(parameters: dict[str, Any]) -> tuple[list[str] | None, set[str], str]:
    """The batch's SKUs (its manifest read again) and those its ledger holds; (None, ..., why) when
    the manifest cannot be read here (then only the listing runs that started can be named)."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        batch = await load_batch_input(parameters.get("manifest"), parameters.get("listings"),
                                       skip_invalid=True, check_photos=False)
        book = await open_ledger(parameters.get("ledger"), site_url=str(parameters.get("site_url") or ""),
                                 username=str(parameters.get("username") or ""))
    except (ConfigError, OSError, ValueError, BotoCoreError, ClientError) as exc:
        get_run_logger().warning("The batch's manifest or ledger cannot be read here: %s", exc)
        return None, set(), f"the manifest could not be read again ({exc}); listings that never started are not named"
    done = set()
    for listing in batch.listings:
        try:
            if await book.lookup(listing) is not None:
                done.add(listing.sku)
        except LedgerRecordError:
            continue
    return [listing.sku for listing in batch.listings], done, ""
