"""A flow run's last word, emitted by its state hooks once it ended: ``webtask.flow-run.finished``,
then ``webtask.flow-run.closed`` (which follows it).

The ``webtask-zombie-runs`` automation marks a run Crashed when, after a heartbeat, no other event
of the run follows within its window. A run's heartbeats come from its process, its state changes
from the server, and the server's triggers take events as they come: a heartbeat that arrives (or
is taken) after the run's final state opens a window that nothing closes, and the automation fires
on a finished run ("Run is already in terminal state").

So the run ends with a window of its own that is closed at once: ``finished`` opens it (the
automation starts a window after it, as after a heartbeat) and ``closed`` closes it — the server
takes ``closed`` only after ``finished`` (it names it in ``follows``). A heartbeat taken later than
these two is older than ``finished``, and the triggers ignore an event older than the window they
hold. Their resource is the flow run (``prefect.flow-run.<id>``), the one the automation watches.

Use it as a hook of every state a run ends in::

    @flow(on_completion=RUN_END_HOOKS, on_failure=[..., *RUN_END_HOOKS], on_crashed=RUN_END_HOOKS,
          on_cancellation=RUN_END_HOOKS)
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prefect.flows import FlowStateHook

__all__ = ["RUN_END_EVENT", "RUN_CLOSED_EVENT", "announce_run_end", "RUN_END_HOOKS"]

logger = logging.getLogger(__name__)

RUN_END_EVENT = "webtask.flow-run.finished"
RUN_CLOSED_EVENT = "webtask.flow-run.closed"


def announce_run_end(flow: Any, flow_run: Any, state: Any) -> None:
    """Prefect state hook: :data:`RUN_END_EVENT` for ``flow_run`` (with the state it ended in), then
    :data:`RUN_CLOSED_EVENT`, which follows it."""
    from prefect.events import emit_event

    resource = {"prefect.resource.id": f"prefect.flow-run.{flow_run.id}"}
    if flow_run.name:
        resource["prefect.resource.name"] = flow_run.name
    related = [{"prefect.resource.id": f"prefect.flow.{flow_run.flow_id}", "prefect.resource.role": "flow",
                "prefect.resource.name": getattr(flow, "name", "") or ""}]
    finished = emit_event(event=RUN_END_EVENT, resource=resource, related=related,
                          payload={"state_type": str(getattr(state.type, "value", state.type)), "state_name": state.name})
    emit_event(event=RUN_CLOSED_EVENT, resource=resource, related=related, follows=finished)


# Typed as Prefect's hook lists are, so a flow decorator takes it as it is (lists are invariant).
RUN_END_HOOKS: list[FlowStateHook[..., Any]] = [announce_run_end]
