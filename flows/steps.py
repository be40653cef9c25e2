"""One agent step as a retryable Prefect task.

The task wraps :meth:`webtask_core.task_run.TaskRun.step` — the same step ``Agent.do`` loops over. It
is awaited in the flow's event loop (the browser lives there; never ``.submit()`` it), uses
``NO_CACHE``, and retries with exponential backoff and jitter on
:class:`~webtask_core.errors.TransientError` only (model overloaded / rate limited, network, browser
crashed). What the model got wrong never reaches Prefect: the worker turns it into a tool result.

A retried step is the TaskRun's retry: it reopens what failed (a dead tab from the snapshot of the
last good step; a page that failed gets a fresh tab, then a blank one) and observes the page afresh;
a step that failed before committing left the task untouched, so nothing is recorded twice, and one
that committed before the artifact failed is not asked of the model again.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from prefect import Task, task
from prefect.cache_policies import NO_CACHE
from prefect.tasks import exponential_backoff

from webtask_core.errors import ConfigError, TransientError
from webtask_core.record import Step
from webtask_core.secrets import SecretValues
from webtask_flows.artifacts import publish_step_artifact
from webtask_flows.pictures import publish_picture
from webtask_flows.replay_notes import ReplayWatch
from webtask_flows.step_names import rename_current_task_run, step_run_name

if TYPE_CHECKING:
    from webtask_core.browser.tracing import TraceRecorder
    from webtask_core.task_run import TaskRun
    from webtask_flows.costs import RunPricing
    from webtask_flows.screenshots import ScreenshotStore

__all__ = [
    "StepRun",
    "run_step",
    "step_task",
    "is_transient_failure",
    "STEP_RETRIES",
    "STEP_RETRY_DELAY_S",
    "STEP_RETRY_JITTER",
]

STEP_RETRIES = 3  # after the model SDK's own retries
STEP_RETRY_DELAY_S = 2.0  # first delay; then 4, 8 s — each with jitter
STEP_RETRY_JITTER = 0.5
RECORDS_WAIT_S = 30.0  # how long a failing run still waits for its steps' artifacts to be written

logger = logging.getLogger(__name__)


class StepRun:
    """Everything a step task needs, handed to it as one parameter: the task run, and what the
    flow records around it.

    A plain class on purpose: Prefect walks task parameters looking for futures and states, and does
    not descend into arbitrary objects (the browser, the task context).
    """

    def __init__(
        self,
        task_run: TaskRun,
        *,
        secrets: SecretValues | None = None,
        artifacts: bool = True,
        screenshots: ScreenshotStore | None = None,
        pricing: RunPricing | None = None,
        tracer: TraceRecorder | None = None,
        flow_run_id: str | None = None,
    ):
        self.task_run = task_run
        self.secrets = secrets or SecretValues()  # artifacts are scrubbed with the worker's own secrets
        self.artifacts = artifacts
        self.screenshots = screenshots  # where step pictures get a URL (None: inline in the markdown)
        self.attempts: dict[int, int] = {}  # step index -> task attempts (1 = no retry)
        self.artifact_ms: dict[int, float] = {}  # step index -> publishing its artifact (last attempt)
        self.pricing = pricing  # what each step's model call cost (None: not priced)
        self.tracer = tracer  # the run's Playwright trace: each step's actions in a group of its own
        self.flow_run_id = flow_run_id  # where what the run spent so far is kept (webtask_flows.costs.record_spent)
        self.names: dict[int, str] = {}  # step index -> what it did, as its task run is named
        # Replay's handovers and checks, for the step artifacts (only with a replay).
        self.replay_watch = ReplayWatch(task_run) if task_run.replay is not None else None
        # The last step's artifact and spend record, still being written while the next step runs.
        self._publishing: asyncio.Task[None] | None = None
        self.spent_written: float | None = None  # what this run last recorded it spent so far
        self.spent_labelled: float | None = None  # the flow run's spend label as this run last wrote it

    def publish_after_step(self, index: int, publish: Awaitable[None]) -> None:
        """Write a step's records (artifact, spend) while the run goes on: from the step's task run's
        context (its artifacts are its own), after the step before's (they stay in order). On a busy
        Prefect server these writes took 0.1-2.7 s a step, all of it the next step's wait."""
        previous = self._publishing

        async def after_previous() -> None:
            try:
                if previous is not None:
                    await previous
            finally:
                started = time.perf_counter()
                await publish
                self.artifact_ms[index] = round((time.perf_counter() - started) * 1000.0, 2)

        self._publishing = asyncio.ensure_future(after_previous())

    async def published(self) -> None:
        """Wait until every step's records are written; a failure to write one is raised here (the
        run fails, as it did when the step task wrote them itself)."""
        publishing, self._publishing = self._publishing, None
        if publishing is not None:
            await publishing

    def raise_failed_records(self) -> None:
        """Raise the error of an earlier step's records that could not be written, when it is known:
        the run stops before its next step acts rather than at its end."""
        publishing = self._publishing
        if publishing is not None and publishing.done() and not publishing.cancelled() and publishing.exception():
            self._publishing = None
            raise publishing.exception()  # type: ignore[misc]

    async def record_spent(self, cost_usd: float | None = None, *, final: bool = False) -> None:
        """Write what the run spent so far when it changed: ``cost_usd``, else every model call of the
        task so far (retried and resumed ones too). After each step that changed it (a process killed
        outright leaves nothing off what a retried batch and the crash report add up; a replayed step
        spends nothing and writes nothing) and, ``final``, as the flow run's label when the run ends."""
        if self.flow_run_id is None:
            return
        if cost_usd is None:
            ctx = self.task_run.ctx
            spent = self.pricing.cost(ctx.usage + ctx.discarded_usage) if self.pricing is not None else None
            if spent is None:
                return
            cost_usd = spent.total_usd
        value = round(cost_usd, 6)
        if value == (self.spent_labelled if final else self.spent_written):
            return
        from webtask_flows.costs import record_spent

        await record_spent(self.flow_run_id, value, final=final)
        if final:
            self.spent_labelled = value
        else:
            self.spent_written = value

    async def finish_records(self, error_type: type[BaseException] | None = None, *_: object) -> bool:
        """Leaving the run's stack (``AsyncExitStack.push_async_exit``): on an error, the records still
        being written are written all the same (within ``RECORDS_WAIT_S``), and then what the run spent
        so far; one that cannot be is logged, and the run's own error stands. A run ending without an
        error wrote its records already (:meth:`published`) and writes its whole cost after this."""
        publishing, self._publishing = self._publishing, None
        if publishing is not None:
            try:
                await asyncio.wait_for(asyncio.shield(publishing), timeout=RECORDS_WAIT_S)
            except TimeoutError:
                publishing.cancel()
                logger.warning("A step's artifact was still being written %.0f s after the run failed: given up",
                               RECORDS_WAIT_S)
            except Exception as error:  # the run already failed: its own error is what it reports
                logger.warning("A step's artifact could not be written: %s: %s", type(error).__name__,
                               self.secrets.scrub(str(error)))
        if error_type is not None:
            await self.record_spent(final=True)
        return False

    def __repr__(self) -> str:  # shown by Prefect in logs instead of a huge object dump
        return f"StepRun({self.task_run!r})"


def is_transient_failure(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect's ``retry_condition_fn``: retry infrastructure failures, nothing else.

    Must stay a plain function: Prefect's engine silently never retries when the condition is a
    ``functools.partial`` or a bound method (it checks ``inspect.isfunction``).
    """
    error = _exception_of(state)
    return isinstance(error, TransientError)


def _exception_of(state: Any) -> BaseException | None:
    data = getattr(state, "data", None)
    if isinstance(data, BaseException):
        return data
    result = getattr(data, "result", None)  # a ResultRecord holding the exception
    return result if isinstance(result, BaseException) else None


@task(
    name="webtask-step",
    task_run_name="step {index}",
    cache_policy=NO_CACHE,
    persist_result=False,
    retries=STEP_RETRIES,
    retry_delay_seconds=exponential_backoff(backoff_factor=STEP_RETRY_DELAY_S),
    retry_jitter_factor=STEP_RETRY_JITTER,
    retry_condition_fn=is_transient_failure,
)
async def run_step(run: StepRun, index: int) -> Step:
    """Step ``index`` of the task (reopen what failed, observe, ask the model, act), then its artifact;
    the task run is renamed after what the step did."""
    run.attempts[index] = run.attempts.get(index, 0) + 1
    run.raise_failed_records()
    if run.replay_watch is not None:
        run.replay_watch.before()
    runtime = run.task_run.runtime
    if run.tracer is not None and runtime.has_tab:
        await run.tracer.group(runtime.current_tab(), f"step {index}")
    try:
        step = await run.task_run.step(index)
    finally:
        if run.tracer is not None and runtime.has_tab:
            await run.tracer.group_end(runtime.current_tab())
    run.names[index] = run.secrets.scrub(step_run_name(step, run.task_run.ctx.last_observation))
    rename_current_task_run(run.names[index])
    replay = run.replay_watch.after(step) if run.replay_watch is not None else None
    cost = run.pricing.step_cost(step) if run.pricing is not None and step.asked_model else None
    run.publish_after_step(index, _publish(run, step, index, cost, replay))
    return step


async def _publish(run: StepRun, step: Step, index: int, cost: Any, replay: Any) -> None:
    """The step's artifact (and the picture where replay handed over), and what the run spent so far."""
    if run.artifacts:
        await publish_step_artifact(step, secrets=run.secrets, attempts=run.attempts[index],
                                    screenshots=run.screenshots, cost=cost, notes=replay.lines if replay else ())
        if replay is not None and replay.handover_page and step.screenshot:
            reasons = run.secrets.scrub("; ".join(replay.handovers))
            await publish_picture(step.screenshot, name=f"handover-{index}", screenshots=run.screenshots,
                                  description=f"Where replay handed over to the model (step {index}): {reasons}"[:500])
    if cost is not None:
        await run.record_spent()


def _env_number(name: str, default: float, *, integer: bool = False) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        raise ConfigError(name, f"must be a {'whole ' if integer else ''}number, got {raw!r}") from None
    if value < 0:
        raise ConfigError(name, f"must be >= 0, got {raw!r}")
    return value


def step_task(retries: int | None = None, retry_delay_s: float | None = None) -> Task:
    """The step task with the retry settings in force: the arguments, else ``WEBTASK_STEP_RETRIES``
    and ``WEBTASK_STEP_RETRY_DELAY_S`` (first delay; it doubles on each retry), else the defaults."""
    if retries is None:
        retries = int(_env_number("WEBTASK_STEP_RETRIES", STEP_RETRIES, integer=True))
    if retry_delay_s is None:
        retry_delay_s = _env_number("WEBTASK_STEP_RETRY_DELAY_S", STEP_RETRY_DELAY_S)
    return _configured(int(retries), float(retry_delay_s))


@functools.lru_cache(maxsize=16)
def _configured(retries: int, retry_delay_s: float) -> Task:
    if retries == STEP_RETRIES and retry_delay_s == STEP_RETRY_DELAY_S:
        return run_step
    return run_step.with_options(
        retries=retries,
        retry_delay_seconds=exponential_backoff(backoff_factor=retry_delay_s)(retries) if retries else 0,
    )
