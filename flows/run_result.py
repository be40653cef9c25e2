"""What ``run-webtask`` hands back: :class:`WebtaskResult`, also from its Failed states.

A completed task ends the flow run ``Completed`` with the result as its data. An aborted task ends it
``Failed(name="Aborted")``, a task that ran out of steps ``Failed(name="MaxSteps")``, and one whose
listing the read-back found shown otherwise than asked ``Failed(name="Mismatch")``; their data is
a :class:`WebtaskFailed` exception carrying the same result, so

- a direct call (``await run_webtask(...)``) returns the result, or raises ``WebtaskFailed`` whose
  ``.result`` is the result;
- a parent flow using ``return_state=True`` (or ``run_deployment``) reads it with
  ``await webtask_result(state)``, whatever the final state.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from webtask_core.llm.types import Usage
from webtask_core.pricing import Cost
from webtask_core.readback import ReadbackResult
from webtask_core.record import WorkerStatus

__all__ = ["WebtaskResult", "StepTiming", "WebtaskFailed", "webtask_result", "FAILED_STATE_NAMES"]

# The names of the Failed states a finished-but-unsuccessful task ends in.
FAILED_STATE_NAMES: dict[WorkerStatus, str] = {
    WorkerStatus.aborted: "Aborted",
    WorkerStatus.max_steps: "MaxSteps",
    WorkerStatus.mismatch: "Mismatch",
}


class StepTiming(BaseModel):
    """How long one step took, from the worker's view and from the flow's."""

    index: int
    url: str = ""
    ok: bool = True  # every tool call of the step succeeded
    attempts: int = 1  # task runs it took (1 = no retry)
    observe_ms: float = 0.0
    model_ms: float = 0.0
    act_ms: float = 0.0
    step_ms: float = 0.0  # Worker.step, last attempt
    snapshot_ms: float = 0.0  # saving cookies / local storage / URL for a relaunch
    artifact_ms: float = 0.0  # publishing the step's artifact
    task_ms: float = 0.0  # the whole step task as the flow awaited it: Prefect, retries, artifacts
    replayed: bool = False  # decided by a replay script, not the model
    name: str = ""  # what the step did, as its task run is named (``step 3 · fill "Price"``)
    cost_usd: float | None = None  # its model call; None: no price for the model


class WebtaskResult(BaseModel):
    """The outcome of one run of ``run-webtask``; JSON-serialisable."""

    status: WorkerStatus
    output: Any = None  # the JSON the model gave through set_output (validated against output_schema)
    feedback: str = ""
    steps: int = 0
    max_steps: int = 0
    usage: Usage = Field(default_factory=Usage)
    tokens: int = 0  # all tokens of every model call, including calls of retried steps
    step_timings: list[StepTiming] = Field(default_factory=list)
    duration_s: float = 0.0
    final_url: str = ""
    session_key: str | None = None
    flow_run_id: str | None = None
    step_retries: int = 0
    browser_relaunches: int = 0
    model_calls: int = 0  # steps the model decided (retried calls not counted)
    replayed_steps: int = 0  # steps a replay script decided, with no model call
    replay: str = "none"  # with the replay parameter: replayed, repaired, recorded, handed_over, none
    replay_key: str | None = None
    replay_handovers: list[str] = Field(default_factory=list)  # where and why the model took over
    model: str = ""
    cost: Cost | None = None  # every model call, by kind of token (None: no price for the model)
    cost_usd: float | None = None
    saved_by_replay_usd: float | None = None  # replayed steps priced as model calls (an estimate)
    saved_by_replay: str = ""  # what that estimate rests on
    trace: str | None = None  # where the run's Playwright trace was kept (a path or a URL), if it was
    readback: ReadbackResult | None = None  # with the readback parameter: what the listing's page shows

    @property
    def ok(self) -> bool:
        return self.status is WorkerStatus.completed


class WebtaskFailed(Exception):
    """The task ended aborted, out of steps or mismatched; ``.result`` is its :class:`WebtaskResult`."""

    def __init__(self, result: WebtaskResult):
        self.result = result
        super().__init__(f"{FAILED_STATE_NAMES.get(result.status, result.status.value)}: {result.feedback}")

    def __reduce__(self) -> tuple[Any, ...]:  # results are pickled when persisted
        return (type(self), (self.result,))


async def webtask_result(state: Any) -> WebtaskResult:
    """The :class:`WebtaskResult` of a finished ``run-webtask`` state (Completed, Aborted, MaxSteps).

    A run that failed for another reason (bad input, retries exhausted, a crash) raises its error.
    """
    value = await state.aresult(raise_on_failure=False)
    if isinstance(value, WebtaskResult):
        return value
    if isinstance(value, WebtaskFailed):
        return value.result
    if isinstance(value, BaseException):
        raise value
    raise TypeError(f"not a run-webtask state: its result is a {type(value).__name__}")
