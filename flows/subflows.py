"""A subflow call whose identity survives the parent's retries: each runs inside a task of its own.

Prefect tracks a subflow call with a task run in the parent, found again on a retry by the call's
position among the parent's calls of that flow. A batch's calls are not in a fixed order (listings
run side by side, and a retried batch skips the listings its ledger holds), so on a Retry a listing
was handed the completed subflow run — and the result — of whichever listing once held its position.

Called from inside a task of the current flow run, Prefect gives the subflow's tracking task run a
fresh identity instead, so every attempt runs the subflow anew. The task around it is named and
keyed after the item (``listing SKU-7``), so a retry finds the item's own task run, and its result
is not persisted, so a retry runs it again rather than returning what the last attempt returned.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from prefect import Task, task
from prefect.cache_policies import NO_CACHE

__all__ = ["run_in_own_task"]

R = TypeVar("R")


@task(name="subflow-call", cache_policy=NO_CACHE, persist_result=False)
async def _call(call: Callable[[], Awaitable[Any]]) -> Any:
    # ``call`` must not return a Prefect State: a task that returns one takes it as its own state.
    return await call()


def _task_for(key: str, name: str) -> Task[..., Any]:
    configured = _call.with_options(task_run_name=name)
    # The task key is what a retried parent finds the task run by, with the call's position among
    # calls of that key: one key per item makes the position always 0 and the item its identity.
    configured.task_key = f"{_call.task_key}-{key}"
    return configured


async def run_in_own_task(key: str, name: str, call: Callable[[], Awaitable[R]]) -> R:
    """Await ``call()`` (which starts subflows) inside a task run named ``name``, identified by
    ``key`` among the current flow run's items. ``call`` returns a plain value, never a State."""
    return await _task_for(key, name)(call)
