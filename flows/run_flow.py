"""The ``run-webtask`` flow: one agent task, each step a retryable Prefect task.

    from webtask_flows import run_webtask
    result = await run_webtask("List the boots ...", start_url="https://shop.example",
                               resources={"listing_image_1": "s3://photos/boots/1.jpg"},
                               session_key="shop-demo", secrets={"shop_password": "shop-password"})

In order, so that bad input fails before a browser starts: check the parameters, read the Secret
blocks, take the session key's lock and load the stored session, download the resources, set up the
model client (then, with ``login_session_key``, read a shared login's cookies), start the task
context; only then open the browser — a Chromium of its own, or a context in the batch's
:class:`~webtask_core.browser.runtime.SharedBrowser`; the steps are a
:class:`~webtask_core.task_run.TaskRun`, the loop Agent.do runs too. Whatever happens, the tab (and an own Chromium) is
closed, the resource folder removed and the lock released. The model endpoint and key come from the
environment (``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY``), so deployments and tests run the same
code; every parameter is JSON, so deployments can pass them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import Any

from prefect import flow, get_run_logger
from prefect.context import FlowRunContext
from prefect.states import Completed, Failed
from pydantic import SecretStr

from webtask_core.agent import check_start_url
from webtask_core.browser.runtime import BrowserRuntime
from webtask_core.errors import ConfigError, SessionFormatError
from webtask_core.hosts import HostPatterns
from webtask_core.llm.anthropic import DEFAULT_MODEL, AnthropicLLM, check_model_name
from webtask_core.readback import ReadBack, VerifyMode
from webtask_core.record import Step, TaskRecord, WorkerStatus
from webtask_core.resources import validate_resource_name
from webtask_core.secrets import SecretValue
from webtask_core.storage import SessionStore, validate_session_key
from webtask_core.task_run import TaskRun
from webtask_core.tools.base import SECRET_PLACEHOLDER
from webtask_core.tools.control import OutputSpec
from webtask_core.worker import Worker, WorkerOptions
from webtask_flows.artifacts import publish_run_artifacts
from webtask_flows.costs import RunCost, RunPricing, price_run
from webtask_flows.events import (
    cost_payload,
    emit_handover_event,
    emit_script_event,
    emit_task_event,
    task_display_name,
)
from webtask_flows.human import HumanWait, PrefectHuman
from webtask_flows.human_run import answer_or_suspend, answer_resumed, resumed_waiting_task, totp_names
from webtask_flows.pictures import own_run_artifacts, publish_picture
from webtask_flows.readback_flow import publish_readback_picture, readback_payload
from webtask_flows.replay_scripts import ReplaySpec, get_script_store
from webtask_flows.resources import downloaded_resources
from webtask_flows.run_end import RUN_END_HOOKS
from webtask_flows.run_result import FAILED_STATE_NAMES, StepTiming, WebtaskFailed, WebtaskResult
from webtask_flows.run_signals import note_run_started, wait_for_announced_session
from webtask_flows.screenshots import screenshot_store_from_env
from webtask_flows.session_store import get_session_store, load_session, load_worker_session, save_session, session_lock
from webtask_flows.steps import StepRun, step_task
from webtask_flows.trace import RunTrace, trace_settings_from_env

__all__ = ["run_webtask", "load_secrets"]

def _emit_failed(flow: Any, flow_run: Any, state: Any) -> None:
    """Prefect's on_failure hook: a run that failed before the agent reached an outcome (bad input,
    a missing S3 object, the model API down) emits ``webtask.task.failed``; Aborted and MaxSteps
    emitted their own event from the body."""
    if state.name in FAILED_STATE_NAMES.values():
        return
    parameters = flow_run.parameters or {}
    labels = parameters.get("labels")
    emit_task_event(
        "failed", task=str(parameters.get("task") or ""), reason=state.message, flow_run_id=flow_run.id,
        flow_run_name=flow_run.name, session_key=parameters.get("session_key"),
        max_steps=parameters.get("max_steps"), labels=labels if isinstance(labels, dict) else None,
    )


@flow(name="run-webtask", persist_result=True, validate_parameters=True, on_failure=[_emit_failed, *RUN_END_HOOKS],
      on_completion=RUN_END_HOOKS, on_crashed=RUN_END_HOOKS, on_cancellation=RUN_END_HOOKS)
async def run_webtask(
    task: str,
    start_url: str | None = None,
    resources: dict[str, str] | None = None,
    max_steps: int = 20,
    session_key: str | None = None,
    output_schema: dict[str, Any] | None = None,
    model: str | None = None,
    allowed_domains: list[str] | None = None,
    secrets: dict[str, str] | None = None,
    login_session_key: str | None = None,
    block_requests: bool = False,
    labels: dict[str, str] | None = None,
    replay: ReplaySpec | None = None,
    human: HumanWait | None = None,
    readback: ReadBack | None = None,
    verify: VerifyMode = "always",
) -> WebtaskResult:
    """Run one web task with the agent.

    Args:
        task: what to do, in words (may contain ``{{secret:NAME}}`` placeholders).
        start_url: the page to open first; default: where the session with ``session_key`` ended.
        resources: upload files by name: ``s3://bucket/key`` URIs or local paths.
        max_steps: the most steps (model calls) the task may take.
        session_key: carry the conversation and the browser's cookies to the next run with this key.
        output_schema: a JSON schema (``"type": "object"``) the task's output must match.
        model: the Anthropic model name; default: AnthropicLLM's.
        allowed_domains: top-level navigation is limited to these domains.
        secrets: placeholder name -> where its value comes from, for ``{{secret:NAME}}``: a Prefect
            ``Secret`` block name, or ``env:VARIABLE`` for an environment variable of the worker;
            ``totp:`` before either says it holds a TOTP seed, typed as ``{{totp:NAME}}`` (its code).
            With ``allowed_domains``, secrets are only typed on those domains.
        login_session_key: start with the cookies and local storage stored under this key (a site
            login another run saved): read only — no lock, no conversation, nothing saved back. Used
            when ``session_key`` brings no storage state of its own; a missing key is only a warning.
        block_requests: with ``allowed_domains``, also block the page's own requests to other hosts.
        labels: what this run is part of, carried into its events and summary artifact: ``sku`` (a
            listing: its summary is keyed by it), ``batch_flow_run_id`` and ``batch_name`` (the
            batch's run), ``name`` (what to call the task in alerts); other keys go in the payload.
        replay: replay the script stored under ``replay.key`` with this run's ``replay.params``: steps
            whose page and elements still match run without the model; where the site differs the
            model takes over, and a completed run records (or repairs) the script. Scripts live in
            the session store's ``scripts/`` (see :mod:`webtask_flows.replay_scripts`).
        human: how the run waits when the model asks a person (``ask_human``: a code, a CAPTCHA, an
            approval): it pauses for a form in the Prefect UI, suspends after ``suspend_after_s``
            (top-level deployment runs), and ends aborted after ``timeout_s`` (default one hour)
            without an answer (see :mod:`webtask_flows.human`).
        readback: the listing the task makes (its fields, how its page labels them, where it is):
            once the task completed, its page is read back in the same browser context and every
            field it shows compared with what was asked (webtask_core.readback).
        verify: when to read back: "always", "replayed" (runs with a replay script only), "off".

    Ends ``Completed`` with a :class:`WebtaskResult`, or ``Failed(name="Aborted")`` /
    ``Failed(name="MaxSteps")`` / ``Failed(name="Mismatch")`` (the read-back found the listing shown
    otherwise) with the feedback as message; see :mod:`webtask_flows.run_result`.
    """
    started = time.perf_counter()
    logger = get_run_logger()
    allowed = _check_parameters(task, start_url, resources, session_key, allowed_domains, login_session_key,
                                model=model, output_schema=output_schema, labels=labels)
    if replay is not None:
        replay.check()
    if readback is not None:
        readback.validated()
    screenshots = screenshot_store_from_env()  # a bad setting fails here, before anything starts
    pricing = RunPricing(model or DEFAULT_MODEL)  # so does a bad WEBTASK_MODEL_PRICES
    traces = trace_settings_from_env()  # and WEBTASK_TRACE / WEBTASK_TRACE_STORE
    wait = human or HumanWait()
    secret_values = await load_secrets(secrets)
    seeds = totp_names(secrets)
    options = WorkerOptions(
        secrets={name: SecretValue(value=SecretStr(value), totp=True) if name in seeds else SecretStr(value)
                 for name, value in secret_values.items()},
        # Secrets are typed only where navigation may go.
        secret_domains=list(allowed) if allowed else None,
    )
    run_context = FlowRunContext.get()
    flow_run_id = str(run_context.flow_run.id) if run_context and run_context.flow_run else None

    async with AsyncExitStack() as stack:
        previous: TaskRecord | None = None
        storage_state: dict[str, Any] | None = None
        last_url: str | None = None
        store = None
        if session_key:
            await stack.enter_async_context(session_lock(session_key))
            store = await get_session_store()
            loaded = await load_worker_session(session_key, store=store)
            if loaded is not None:
                previous, stored = loaded
                storage_state, last_url = stored.storage_state, stored.last_url
                logger.info("Continuing session %r (%d earlier task(s))", session_key, len(previous.previous_tasks) + 1)
        # A batch starting its runs one at a time may start the next one now: after this run's own
        # first API writes (the session lock), which would otherwise land on that start (SQLite 503s).
        note_run_started()
        files = await stack.enter_async_context(downloaded_resources(resources or {}))
        llm = await stack.enter_async_context(AnthropicLLM(model or DEFAULT_MODEL))
        if login_session_key and storage_state is None:
            storage_state = await _login_storage_state(login_session_key, store or await get_session_store())
        waiting = await resumed_waiting_task(store, flow_run_id)
        if waiting is not None:
            storage_state = waiting.storage_state
        # Entered before the browser, so it ends after the browser saved the trace.
        trace = await stack.enter_async_context(
            RunTrace(traces, flow_run_id, title=task_display_name(task, labels)))
        browser = await stack.enter_async_context(
            BrowserRuntime(storage_state=storage_state, allowed_domains=allowed_domains,
                           block_requests=block_requests, tracer=trace.recorder)
        )
        worker = Worker(llm, browser.current_tab, options=options)
        scrub = worker.secrets.scrub  # everything logged, stored or shown is scrubbed of the values
        if trace.recorder is not None:
            trace.recorder.scrub = scrub  # the trace holds what was typed: scrubbed when saved
        worker.human = PrefectHuman(wait, task=scrub(task), labels=labels, secrets=worker.secrets)
        ctx = worker.start(task, resources=files, output_schema=output_schema, max_steps=max_steps,
                           previous_session=previous)
        if waiting is not None:  # suspended for a person's answer, and resumed: go on from there
            worker.resume(ctx, waiting.snapshot)
            start_url = waiting.last_url
            replay = None  # the steps before the suspension were recorded by the run that suspended
        replaying = None
        if replay is not None:
            scripts = await get_script_store(store)  # beside the sessions
            replaying = replay.replay(scripts, source=f"flow run {flow_run_id}" if flow_run_id else "")
        task_run = TaskRun(worker, ctx, browser, start_url=start_url or last_url, replay=replaying,
                           readback=readback, verify=verify)
        await task_run.start()  # a start URL that cannot be opened fails here, before any model call
        step_run = StepRun(task_run, secrets=worker.secrets, screenshots=screenshots, pricing=pricing,
                           tracer=trace.recorder, flow_run_id=flow_run_id)
        stack.push_async_exit(step_run.finish_records)  # a run ending on an error still writes them
        run_step = step_task()
        task_ms: dict[int, float] = {}
        if waiting is not None:
            await answer_resumed(task_run, waiting, store, labels=labels, timeout_s=wait.timeout_s)
        while not ctx.finished:
            if ctx.pending_question is not None:  # asked in the flow itself: a pause, never in a task
                await step_run.published()  # a suspended run ends this process: every step's records first
                await step_run.record_spent()  # and what it spent so far, unwritten while it waits
                await answer_or_suspend(task_run, browser, store, flow_run_id)
                if ctx.finished:
                    break
            index = ctx.next_index
            step_started = time.perf_counter()
            step = await run_step(step_run, index)
            task_ms[index] = round((time.perf_counter() - step_started) * 1000.0, 2)
            logger.info("step %d: %s", index, scrub(step.summary()))

        session = await task_run.finish()
        await step_run.published()  # the last step's records were written during the read-back
        trace.outcome(completed=session.status is WorkerStatus.completed, handed_over=bool(task_run.replay_handovers))
        if session_key and store is not None:
            state, live_url = await browser.final_state()
            url: str | None = live_url or session.final_url
            # A GET form can put a secret in the URL, a site can keep it in a cookie: neither is stored.
            if url and worker.secrets.contains(url):
                url = None
            if state:
                state, dropped = worker.secrets.drop_secret_entries(state)
                if dropped:
                    logger.info("Not storing %d cookie/storage entr(ies) that hold a secret", dropped)
            await save_session(session_key, session, storage_state=state, last_url=url, store=store)
        relaunches = browser.relaunches
    # Here the browser is closed, the resource folder removed and the session key released.

    if trace.locations:
        logger.info("Playwright trace: playwright show-trace %s", trace.locations[-1])
    run_cost = await price_run(pricing, session.steps, session.usage, script_key=replay.key if replay else None,
                               store=(store or await get_session_store()) if replay else None)
    result = _result(session, step_run, task_ms, started=started, session_key=session_key,
                     flow_run_id=flow_run_id, relaunches=relaunches, replay_key=replay.key if replay else None,
                     run_cost=run_cost, trace_location=trace.locations[-1] if trace.locations else None)
    if result.cost_usd is not None:  # the whole run's cost, retried calls included, on its label
        await step_run.record_spent(result.cost_usd, final=True)
    handovers = task_run.replay_handover_details
    if handovers and replay is not None and task_run.replayer is not None:
        emit_handover_event(key=replay.key, revision=task_run.replayer.script.revision, outcome=result.status.value,
                            handovers=[{"step": handover.step, "kind": handover.kind, "reason": scrub(handover.reason)}
                                       for handover in handovers], task=task, labels=labels)
    if task_run.saved_script is not None and replay is not None:
        emit_script_event(task_run.replay_outcome, key=replay.key, revision=task_run.saved_script.revision,
                          steps=len(task_run.saved_script.steps), handovers=result.replay_handovers,
                          task=task, labels=labels)
    await publish_run_artifacts(result, session.steps, task=task,
                                attempts=step_run.attempts, task_ms=task_ms, secrets=worker.secrets, labels=labels)
    if result.replayed_steps and session.final_screenshot:  # replayed steps take no picture: show where it ended
        with own_run_artifacts():
            await publish_picture(session.final_screenshot, name="final", screenshots=screenshots,
                                  description=f"The last page of the replayed run ({result.status.value})")
    extra = cost_payload(result.cost_usd, result.saved_by_replay_usd, model=result.model)
    if task_run.readback_result is not None and not task_run.readback_result.ok:  # the page the read-back saw
        picture, artifact = await publish_readback_picture(task_run.readback_result, screenshots=screenshots)
        extra |= readback_payload(task_run.readback_result, picture=picture, picture_artifact_id=artifact)
    emit_task_event(result.status.value, task=task, reason=result.feedback, session_key=session_key,
                    steps_used=result.steps, max_steps=result.max_steps, labels=labels, extra=extra)
    logger.info("webtask %s after %d step(s): %s", result.status.value, result.steps, scrub(result.feedback))
    if result.ok:
        return Completed(message=result.feedback, data=result)  # type: ignore[return-value]
    return Failed(  # type: ignore[return-value]
        name=FAILED_STATE_NAMES[result.status], message=result.feedback, data=WebtaskFailed(result)
    )


def _check_parameters(
    task: str,
    start_url: str | None,
    resources: Mapping[str, str] | None,
    session_key: str | None,
    allowed_domains: list[str] | None,
    login_session_key: str | None = None,
    *,
    model: str | None = None,
    output_schema: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
) -> HostPatterns:
    """The checks that need no I/O, so bad input fails before the lock, downloads or Chromium.
    Returns the allowed domains as patterns."""
    if not isinstance(task, str) or not task.strip():
        raise ConfigError("task", "must be a non-empty string")
    if labels is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise ConfigError("labels", f"must map names to strings, got {labels!r}")
    allowed = HostPatterns(allowed_domains)
    check_start_url(start_url, allowed)
    if model is not None:
        check_model_name(model)
    OutputSpec(output_schema)  # an invalid JSON schema is named here, not at the first set_output
    for name in resources or {}:
        validate_resource_name(name)  # before anything is downloaded
    if session_key is not None:
        validate_session_key(session_key)
    if login_session_key is not None:
        try:
            validate_session_key(login_session_key)
        except ConfigError as exc:
            raise ConfigError("login_session_key", exc.problem) from None
        if login_session_key == session_key:
            raise ConfigError("login_session_key", "is the session_key itself; give session_key alone")
    return allowed


async def _login_storage_state(login_session_key: str, store: SessionStore) -> dict[str, Any] | None:
    """The storage state of a stored login, read without the key's lock (a snapshot is enough: the
    task logs in itself when the cookies turn out stale). Missing or unreadable: a warning, None.
    When a batch in this process announced that its login task is still running, wait for it first."""
    logger = get_run_logger()
    if not await wait_for_announced_session(login_session_key):  # a batch's login, still running in this process
        logger.warning("The shared login %r did not complete; the task logs in itself if it must", login_session_key)
        return None
    try:
        stored = await load_session(login_session_key, store=store)
    except SessionFormatError as exc:
        logger.warning("Not using the stored login %r: %s", login_session_key, exc)
        return None
    if stored is None or not stored.storage_state:
        logger.warning("No stored login %r at %s; the task logs in itself if it must",
                       login_session_key, store.location(login_session_key))
        return None
    logger.info("Starting with the stored login %r (saved %s)", login_session_key, stored.saved_at.isoformat())
    return stored.storage_state


async def load_secrets(secrets: Mapping[str, str] | None) -> dict[str, str]:
    """Placeholder name -> value, read from the Prefect ``Secret`` blocks the mapping names, or from
    the environment for ``env:VARIABLE`` (workers that get secrets injected by their platform)."""
    if not secrets:
        return {}
    from prefect.blocks.system import Secret

    values: dict[str, str] = {}
    for name, block_name in secrets.items():
        if not isinstance(name, str) or not SECRET_PLACEHOLDER.fullmatch("{{secret:" + name + "}}"):
            raise ConfigError("secrets", f"{name!r} cannot be used in a {{{{secret:NAME}}}} placeholder")
        if isinstance(block_name, str) and block_name.startswith("totp:"):  # a TOTP seed (totp_names)
            block_name = block_name[len("totp:"):]
        if isinstance(block_name, str) and block_name.startswith("env:"):
            variable = block_name[len("env:"):]
            env_value = os.environ.get(variable)
            if not variable or not env_value:
                raise ConfigError("secrets", f"{name!r}: the environment variable {variable!r} is not set")
            values[name] = env_value
            continue
        try:
            block: Secret[Any] = await Secret.aload(block_name)
        except ValueError as exc:
            raise ConfigError("secrets", f"{name!r}: no Secret block named {block_name!r} ({exc})") from exc
        value = block.get()
        if not isinstance(value, str) or not value:
            raise ConfigError("secrets", f"{name!r}: the Secret block {block_name!r} must hold a non-empty string")
        values[name] = value
    return values


def _result(
    session: TaskRecord,
    step_run: StepRun,
    task_ms: Mapping[int, float],
    *,
    started: float,
    session_key: str | None,
    flow_run_id: str | None,
    relaunches: int,
    replay_key: str | None = None,
    run_cost: RunCost | None = None,
    trace_location: str | None = None,
) -> WebtaskResult:
    attempts, scrub = step_run.attempts, step_run.secrets.scrub
    task_run = step_run.task_run
    snapshot_ms = step_run.task_run.snapshot_ms
    timings = [
        StepTiming(
            index=step.index, url=scrub(step.url), ok=step.ok and step.error is None,
            attempts=attempts.get(step.index, 1), observe_ms=step.timings.observe_ms,
            model_ms=step.timings.model_ms, act_ms=step.timings.act_ms, step_ms=step.timings.total_ms,
            snapshot_ms=snapshot_ms.get(step.index, 0.0),
            artifact_ms=step_run.artifact_ms.get(step.index, 0.0),
            task_ms=task_ms.get(step.index, 0.0), replayed=step.replayed,
            name=step_run.names.get(step.index, ""), cost_usd=_step_cost(step_run, step),
        )
        for step in session.steps
    ]
    return WebtaskResult(
        status=session.status,
        output=session.output,
        feedback=scrub(session.feedback),
        steps=session.steps_used,
        max_steps=session.max_steps,
        usage=session.usage,
        tokens=session.usage.total_tokens,
        step_timings=timings,
        duration_s=round(time.perf_counter() - started, 3),
        final_url=scrub(session.final_url),
        session_key=session_key,
        flow_run_id=flow_run_id,
        step_retries=sum(count - 1 for count in attempts.values()),
        browser_relaunches=relaunches,
        model_calls=sum(1 for step in session.steps if step.asked_model),
        replayed_steps=task_run.replayed_steps,
        replay=task_run.replay_outcome,
        replay_key=replay_key,
        replay_handovers=[scrub(reason) for reason in task_run.replay_handovers],
        model=run_cost.model if run_cost else "",
        cost=run_cost.cost if run_cost else None,
        cost_usd=run_cost.cost_usd if run_cost else None,
        saved_by_replay_usd=run_cost.saved_usd if run_cost else None,
        saved_by_replay=scrub(run_cost.saved_basis) if run_cost else "",
        trace=trace_location,
        readback=task_run.readback_result.model_copy(update={"screenshot": None}) if task_run.readback_result else None,
    )


def _step_cost(step_run: StepRun, step: Step) -> float | None:
    if step_run.pricing is None:
        return None
    if not step.asked_model:
        return 0.0
    cost = step_run.pricing.step_cost(step)
    return round(cost.total_usd, 6) if cost is not None else None
