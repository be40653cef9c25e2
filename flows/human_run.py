"""The ``run-webtask`` flow's side of asking a person (webtask_flows.human): answering a pending
question between steps (in the flow, never inside a step task: Prefect cannot suspend a task), saving
the unfinished task and suspending for a long wait, and going on from it when a resumed run starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from webtask_core.human import NoHumanAnswer
from webtask_flows.human import SuspendRun, WaitingTask, answer_after_resume, load_waiting, suspend_for_answer

if TYPE_CHECKING:
    from webtask_core.browser.runtime import BrowserRuntime
    from webtask_core.storage import SessionStore
    from webtask_core.task_run import TaskRun

SUSPEND_KEY_SUFFIX = "-suspended"

__all__ = ["totp_names", "resumed_waiting_task", "answer_resumed", "answer_or_suspend"]


def totp_names(secrets: Mapping[str, str] | None) -> set[str]:
    """The secrets whose source starts with ``totp:``: their values are TOTP seeds."""
    return {name for name, source in (secrets or {}).items() if isinstance(source, str) and source.startswith("totp:")}


async def _store(store: SessionStore | None) -> SessionStore:
    from webtask_flows.session_store import get_session_store

    return store or await get_session_store()


async def resumed_waiting_task(store: SessionStore | None, flow_run_id: str | None) -> WaitingTask | None:
    """The unfinished task this run saved before it suspended, when Prefect is resuming it (a run
    that suspended keeps the suspend's key in its policy; only then is the store read)."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    run = context.flow_run if context else None
    fired = run.empirical_policy.pause_keys or set() if run is not None else set()
    if flow_run_id is None or not any(key.endswith(SUSPEND_KEY_SUFFIX) for key in fired):
        return None
    return await load_waiting(await _store(store), flow_run_id)


async def answer_resumed(task_run: TaskRun, waiting: WaitingTask, store: SessionStore | None, *,
                         labels: dict[str, str] | None, timeout_s: float) -> None:
    """Give the resumed task the answer the form brought."""
    request = waiting.request
    try:
        answer = await answer_after_resume(waiting, await _store(store), labels=labels, timeout_s=timeout_s)
    except NoHumanAnswer as error:
        task_run.no_answer(error.reason)
        return
    except ValueError as error:  # the input did not validate against the form (a resume without one)
        task_run.no_answer(f"the run was resumed without a usable answer: {error}")
        return
    task_run.apply_answer(request, answer)


async def answer_or_suspend(task_run: TaskRun, browser: BrowserRuntime, store: SessionStore | None,
                            flow_run_id: str | None) -> None:
    """Answer the pending question (a pause); a long wait saves the task and suspends the run."""
    try:
        await task_run.answer_pending()
    except SuspendRun as suspend:
        if flow_run_id is None or task_run.ctx.pending_question is None:
            raise
        state, url = await browser.final_state()
        secrets = task_run.worker.secrets
        if state:
            state, _ = secrets.drop_secret_entries(state)
        request: Any = task_run.ctx.pending_question.request  # without the screenshot: it was in the form
        waiting = WaitingTask(flow_run_id=flow_run_id, key=f"ask-human-{task_run.ctx.steps_used}{SUSPEND_KEY_SUFFIX}",
                              request=request, snapshot=task_run.ctx.snapshot(), storage_state=state,
                              last_url=None if url and secrets.contains(url) else url,
                              remaining_s=suspend.remaining_s)
        await suspend_for_answer(suspend, waiting, await _store(store), secrets)
