"""The listing batch's own events: ``webtask.batch.completed`` / ``webtask.batch.failed``, with the
counts and the SKUs that did not complete, and ``webtask.batch.crashed`` from the crash report
(task events come from webtask_flows.events)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from prefect.events import emit_event

from webtask_core.errors import ConfigError
from webtask_flows.events import clip_text, cost_payload, current_flow_run, one_line
from webtask_flows.listings.models import ListingResult

if TYPE_CHECKING:
    from webtask_flows.listings.spend import BatchSpend

__all__ = ["BATCH_EVENT_NAMES", "emit_batch_event", "emit_batch_crashed"]

BATCH_EVENT_NAMES: dict[str, str] = {"completed": "webtask.batch.completed", "failed": "webtask.batch.failed",
                                     "crashed": "webtask.batch.crashed"}
_MAX_LISTED_FAILURES = 50


def emit_batch_event(
    results: Sequence[ListingResult], *, source: str, message: str, reason: str | None = None,
    flow_run_id: UUID | str | None = None, flow_run_name: str | None = None, spend: BatchSpend | None = None,
) -> Any:
    """``webtask.batch.completed`` when every listing completed, else ``webtask.batch.failed`` with the
    failed SKUs and why. ``reason``: the batch itself failed before or around its listings.
    ``flow_run_id`` defaults to the current flow run (the batch's). ``spend``: what all of the batch's
    attempts spent (else the cost of the listings this attempt ran)."""
    current_id, current_name = current_flow_run()
    run_id = str(flow_run_id) if flow_run_id is not None else current_id
    if run_id is None:
        raise ConfigError("flow_run_id", "not given and not called inside the batch's flow run")
    run_name = flow_run_name or (current_name if run_id == current_id else None)
    total = sum(1 for result in results if result.status != "invalid")
    failed = [result for result in results if result.failed or result.status == "invalid"]
    status = "failed" if failed or reason else "completed"
    counts = Counter("already done" if result.skipped else result.status for result in results)
    flow_run = {"prefect.resource.id": f"prefect.flow-run.{run_id}", "prefect.resource.role": "flow-run"}
    if run_name:
        flow_run["prefect.resource.name"] = run_name
    payload: dict[str, Any] = {
        "status": status,
        "source": source,
        "message": clip_text(message),
        "reason": clip_text(reason),
        "reason_line": one_line(reason, 120),  # for a subject: one line
        "source_line": one_line(source, 80),
        "total": total,
        "counts": dict(counts),
        "failed_count": len(failed),
        "failed_skus": [result.sku for result in failed],
        "failed": [{"sku": r.sku, "status": r.status, "reason": clip_text(r.feedback, 300), "flow_run_id": r.flow_run_id}
                   for r in failed[:_MAX_LISTED_FAILURES]],
        "flow_run_id": run_id,
        **_costs(results, spend),
    }
    resource = {
        "prefect.resource.id": f"webtask.batch.{run_id}",
        "prefect.resource.name": one_line(f"batch {run_name or run_id} ({source})", 200) or "batch",
        "webtask.status": status,
    }
    return emit_event(event=BATCH_EVENT_NAMES[status], resource=resource, related=[flow_run], payload=payload)


def _costs(results: Sequence[ListingResult], spend: BatchSpend | None) -> dict[str, Any]:
    """The batch's cost — every attempt's (``spend``), else the listings this attempt ran — and what
    replay saved in this attempt (None where unknown)."""
    ran = [result for result in results if not result.skipped and result.status != "invalid"]
    costs = [result.cost_usd for result in ran if result.cost_usd is not None]
    saved = [result.saved_by_replay_usd for result in ran if result.saved_by_replay_usd is not None]
    payload = cost_payload(sum(costs) if costs else None, sum(saved) if saved else None)
    if spend is not None:
        payload.update(spend.payload())
    return payload


def emit_batch_crashed(
    *, flow_run_id: UUID | str, flow_run_name: str | None, source: str, reason: str, total: int | None,
    completed: Sequence[str], in_flight: Sequence[dict[str, Any]], not_started: Sequence[str], note: str = "",
    spend: BatchSpend | None = None,
) -> Any:
    """``webtask.batch.crashed`` for a batch marked Crashed: the listings that had not completed —
    ``in_flight`` (SKU, flow run, its state) and ``not_started`` — and those that had (``completed``).
    ``total`` is None when the manifest could not be read again (``note`` says why). ``spend``: what
    its attempts spent, the one that crashed included."""
    not_completed = [item["sku"] for item in in_flight] + list(not_started)
    run_id = str(flow_run_id)
    flow_run = {"prefect.resource.id": f"prefect.flow-run.{run_id}", "prefect.resource.role": "flow-run"}
    if flow_run_name:
        flow_run["prefect.resource.name"] = flow_run_name
    payload: dict[str, Any] = {
        "status": "crashed",
        "source": source,
        "source_line": one_line(source, 80),
        "reason": clip_text(reason),
        "reason_line": one_line(reason, 120),
        "total": total,
        "completed_count": len(completed),
        "not_completed_count": len(not_completed),
        "not_completed_skus": not_completed[:_MAX_LISTED_FAILURES],
        "in_flight": list(in_flight)[:_MAX_LISTED_FAILURES],
        "not_started_skus": list(not_started)[:_MAX_LISTED_FAILURES],
        "note": note,
        "flow_run_id": run_id,
        **(spend.payload() if spend is not None else {}),
    }
    resource = {
        "prefect.resource.id": f"webtask.batch.{run_id}",
        "prefect.resource.name": one_line(f"batch {flow_run_name or run_id} ({source})", 200) or "batch",
        "webtask.status": "crashed",
    }
    return emit_event(event=BATCH_EVENT_NAMES["crashed"], resource=resource, related=[flow_run], payload=payload)
