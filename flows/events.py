"""Prefect events for task outcomes: ``webtask.task.completed``, ``.aborted`` and ``.max-steps``.

The primary resource is ``webtask.task.<flow_run_id>``; the flow run is attached as a related
resource (Prefect's events worker adds the flow, deployment and tags from the run context). The
automation in ``deployments/automations/webtask-aborted.yaml`` matches these names.
"""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from webtask_core.errors import ConfigError

__all__ = ["TaskOutcome", "TASK_EVENT_NAMES", "task_event_name", "emit_task_event"]

TaskOutcome = Literal["completed", "aborted", "max_steps"]

TASK_EVENT_NAMES: dict[str, str] = {
    "completed": "webtask.task.completed",
    "aborted": "webtask.task.aborted",
    "max_steps": "webtask.task.max-steps",
}

# Long task descriptions and reasons are cut so an event stays far below Prefect's size limit.
_MAX_TEXT_CHARS = 4000


def task_event_name(status: str) -> str:
    try:
        return TASK_EVENT_NAMES[status]
    except KeyError:
        raise ConfigError("status", f"{status!r} is not one of {sorted(TASK_EVENT_NAMES)}") from None


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= _MAX_TEXT_CHARS:
        return text
    return text[: _MAX_TEXT_CHARS - 1] + "…"


def _current_flow_run() -> tuple[str | None, str | None]:
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return None, None
    return str(context.flow_run.id), context.flow_run.name


def emit_task_event(
    status: TaskOutcome,
    *,
    task: str,
    reason: str | None,
    flow_run_id: UUID | str | None = None,
    session_key: str | None = None,
    steps_used: int | None = None,
    max_steps: int | None = None,
    extra: dict[str, Any] | None = None,
) -> Any:
    """Emit the outcome event of one task; returns the ``prefect.events.Event`` (None when events
    are switched off). ``flow_run_id`` defaults to the current flow run; ``reason`` is the abort
    reason or the feedback; ``extra`` adds payload fields (batch item, listing SKU, ...)."""
    from prefect.events import emit_event

    name = task_event_name(status)
    current_id, current_name = _current_flow_run()
    run_id = str(flow_run_id) if flow_run_id is not None else current_id
    if run_id is None:
        raise ConfigError("flow_run_id", "not given and not called inside a flow run")

    resource = {
        "prefect.resource.id": f"webtask.task.{run_id}",
        "prefect.resource.name": (task.strip().splitlines() or ["webtask task"])[0][:80],
        "webtask.status": status,
    }
    if session_key:
        resource["webtask.session-key"] = session_key
    flow_run: dict[str, str] = {
        "prefect.resource.id": f"prefect.flow-run.{run_id}",
        "prefect.resource.role": "flow-run",
    }
    if current_name and run_id == current_id:
        flow_run["prefect.resource.name"] = current_name

    payload: dict[str, Any] = {
        "status": status,
        "task": _clip(task),
        "reason": _clip(reason),
        "flow_run_id": run_id,
    }
    for key, value in (("session_key", session_key), ("steps_used", steps_used), ("max_steps", max_steps)):
        if value is not None:
            payload[key] = value
    payload.update(extra or {})
    return emit_event(event=name, resource=resource, related=[flow_run], payload=payload)
