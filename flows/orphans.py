"""What a killed process left Running, marked Crashed: the UI shows no work in progress that no
process is doing.

A flow-run process that dies (SIGKILL, out of memory, an evicted container) leaves every run it held
in the state it was in: its task runs (a batch's ``listing SKU`` tasks, a listing's step tasks) and
the flow runs it ran in process (a batch's listings and login), Running for good — Prefect marks only
the flow run whose process it watched Crashed. :func:`crash_orphans` marks the rest Crashed; the
crash report (``report-webtask-crash``) calls it for a Crashed run, and a retried batch before its
new attempt starts (the crash report may not be deployed). Flow runs of a deployment (a fanned-out
listing) run in processes of their own, which may still be alive: they are left alone.
"""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

__all__ = ["crash_orphans"]

logger = logging.getLogger(__name__)
_PAGE = 200


def _unfinished_flow_run_filter(parent: UUID) -> Any:
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterParentFlowRunId,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType

    return FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[parent]),
                         state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[
                             StateType.RUNNING, StateType.PENDING, StateType.PAUSED, StateType.CANCELLING])))


async def _unfinished_task_runs(client: Any, flow_run_ids: list[UUID]) -> list[Any]:
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterId,
        TaskRunFilter,
        TaskRunFilterState,
        TaskRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType

    found: list[Any] = []
    while True:
        page = await client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=flow_run_ids)),
            task_run_filter=TaskRunFilter(state=TaskRunFilterState(type=TaskRunFilterStateType(any_=[
                StateType.RUNNING, StateType.PENDING, StateType.SCHEDULED]))),
            limit=_PAGE, offset=len(found))
        found.extend(page)
        if len(page) < _PAGE:
            return found


async def crash_orphans(client: Any, flow_run_id: UUID | str, *, reason: str) -> list[str]:
    """Mark Crashed (with ``reason``) the unfinished task runs of ``flow_run_id`` and the unfinished
    in-process child flow runs and their task runs; returns the names of the runs it marked."""
    from prefect.states import Crashed

    parent = UUID(str(flow_run_id))
    children = [child for child in await client.read_flow_runs(flow_run_filter=_unfinished_flow_run_filter(parent))
                if child.deployment_id is None]  # a deployment's run has a process of its own
    marked: list[str] = []
    for task_run in await _unfinished_task_runs(client, [parent, *(child.id for child in children)]):
        await client.set_task_run_state(task_run.id, Crashed(message=reason), force=True)
        marked.append(task_run.name)
    for child in children:
        await client.set_flow_run_state(child.id, Crashed(message=reason), force=True)
        marked.append(child.name)
    if marked:
        logger.info("Marked %d run(s) left unfinished by a dead process Crashed: %s", len(marked), ", ".join(marked))
    return marked
