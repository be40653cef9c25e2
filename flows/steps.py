"""One agent step as a retryable Prefect task.

The task wraps ``Worker.step``. It is awaited in the flow's event loop (the browser lives there; never
``.submit()`` it), uses ``NO_CACHE``, and retries with exponential backoff and jitter on
:class:`~webtask_core.errors.TransientError` only (model overloaded / rate limited, network, browser
crashed). What the model got wrong never reaches Prefect: the worker turns it into a tool result.

A retried step first relaunches a dead browser (storage state and URL restored from the snapshot of
the last successful step), then calls ``Worker.step`` again, which observes the page afresh; a step
that failed before committing left the task context untouched, so nothing is recorded twice.
"""

from __future__ import annotations

import functools
import os
import time
from typing import TYPE_CHECKING, Any

from prefect import Task, task
from prefect.cache_policies import NO_CACHE
from prefect.tasks import exponential_backoff

from webtask_core.errors import ConfigError, ModelTransientError, TransientError
from webtask_core.session import Step

from .artifacts import SecretMasker, publish_step_artifact

if TYPE_CHECKING:
    from webtask_core.task_context import TaskContext
    from webtask_core.worker import Worker

    from .browser_runtime import BrowserRuntime
    from .screenshots import ScreenshotStore

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


class StepRun:
    """Everything a step task needs, handed to it as one parameter.

    A plain class on purpose: Prefect walks task parameters looking for futures and states, and does
    not descend into arbitrary objects (the browser, the task context).
    """

    def __init__(
        self,
        worker: "Worker",
        ctx: "TaskContext",
        browser: "BrowserRuntime",
        *,
        masker: SecretMasker | None = None,
        artifacts: bool = True,
        screenshots: "ScreenshotStore | None" = None,
    ):
        self.worker = worker
        self.ctx = ctx
        self.browser = browser
        self.masker = masker or SecretMasker()
        self.artifacts = artifacts
        self.screenshots = screenshots  # where step pictures get a URL (None: inline in the markdown)
        self.attempts: dict[int, int] = {}  # step index -> task attempts (1 = no retry)
        # step index -> milliseconds spent in the task outside Worker.step (last attempt)
        self.bookkeeping_ms: dict[int, dict[str, float]] = {}
        # Failures of the page or browser (not the model) in a row: the retry gets a fresh tab.
        self.page_failures = 0

    def __repr__(self) -> str:  # shown by Prefect in logs instead of a huge object dump
        return f"StepRun(task={self.ctx.task[:40]!r}, steps_used={self.ctx.steps_used})"


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
    """Step ``index`` of the task: relaunch a dead browser, observe, ask the model, act, record."""
    run.attempts[index] = run.attempts.get(index, 0) + 1
    ctx = run.ctx
    if ctx.steps_used >= index:
        # An earlier attempt committed this step and failed afterwards (saving the snapshot):
        # do not ask the model again, only finish the bookkeeping.
        step = ctx.steps[index - 1]
        await run.browser.ensure_alive(ctx.current_url)
    else:
        if index != ctx.next_index:
            raise RuntimeError(f"step {index} requested but the task is at step {ctx.next_index}")
        try:
            if run.page_failures:
                # A page stuck in a script or a load can keep failing in the same tab: retry in a
                # fresh one at the last good URL, then on a blank page (the URL may be the problem).
                await run.browser.reopen(ctx.current_url, blank=run.page_failures > 1)
            else:
                await run.browser.ensure_alive(ctx.current_url)
            step = await run.worker.step(ctx)
        except TransientError as error:
            if not isinstance(error, ModelTransientError):
                run.page_failures += 1
            raise
        run.page_failures = 0
    snapshot_started = time.perf_counter()
    await run.browser.snapshot()
    artifact_started = time.perf_counter()
    if run.artifacts:
        await publish_step_artifact(step, masker=run.masker, attempts=run.attempts[index],
                                    screenshots=run.screenshots)
    done = time.perf_counter()
    run.bookkeeping_ms[index] = {
        "snapshot": round((artifact_started - snapshot_started) * 1000.0, 2),
        "artifact": round((done - artifact_started) * 1000.0, 2),
    }
    return step


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
