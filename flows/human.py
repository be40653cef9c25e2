"""A person answers the model's ``ask_human`` through the Prefect UI: the run pauses for a typed form.

When the model asks (webtask_core.human), ``run-webtask`` pauses its flow run with
``pause_flow_run(wait_for_input=<form>)``: the UI shows "Resume" with a form made for the question —
a code (a password field: hidden), free text, one of the options, or approve / reject with a comment
— and above it a markdown description with the question, why, the listing (SKU), the page's URL and
a screenshot of it. A ``webtask.task.waiting`` event is emitted, so an automation
(deployments/automations/webtask-waiting.yaml) tells someone, with a link to the run.

- Short waits pause in process: the browser stays open, the task goes on the moment the form is sent.
- Long waits suspend (``HumanWait.suspend_after_s``): a top-level deployment run saves its unfinished
  task (conversation, steps, cookies, page) in the session store's ``waiting/`` and suspends, freeing
  the worker and the browser; when the form is sent Prefect reschedules the run, which resumes from
  there (any worker of the pool; the store must be shared, e.g. on S3). A run that cannot suspend (a
  batch's in-process listing, a run without a deployment) keeps pausing.
- No answer within ``HumanWait.timeout_s`` (default one hour): the task ends ``aborted``, "no answer
  within 1 h". (A suspended run has no process to do that: Prefect's server fails it when the pause
  expires, "The flow was paused and never resumed".)

Every answer is read once and its flow run input deleted, so the server keeps it no longer than the run
needs it; a secret one (a code) is from then on a run-time secret of the task (scrubbed from
artifacts, logs and sessions). The question is announced once (``webtask.task.waiting``), with the
page to answer it on (:func:`webtask_flows.ui_links.answer_page_url`: the UI that draws a code as dots).
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, create_model

from webtask_core.errors import ConfigError
from webtask_core.human import HumanAnswer, HumanRequest, NoHumanAnswer
from webtask_core.secrets import SecretValues
from webtask_core.storage import SessionStore
from webtask_core.task_context import TaskSnapshot

__all__ = [
    "HumanWait",
    "PrefectHuman",
    "SuspendRun",
    "WaitingTask",
    "answer_form",
    "describe_question",
    "emit_waiting_event",
    "human_duration",
    "load_waiting",
    "save_waiting",
    "suspend_for_answer",
    "answer_after_resume",
]

logger = logging.getLogger(__name__)
_GRACE_S = 60  # Prefect's own pause deadline is later than ours, so ours always ends the wait
WAITING = "waiting"  # the session store's child holding suspended runs' unfinished tasks


class HumanWait(BaseModel):
    """How ``run-webtask`` waits for a person (its ``human`` parameter)."""

    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(default=3600, gt=0, description="No answer by then: the task ends aborted.")
    suspend_after_s: float | None = Field(
        default=600, ge=0, description="Pause in process this long, then suspend (top-level deployment runs "
                                       "only; None: never suspend).")
    poll_s: float = Field(default=5, gt=0, description="How often the paused run looks for the answer.")


def human_duration(seconds: float) -> str:
    """``1 h``, ``90 min``, ``45 s``: what a timeout is called in a reason."""
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{int(seconds // 3600)} h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{int(seconds // 60)} min"
    return f"{seconds:g} s"


# ---- the form and its description ----


def answer_form(request: HumanRequest, description: str) -> type[Any]:
    """The ``RunInput`` subclass the UI shows for ``request`` (its markdown ``description`` above it)."""
    from prefect.input import RunInput

    fields: dict[str, Any]
    if request.kind == "approve":
        fields = {"decision": (Literal["approve", "reject"], Field(description="Approve, or reject (the listing "
                                                                               "ends aborted).")),
                  "comment": (str, Field(default="", description="Why (shown with a rejection)."))}
    elif request.kind == "choice":
        fields = {"answer": (Literal[tuple(request.options)], Field(description=request.question))}
    elif request.secret:
        fields = {"answer": (SecretStr, Field(description=request.question))}
    else:
        fields = {"answer": (str, Field(description=request.question))}
    form = create_model("PersonAnswer", __base__=RunInput, **fields)
    form._description = description
    return form


def read_answer(request: HumanRequest, received: Any) -> HumanAnswer:
    """The form's values as a HumanAnswer."""
    if request.kind == "approve":
        return HumanAnswer(approved=received.decision == "approve", comment=received.comment, by="Prefect UI")
    value = received.answer
    return HumanAnswer(answer=value.get_secret_value() if isinstance(value, SecretStr) else str(value),
                       by="Prefect UI")


def describe_question(request: HumanRequest, *, labels: dict[str, str] | None, timeout_s: float,
                      screenshot_url: str | None = None, form_url: str | None = None) -> str:
    """The markdown above the form: the question, why, the listing, the page and its screenshot;
    for a secret answer, where the form hides what is typed (``form_url``)."""
    labels = labels or {}
    kinds = {"code": "a code", "text": "an answer", "choice": "a choice", "approve": "an approval"}
    lines = [f"## The agent needs {kinds[request.kind]} from a person", "", f"**{request.question}**", ""]
    if request.why:
        lines += [f"Why: {request.why}", ""]
    if labels.get("sku"):
        lines.append(f"- Listing: **{labels['sku']}**" + (f" (batch {labels['batch_name']})" if labels.get("batch_name")
                                                          else ""))
    if request.url:
        lines.append(f"- Page: {request.url}")
    if request.kind == "choice":
        lines.append(f"- Options: {', '.join(request.options)}")
    if request.secret:
        lines.append("- The answer is kept secret: the agent types it without seeing it, and it is stored nowhere.")
        if form_url:
            lines.append(f"- If the answer field shows what you type (Prefect's classic UI), answer on "
                         f"[this page]({form_url}) instead (menu: Resume): it shows dots.")
    lines.append(f"- Without an answer within {human_duration(timeout_s)} the task ends aborted.")
    if request.task:
        first = request.task.strip().splitlines()[0]
        lines.append(f"- Task: {first[:200]}")
    picture = screenshot_url or (f"data:image/jpeg;base64,{request.screenshot}" if request.screenshot else None)
    if picture:
        lines += ["", f"![the page when the agent asked]({picture})"]
    return "\n".join(lines) + "\n"


def emit_waiting_event(request: HumanRequest, *, task: str, labels: dict[str, str] | None, timeout_s: float,
                       suspends_after_s: float | None = None, form_url: str | None = None) -> Any:
    """``webtask.task.waiting``, once per question: a run waits for a person (the automation notifies
    with ``form_url``, where to answer). ``suspends_after_s``: the run frees its worker after that long."""
    from webtask_flows.events import clip_text, emit_task_event

    return emit_task_event(
        "waiting", task=task, reason=request.question, labels=labels,
        extra={"question": clip_text(request.question, 500), "kind": request.kind, "why": clip_text(request.why, 500),
               "page_url": request.url, "timeout_s": timeout_s, "suspended": suspends_after_s is not None,
               "suspends_after_s": suspends_after_s, "form_url": form_url, "secret": request.secret,
               "deadline": (datetime.now(UTC) + timedelta(seconds=timeout_s)).isoformat()})


# ---- pausing (in process) ----


class SuspendRun(Exception):
    """Raised by :class:`PrefectHuman` when the wait should go on suspended: the flow saves the task and
    suspends (:func:`suspend_for_answer`)."""

    def __init__(self, request: HumanRequest, form: type[Any], remaining_s: float):
        self.request, self.form, self.remaining_s = request, form, remaining_s
        super().__init__(f"suspending for an answer to {request.question!r}")


def can_suspend() -> bool:
    """A run can suspend when it is a deployment's top-level run (Prefect refuses subflows)."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    run = context.flow_run if context else None
    return bool(run is not None and run.deployment_id is not None and run.parent_task_run_id is None)


class PrefectHuman:
    """The flow's ``human`` handler: pauses the run for the form, up to the timeout, and asks to
    suspend (:class:`SuspendRun`) when the wait is long and the run can."""

    def __init__(self, wait: HumanWait, *, task: str, labels: dict[str, str] | None, secrets: SecretValues,
                 screenshot_url: Any = None):
        self.wait, self.task, self.labels, self.secrets = wait, task, labels, secrets
        self.screenshot_url = screenshot_url  # async (request) -> URL | None, when pictures go to a store
        self.asked = 0

    async def __call__(self, request: HumanRequest) -> HumanAnswer:
        from prefect import get_run_logger
        from prefect.flow_runs import apause_flow_run

        from webtask_flows.events import current_flow_run
        from webtask_flows.ui_links import answer_page_url

        self.asked += 1
        url = await self.screenshot_url(request) if self.screenshot_url is not None else None
        flow_run_id, _ = current_flow_run()
        form_url = await answer_page_url(flow_run_id) if flow_run_id else None
        form = answer_form(request, describe_question(request, labels=self.labels, timeout_s=self.wait.timeout_s,
                                                      screenshot_url=url, form_url=form_url))
        suspend_after = self.wait.suspend_after_s
        suspending = suspend_after is not None and suspend_after < self.wait.timeout_s and can_suspend()
        # Once per question, suspended later or not: the suspension itself announces nothing more.
        emit_waiting_event(request, task=self.task, labels=self.labels, timeout_s=self.wait.timeout_s,
                           suspends_after_s=suspend_after if suspending else None, form_url=form_url)
        get_run_logger().info("Waiting for a person's answer to %r: answer at %s", request.question,
                              form_url or "the flow run's page (Resume)")
        budget = suspend_after if suspending and suspend_after is not None else self.wait.timeout_s
        key = f"ask-human-{request.step}-{self.asked}"
        pause = apause_flow_run(wait_for_input=form, timeout=int(self.wait.timeout_s) + _GRACE_S,
                                poll_interval=max(1, round(self.wait.poll_s)), key=key)
        try:
            received = await asyncio.wait_for(pause, timeout=budget) if budget > 0 else None
        except TimeoutError:
            received = await _end_pause(form, key)
        if received is None and suspending:
            raise SuspendRun(request, form, self.wait.timeout_s - budget)
        if received is None:
            raise NoHumanAnswer(f"no answer within {human_duration(self.wait.timeout_s)}")
        answer = read_answer(request, received)
        await _forget_input(received)
        return answer


async def _end_pause(form: type[Any], key: str) -> Any:
    """Our deadline passed while paused: set the run running again (Prefect's own deadline is later, so
    it still may) — unless someone answered just now, whose answer is then read."""
    from prefect.client.orchestration import get_client
    from prefect.context import FlowRunContext
    from prefect.input.run_input import keyset_from_base_key
    from prefect.states import Running

    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return None
    async with get_client() as client:
        run = await client.read_flow_run(context.flow_run.id)
        if run.state is not None and run.state.is_paused():
            await client.set_flow_run_state(context.flow_run.id, Running(), force=True)
            return None
    return await _read_response(form, keyset_from_base_key(f"paused-{key}")["response"], context.flow_run.id)


async def _read_response(form: type[Any], key: str, flow_run_id: Any) -> Any:
    """The form's stored response (``key``: what the person sent with Resume), or None when there is none."""
    from prefect.input.actions import aread_flow_run_input
    from prefect.input.run_input import RunInputMetadata

    value = await aread_flow_run_input(key, flow_run_id=flow_run_id)
    if value is None:
        return None
    received = form(**value)  # a ValidationError (ValueError) when it does not fit the form
    received._metadata = RunInputMetadata(key=key, sender=None, receiver=flow_run_id)
    return received


async def _forget_input(received: Any) -> None:
    """Delete an answer's stored response from the flow run's inputs once read: the server keeps it
    no longer than the run needs it (see deployments/README.md, "A person in the loop")."""
    from prefect.input.actions import adelete_flow_run_input

    metadata = received.metadata
    await adelete_flow_run_input(key=metadata.key, flow_run_id=metadata.receiver)


# ---- suspending (the run exits; another process resumes it) ----


class WaitingTask(BaseModel):
    """What a suspended run leaves in the session store's ``waiting/`` (scrubbed of secrets)."""

    schema_version: int = 1
    flow_run_id: str
    key: str  # the suspend's pause key
    request: HumanRequest
    snapshot: TaskSnapshot
    storage_state: dict[str, Any] | None = None
    last_url: str | None = None
    remaining_s: float
    saved_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


def _waiting_store(store: SessionStore) -> SessionStore:
    return store.child(WAITING)


async def save_waiting(store: SessionStore, waiting: WaitingTask, secrets: SecretValues) -> None:
    data = secrets.scrub_data(json.loads(waiting.model_dump_json()))
    await asyncio.to_thread(_waiting_store(store).write_bytes, waiting.flow_run_id, json.dumps(data).encode())


async def load_waiting(store: SessionStore, flow_run_id: str) -> WaitingTask | None:
    """The unfinished task a suspended run saved, or None (a fresh run)."""
    from webtask_core.storage import parse_versioned_document

    raw = await asyncio.to_thread(_waiting_store(store).read_bytes, flow_run_id)
    if raw is None:
        return None
    return parse_versioned_document(raw, WaitingTask, version=1, where=f"the waiting task of flow run {flow_run_id}",
                                    advice="Delete it to run the task afresh.")


async def suspend_for_answer(suspend: SuspendRun, waiting: WaitingTask, store: SessionStore,
                             secrets: SecretValues) -> None:
    """Save the unfinished task, then suspend the run (raises Prefect's Pause: the process exits)."""
    from prefect.flow_runs import asuspend_flow_run

    await save_waiting(store, waiting, secrets)  # the question was announced when it was asked
    await asuspend_flow_run(wait_for_input=suspend.form, timeout=int(suspend.remaining_s), key=waiting.key)
    raise ConfigError("human", "the run could not be suspended")  # asuspend_flow_run raises Pause when it can


async def answer_after_resume(waiting: WaitingTask, store: SessionStore, *, labels: dict[str, str] | None,
                              timeout_s: float) -> HumanAnswer:
    """In the resumed run: the answer the form brought, read from the suspension's input (not by
    suspending again, which would log "Suspending flow run" in a run that just resumed), and the
    waiting task removed from the store."""
    from prefect.input.run_input import keyset_from_paused_state
    from prefect.states import Suspended

    form = answer_form(waiting.request, describe_question(waiting.request, labels=labels, timeout_s=timeout_s))
    keyset = keyset_from_paused_state(Suspended(pause_key=waiting.key))
    received = await _read_response(form, keyset["response"], waiting.flow_run_id)
    await asyncio.to_thread(_waiting_store(store).delete, waiting.flow_run_id)
    if received is None:
        raise NoHumanAnswer("the run was resumed without an answer")
    answer = read_answer(waiting.request, received)
    await _forget_input(received)
    return answer
