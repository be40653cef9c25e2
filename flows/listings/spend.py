"""What a batch spent, attempt by attempt: everything its runs' model calls cost.

A batch's runs — its shared login and every listing, in its process or fanned out — are child flow runs
of its flow run, and each keeps what it has spent so far on the server (webtask_flows.costs). So the
spend of a batch is read from the server, not from the results its process holds: a listing that
completed in the first attempt of a retried batch, a run whose process was killed mid-listing and a run
that failed with an error all count, in the attempt that ran them (each run's ``labels`` parameter
carries ``batch_attempt``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

from pydantic import BaseModel, Field

from webtask_core.pricing import format_usd
from webtask_flows.costs import read_spent

__all__ = ["AttemptSpend", "BatchSpend", "batch_spend", "read_batch_spend", "child_runs", "fill_costs",
           "ATTEMPT_LABEL"]

ATTEMPT_LABEL = "batch_attempt"  # in a run's ``labels`` parameter: the batch attempt that started it
_PAGE = 200  # the API's page size for flow runs


class AttemptSpend(BaseModel):
    attempt: int
    cost_usd: float = 0.0
    runs: int = 0  # the runs it started: listings and the login


class BatchSpend(BaseModel):
    attempts: list[AttemptSpend] = Field(default_factory=list)
    by_run: dict[str, float] = Field(default_factory=dict)  # flow run id -> what it spent

    @property
    def total_usd(self) -> float:
        return round(sum(attempt.cost_usd for attempt in self.attempts), 6)

    def line(self) -> str:
        """``$0.0479 over 2 attempts (attempt 1: $0.0332, attempt 2: $0.0147)``, or ``$0.0332``."""
        total = format_usd(self.total_usd)
        if len(self.attempts) < 2:
            return total
        each = ", ".join(f"attempt {attempt.attempt}: {format_usd(attempt.cost_usd)}" for attempt in self.attempts)
        return f"{total} over {len(self.attempts)} attempts ({each})"

    def payload(self) -> dict[str, Any]:
        """The money fields of a batch event: the total, each attempt's, and the line alerts show."""
        return {"cost_usd": self.total_usd, "cost_line": self.line(),
                "cost_by_attempt": [{"attempt": a.attempt, "cost_usd": round(a.cost_usd, 6), "runs": a.runs}
                                    for a in self.attempts]}


def _attempt_of(run: Any) -> int:
    labels = (run.parameters or {}).get("labels")
    value = labels.get(ATTEMPT_LABEL) if isinstance(labels, dict) else None
    if isinstance(value, str) and value.isdigit() and int(value) > 0:
        return int(value)
    return 1  # a run started before batches said which attempt they were


def batch_spend(children: Sequence[Any], costs: Mapping[str, float | None], *, attempts: int = 1) -> BatchSpend:
    """The spend of a batch from its child flow runs and what each spent (``costs``, by run id:
    :func:`webtask_flows.costs.read_spent`); ``attempts``: how many the batch has had (an attempt that
    started no run still shows, at $0)."""
    spent: dict[int, AttemptSpend] = {n: AttemptSpend(attempt=n) for n in range(1, max(1, attempts) + 1)}
    by_run: dict[str, float] = {}
    for run in children:
        attempt = spent.setdefault(_attempt_of(run), AttemptSpend(attempt=_attempt_of(run)))
        cost = costs.get(str(run.id))  # None: no priced model call yet (or an unpriced model)
        attempt.cost_usd = round(attempt.cost_usd + (cost or 0.0), 6)
        attempt.runs += 1
        if cost is not None:
            by_run[str(run.id)] = cost
    return BatchSpend(attempts=[spent[n] for n in sorted(spent)], by_run=by_run)


async def child_runs(client: Any, flow_run_id: UUID | str) -> list[Any]:
    """Every child flow run of ``flow_run_id`` (all its attempts), oldest first."""
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    found: list[Any] = []
    while True:
        page = await client.read_flow_runs(
            flow_run_filter=FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[UUID(str(flow_run_id))])),
            limit=_PAGE, offset=len(found))
        found.extend(page)
        if len(page) < _PAGE:
            return sorted(found, key=lambda run: run.created or run.expected_start_time)


async def read_batch_spend(flow_run_id: UUID | str, *, attempts: int = 1) -> BatchSpend:
    """:func:`batch_spend` of the batch ``flow_run_id``, read from the server."""
    from prefect.client.orchestration import get_client

    async with get_client() as client:
        children = await child_runs(client, flow_run_id)
        return batch_spend(children, await read_spent(client, children), attempts=attempts)


def fill_costs(results: Sequence[Any], spend: BatchSpend, *, priced: bool) -> list[Any]:
    """The listings' results with the cost of those whose run did not report one (it failed with an
    error, or crashed) taken from what the run said it spent ($0 when it made no model call); left
    unknown when the model has no price."""
    if not priced:
        return list(results)
    return [result.model_copy(update={"cost_usd": spend.by_run.get(str(result.flow_run_id), 0.0)})
            if result.cost_usd is None and not result.skipped and result.status != "invalid" and result.flow_run_id
            else result for result in results]
