"""Prefect events for what tasks and batches end as; the automations in ``deployments/automations``
alert on them.

A task (one ``run-webtask`` run) ends with exactly one of:

- ``webtask.task.completed`` / ``webtask.task.aborted`` / ``webtask.task.max-steps``: the agent's outcome;
- ``webtask.listing.mismatch``: the task completed, and reading its listing back found the site
  showing it otherwise (each field expected vs shown, the listing's URL, a picture: webtask_flows.readback_flow);
- ``webtask.task.failed``: the run itself failed — bad input, a missing S3 object or Secret, the model
  API down beyond the retries — so the agent never reached an outcome;
- ``webtask.task.error`` (emitted by a parent, e.g. a batch): a run that ended without saying so
  itself — it crashed or was cancelled, never started, or completed with the wrong result;
- ``webtask.task.crashed`` (emitted by the crash report, ``report-webtask-crash``): the run was
  marked Crashed — its process died (killed, out of memory, an evicted container), so it said nothing.

(A listing batch adds ``webtask.batch.completed|failed``: webtask_flows.listings.events.)

A run with ``replay`` that saved a script emits ``webtask.script.recorded`` (there was none) or
``webtask.script.repaired`` (the site changed and the model found the way: worth a look).

The primary resource is ``webtask.task.<flow run id>``, named
after what a person recognises (``listing NIGHT-003``, the task's first line, the manifest). Related
resources name the flow run, and — for a batch's listing — the listing (``webtask.listing.<SKU>``,
role ``listing``) and the batch's flow run (role ``batch``), so an automation can match or show them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal
from uuid import UUID

from webtask_core.errors import ConfigError

__all__ = [
    "TaskOutcome",
    "TASK_EVENT_NAMES",
    "task_event_name",
    "task_display_name",
    "emit_task_event",
    "clip_text",
    "current_flow_run",
    "emit_script_event",
    "one_line",
    "cost_payload",
    "emit_handover_event",
]

TaskOutcome = Literal["completed", "aborted", "max_steps", "mismatch", "failed", "error", "crashed", "waiting"]

TASK_EVENT_NAMES: dict[str, str] = {
    "completed": "webtask.task.completed",
    "aborted": "webtask.task.aborted",
    "max_steps": "webtask.task.max-steps",
    "mismatch": "webtask.listing.mismatch",  # the read-back: the site shows the listing otherwise
    "failed": "webtask.task.failed",
    "error": "webtask.task.error",
    "crashed": "webtask.task.crashed",
    "waiting": "webtask.task.waiting",  # not an outcome: the run waits for a person (webtask_flows.human)
}

# Long task descriptions and reasons are cut so an event stays far below Prefect's size limit.
_MAX_TEXT_CHARS = 4000
_MAX_NAME_CHARS = 80


def task_event_name(status: str) -> str:
    try:
        return TASK_EVENT_NAMES[status]
    except KeyError:
        raise ConfigError("status", f"{status!r} is not one of {sorted(TASK_EVENT_NAMES)}") from None


def clip_text(text: str | None, limit: int = _MAX_TEXT_CHARS) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def one_line(text: str | None, limit: int = _MAX_NAME_CHARS) -> str:
    """A text fit for an alert's subject: one line (a subject with a newline breaks mail headers and
    chat previews), cut to ``limit``."""
    return clip_text(" ".join((text or "").split()), limit) or ""


def cost_payload(cost_usd: float | None, saved_usd: float | None, *, model: str = "") -> dict[str, Any]:
    """The money fields of an event's payload (omitted when unknown)."""
    payload: dict[str, Any] = {}
    if model:
        payload["model"] = model
    if cost_usd is not None:
        payload["cost_usd"] = round(cost_usd, 6)
    if saved_usd is not None:
        payload["saved_by_replay_usd"] = round(saved_usd, 6)
    return payload


def current_flow_run() -> tuple[str | None, str | None]:
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return None, None
    return str(context.flow_run.id), context.flow_run.name


def task_display_name(task: str, labels: Mapping[str, str] | None) -> str:
    """What a person calls this task in an alert: ``listing SKU``, a given name, else the task's first line."""
    labels = labels or {}
    if labels.get("sku"):
        return one_line(f"listing {labels['sku']}")
    if labels.get("name"):
        return one_line(str(labels["name"])) or "webtask task"
    return one_line((task.strip().splitlines() or ["webtask task"])[0]) or "webtask task"


def _related(run_id: str, run_name: str | None, labels: Mapping[str, str]) -> list[dict[str, str]]:
    flow_run = {"prefect.resource.id": f"prefect.flow-run.{run_id}", "prefect.resource.role": "flow-run"}
    if run_name:
        flow_run["prefect.resource.name"] = run_name
    related = [flow_run]
    if labels.get("sku"):
        related.append({"prefect.resource.id": f"webtask.listing.{labels['sku']}",
                        "prefect.resource.role": "listing", "prefect.resource.name": labels["sku"]})
    if labels.get("batch_flow_run_id"):
        batch = {"prefect.resource.id": f"prefect.flow-run.{labels['batch_flow_run_id']}",
                 "prefect.resource.role": "batch"}
        if labels.get("batch_name"):
            batch["prefect.resource.name"] = labels["batch_name"]
        related.append(batch)
    return related


def emit_task_event(
    status: TaskOutcome,
    *,
    task: str,
    reason: str | None,
    flow_run_id: UUID | str | None = None,
    flow_run_name: str | None = None,
    session_key: str | None = None,
    steps_used: int | None = None,
    max_steps: int | None = None,
    labels: Mapping[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> Any:
    """Emit the outcome event of one task; returns the ``prefect.events.Event`` (None when events
    are switched off). ``flow_run_id`` defaults to the current flow run; ``reason`` is the abort
    reason, the error or the feedback; ``labels`` are the run's ``labels`` parameter (``sku``,
    ``batch_flow_run_id``, ``batch_name``, ``name``; every label is also in the payload); ``extra``
    adds payload fields."""
    from prefect.events import emit_event

    name = task_event_name(status)
    labels = {key: str(value) for key, value in (labels or {}).items() if value is not None}
    if "batch_name" in labels:  # alert subjects show it: one line
        labels["batch_name"] = one_line(labels["batch_name"], 200)
    current_id, current_name = current_flow_run()
    run_id = str(flow_run_id) if flow_run_id is not None else current_id
    if run_id is None:
        raise ConfigError("flow_run_id", "not given and not called inside a flow run")
    run_name = flow_run_name or (current_name if run_id == current_id else None)

    resource = {
        "prefect.resource.id": f"webtask.task.{run_id}",
        "prefect.resource.name": task_display_name(task, labels),
        "webtask.status": status,
        # Which batch the task was part of ("none": run on its own), so an alert can leave a batch's
        # listings to the batch's own alert.
        "webtask.batch": labels.get("batch_flow_run_id") or "none",
    }
    if session_key:
        resource["webtask.session-key"] = session_key
    payload: dict[str, Any] = {
        **labels,
        "status": status,
        "task": clip_text(task),
        "reason": clip_text(reason),
        "flow_run_id": run_id,
    }
    for key, value in (("session_key", session_key), ("steps_used", steps_used), ("max_steps", max_steps)):
        if value is not None:
            payload[key] = value
    payload.update(extra or {})
    return emit_event(event=name, resource=resource, related=_related(run_id, run_name, labels), payload=payload)


def emit_handover_event(
    *, key: str, revision: int, handovers: list[dict[str, Any]], outcome: str, task: str,
    labels: Mapping[str, str] | None = None,
) -> Any:
    """``webtask.script.handover`` for the current flow run: replay of ``key`` (at ``revision``)
    handed over to the model (``handovers``: each ``step``, ``kind`` and ``reason``), and the run then
    ended ``outcome`` (completed, aborted, max_steps). The resource carries ``webtask.outcome`` so an
    automation can alert only on handovers that ended without a listing (a site change the model
    declined)."""
    from prefect.events import emit_event

    labels = {key_: str(value) for key_, value in (labels or {}).items() if value is not None}
    run_id, run_name = current_flow_run()
    if run_id is None:
        raise ConfigError("flow_run_id", "not called inside a flow run")
    resource = {"prefect.resource.id": f"webtask.script.{key}", "prefect.resource.name": f"replay script {key}",
                "webtask.outcome": outcome}
    first = handovers[0] if handovers else {}
    payload = {**labels, "key": key, "revision": revision, "outcome": outcome, "flow_run_id": run_id,
               "task": clip_text(task, 300), "step": first.get("step"), "kind": first.get("kind"),
               "reason": clip_text(str(first.get("reason", "")), 500),
               "handovers": [{**handover, "reason": clip_text(str(handover.get("reason", "")), 500)}
                             for handover in handovers[:5]]}
    return emit_event(event="webtask.script.handover", resource=resource,
                      related=_related(run_id, run_name, labels), payload=payload)


def emit_script_event(
    outcome: str, *, key: str, revision: int, steps: int, handovers: list[str], task: str,
    labels: Mapping[str, str] | None = None,
) -> Any:
    """``webtask.script.recorded|repaired`` for the current flow run: the script ``key`` saved at
    ``revision``; ``handovers`` say where the model took over (what changed on the site)."""
    from prefect.events import emit_event

    labels = {key_: str(value) for key_, value in (labels or {}).items() if value is not None}
    run_id, run_name = current_flow_run()
    if run_id is None:
        raise ConfigError("flow_run_id", "not called inside a flow run")
    resource = {"prefect.resource.id": f"webtask.script.{key}", "prefect.resource.name": f"replay script {key}"}
    payload = {**labels, "key": key, "revision": revision, "steps": steps, "flow_run_id": run_id,
               "task": clip_text(task, 300), "handovers": [clip_text(reason, 500) for reason in handovers[:5]]}
    return emit_event(event=f"webtask.script.{outcome}", resource=resource,
                      related=_related(run_id, run_name, labels), payload=payload)
