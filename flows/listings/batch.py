"""The ``batch-listing-upload`` flow: every listing of a manifest on the marketplace, crash-safe.

    from webtask_flows.listings.batch import batch_listing_upload
    results = await batch_listing_upload(manifest="s3://listings/nightly/manifest.jsonl",
                                         site_url="https://shop.example", username="ops",
                                         password_secret="shop-password")

In order: read and validate the whole manifest (nothing touches the site when a row is bad), render
every task, check the ledger can be written, skip the listings the ledger already holds, log in once
(unless a usable login is stored; see :mod:`webtask_flows.listings.login`), then run the others with at most
``max_concurrency`` at a time — each a ``run-webtask`` run named after its SKU, starting with the
shared login's cookies: in this process, every listing a context of one shared Chromium, or
(``fan_out="deployments"``) on the work pool. Every finished listing updates
the progress artifact; completed ones go in the ledger. The batch ends ``Completed`` when every
listing completed, else ``Failed`` naming the SKUs that did not; either way its data is the list of
:class:`ListingResult` (read it with :func:`batch_results`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from prefect import flow, get_run_logger
from prefect.context import FlowRunContext
from prefect.states import Completed, Failed

from webtask_core.browser.runtime import SharedBrowser
from webtask_core.errors import ConfigError
from webtask_core.llm.anthropic import DEFAULT_MODEL, check_model_name
from webtask_core.readback import VerifyMode
from webtask_flows.costs import RunPricing
from webtask_flows.human import HumanWait
from webtask_flows.listings.approvals import ApprovalRule, approval_reason
from webtask_flows.listings.artifacts import BatchProgress, publish_summary, summary_line
from webtask_flows.listings.events import emit_batch_event
from webtask_flows.listings.ledger import RECORDED_STATUSES, LedgerRecordError, ListingLedger, open_ledger
from webtask_flows.listings.login import plan_login, start_shared_login
from webtask_flows.listings.manifest import BatchInput, load_batch_input
from webtask_flows.listings.models import ListingResult
from webtask_flows.listings.records import ListingRecord
from webtask_flows.listings.runs import FanOut, ListingJob, listing_script_key, plan_jobs, repair_job, run_listing
from webtask_flows.listings.spend import ATTEMPT_LABEL, BatchSpend, fill_costs, read_batch_spend
from webtask_flows.orphans import crash_orphans
from webtask_flows.run_end import RUN_END_HOOKS
from webtask_flows.run_signals import SubflowStarts, announce_session

__all__ = ["batch_listing_upload", "BatchFailed", "batch_results"]

_PARALLEL_LOOKUPS = 16  # ledger reads in flight at once (S3 GETs)
_NONE = ListingResult(sku="", status="error")  # "not in the ledger", for lookups


class BatchFailed(Exception):
    """Some listings did not complete; ``.results`` holds every listing's result."""

    def __init__(self, message: str, results: list[ListingResult]):
        self.results = results
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:  # results are pickled when persisted
        return (type(self), (str(self), self.results))


async def batch_results(state: Any) -> list[ListingResult]:
    """The per-listing results of a finished batch state, Completed or Failed."""
    value = await state.aresult(raise_on_failure=False)
    if isinstance(value, BatchFailed):
        return value.results
    if isinstance(value, BaseException):
        raise value
    return [ListingResult.model_validate(item) for item in value]


async def _emit_outcome(flow: Any, flow_run: Any, state: Any) -> None:
    """The batch's completion and failure hook: ``webtask.batch.completed`` / ``webtask.batch.failed``."""
    value = await state.aresult(raise_on_failure=False)
    reason = None
    if isinstance(value, BatchFailed):
        results = value.results
    elif isinstance(value, BaseException):  # the batch itself failed: a bad manifest, parameter, ledger
        results, reason = [], f"{type(value).__name__}: {value}"
    else:
        results = [ListingResult.model_validate(item) for item in value]
    parameters = flow_run.parameters or {}
    source = parameters.get("manifest") or f"{len(parameters.get('listings') or [])} listing record(s)"
    spend = await _spend(flow_run.id, flow_run.run_count, parameters.get("model"))
    emit_batch_event(results, source=str(source), message=state.message or "", reason=reason,
                     flow_run_id=flow_run.id, flow_run_name=flow_run.name, spend=spend)


async def _spend(flow_run_id: Any, attempts: int, model: str | None) -> BatchSpend | None:
    """What every attempt of the batch spent (None when its model has no price)."""
    if not RunPricing(model or DEFAULT_MODEL).priced:
        return None
    return await read_batch_spend(flow_run_id, attempts=attempts)


@flow(name="batch-listing-upload", persist_result=True, validate_parameters=True,
      on_completion=[_emit_outcome, *RUN_END_HOOKS], on_failure=[_emit_outcome, *RUN_END_HOOKS],
      on_crashed=RUN_END_HOOKS, on_cancellation=RUN_END_HOOKS)
async def batch_listing_upload(
    site_url: str,
    username: str,
    manifest: str | None = None,
    listings: list[ListingRecord | dict[str, Any]] | None = None,
    password_secret: str = "shop-password",
    task_template: str | None = None,
    max_concurrency: int = 2,
    max_steps: int = 30,
    model: str | None = None,
    ledger: str | None = None,
    skip_invalid: bool = False,
    fan_out: FanOut = "none",
    deployment: str = "run-webtask/default",
    allowed_domains: list[str] | None = None,
    batch_id: str | None = None,
    login_task_template: str | None = None,
    login_max_age_minutes: float = 60,
    replay: bool = False,
    replay_version: str = "1",
    approve_if: ApprovalRule | None = None,
    human: HumanWait | None = None,
    verify: VerifyMode = "always",
    repair_mismatch: bool = False,
    totp_secret: str | None = None,
) -> list[ListingResult]:
    """Upload every listing of a manifest (or of ``listings``) to the marketplace at ``site_url``.

    Args:
        site_url: the marketplace's address; every task starts there.
        username: the marketplace account; its password comes from ``password_secret``.
        manifest: ``s3://bucket/key`` or a local path, JSON Lines or CSV (give this or ``listings``).
        listings: listing records from an upstream flow (dicts or ``ListingRecord``).
        password_secret: the Prefect ``Secret`` block holding the password; tasks type it through
            the ``{{secret:shop_password}}`` placeholder, so it never appears in a prompt or the UI.
        task_template: the listing task template: a path or Jinja2 text (default: the packaged one).
        max_concurrency: listings in flight at once.
        max_steps: step limit of each listing's task.
        model: the Anthropic model (default: the library's).
        ledger: where completed listings are recorded: a folder, ``s3://bucket/prefix`` or
            ``block:s3-bucket/<name>`` (default: ``WEBTASK_LEDGER``, else ``~/.webtask/ledger``).
        skip_invalid: run the valid rows and report the invalid ones, instead of failing.
        fan_out: ``"deployments"`` makes each listing a run of ``deployment`` on its work pool.
        deployment: the ``run-webtask`` deployment used by the fan-out.
        allowed_domains: hosts the browser may visit (default: the host of ``site_url``).
        batch_id: names this batch attempt in fan-out idempotency keys (default: the flow run).
        login_task_template: the log-in task template: a path or Jinja2 text (default: the packaged
            ``login_task.yaml``).
        login_max_age_minutes: a stored login younger than this is reused without logging in
            (0: log in on every batch).
        replay: learn the listing flow once and replay it: the first listing that completes records a
            script of its steps (in the session store's ``scripts/``); later listings replay it with
            their own values and no model calls, the model taking over only where the site changed
            (and then repairing the script). One script per task template, site host and version.
            Listings run one at a time until one completes with a script that fits the site (the
            first recording, a clean replay, or a repair), then side by side.
        replay_version: bump it to record the script afresh (e.g. after changing the template).
        approve_if: listings a person approves before Publish (``price_above``, fields ``changed`` since
            the SKU's last listing, ``categories``): the run pauses for the form in the Prefect UI;
            "reject" ends that listing aborted with the comment (webtask_flows.listings.approvals).
        human: how a listing waits for a person (approvals, a log-in code, a security check): see
            ``run-webtask``'s ``human`` (default: up to one hour, then aborted).
        verify: when a listing is read back from the site after its run completed: "always" (one page
            load each; checked in code when it replayed, by one model call when the model listed it),
            "replayed" (only listings a replay script decided), "off". A listing the site shows
            otherwise than asked fails as a mismatch (``webtask.listing.mismatch``), is listed first in
            the summary, and is kept in the ledger so that no rerun lists it a second time.
        repair_mismatch: a rerun opens the ledger's mismatched listings' edit pages and corrects them
            (the packaged ``repair_task.yaml``), instead of reporting them again (default off).
        totp_secret: the ``Secret`` block (or ``env:VARIABLE``) holding the account's TOTP seed, when
            its log-in asks for an authenticator app's code: the task types ``{{totp:shop_2fa}}``, the
            code of the moment, and nobody is asked.
    """
    logger = get_run_logger()
    _check_parameters(site_url, max_concurrency, fan_out, max_steps=max_steps, model=model)
    await _crash_earlier_attempts_orphans()
    await _check_password_secret(password_secret, totp_secret)
    batch = await load_batch_input(manifest, listings, skip_invalid=skip_invalid)
    book = await open_ledger(ledger, site_url=site_url, username=username)
    approvals = await _approvals(book, batch.listings, approve_if)
    jobs = plan_jobs(
        batch.listings, site_url=site_url, username=username, password_secret=password_secret,
        task_template=task_template, max_steps=max_steps, model=model, allowed_domains=allowed_domains,
        replay_key=listing_script_key(task_template, site_url, replay_version) if replay else None,
        approvals=approvals, human=human.model_dump() if human is not None else None, verify=verify,
        totp_secret=totp_secret,
    )
    login = plan_login(
        site_url=site_url, username=username, password_secret=password_secret, template=login_task_template,
        max_steps=max_steps, model=model, allowed_domains=allowed_domains, max_age_minutes=login_max_age_minutes,
        totp_secret=totp_secret,
    )
    batch_id = batch_id or _current_attempt_id()
    await book.check_writable(batch_id)
    for problem in batch.problems:
        logger.warning("Skipping invalid manifest row: %s", problem)

    total = len(jobs)
    progress = BatchProgress(f"{batch.artifact_key}-progress", total)
    await progress.start()
    finished: list[ListingResult] = []
    results: dict[str, ListingResult] = {}

    starts = SubflowStarts()  # in this process: one subflow start at a time, 1 s at most (see webtask_flows.run_signals)

    async def settle(result: ListingResult) -> None:
        results[result.sku] = result
        finished.append(result)
        async with starts.exclusive():  # never at the moment a subflow start writes (SQLite 503s)
            await progress.update(finished)
        logger.info("%s: %s (%s)", result.sku, result.status, summary_line(finished, total))

    done = await _look_up_all(book, jobs)
    if repair_mismatch:  # published with a mismatch: corrected through the site's edit page this time
        jobs = [repair_job(job, done.pop(job.sku)) if done.get(job.sku, _NONE).status == "mismatch" else job
                for job in jobs]
    for result in done.values():
        results[result.sku] = result
        finished.append(result)
    if done:
        await progress.update(finished)
    pending = [job for job in jobs if job.sku not in done]
    logger.info("Batch %s: %d listing(s), %d already done, %d to run (at most %d at a time%s)",
                batch.source, total, len(done), len(pending), max_concurrency,
                ", as deployment runs" if fan_out == "deployments" else "")

    gate = asyncio.Semaphore(max_concurrency)

    labels = _batch_labels()

    async def run_one(job: ListingJob, login_key: str | None) -> ListingResult:
        async with gate:
            result = await run_listing(job, fan_out=fan_out, deployment=deployment, batch_id=batch_id,
                                       login_session_key=login_key, starts=starts, labels=labels)
            # Recorded before the next listing may start: its start would wait on these writes anyway.
            # A mismatch is published too: recorded, so that no rerun lists it a second time.
            if result.status in RECORDED_STATUSES:
                await _remember(book, job, result)
            await settle(result)
            return result

    async def run_all(queue: list[ListingJob], login_key: str | None) -> None:
        """With replay, listings run one at a time until one completes with a script that fits the
        site as it is today (recorded, replayed or repaired): the model learns or repairs the flow
        once, then the rest replay it side by side."""
        queue = list(queue)
        while replay and queue:
            result = await run_one(queue.pop(0), login_key)
            if result.status == "completed" and result.replay in ("recorded", "replayed", "repaired"):
                break
        await asyncio.gather(*(run_one(job, login_key) for job in queue))

    if pending and fan_out == "deployments":  # workers read the login from the store: submit once it is there
        logged_in = await start_shared_login(login, fan_out=fan_out, deployment=deployment, batch_id=batch_id,
                                             labels=labels)
        login_key = await logged_in
        await run_all(pending, login_key)
    elif pending:
        # One Chromium for the login and every listing (a context each), closed here. The listings
        # start while the login runs and wait for it just before opening their context.
        async with SharedBrowser() as shared:
            logged_in = await start_shared_login(login, fan_out=fan_out, deployment=deployment, batch_id=batch_id,
                                                 starts=starts, labels=labels)
            try:
                with announce_session(login.session_key, logged_in):
                    await run_all(pending, login.session_key)
            finally:  # normally long done: every listing waited for it
                if not logged_in.done():
                    logged_in.cancel()
                await asyncio.wait([logged_in])
        logger.info("The batch's shared browser was launched %d time(s)", shared.launches)

    ordered = [results[job.sku] for job in jobs] + _invalid_results(batch)
    context = FlowRunContext.get()
    spend = await _spend(context.flow_run.id, context.flow_run.run_count, model) if context and context.flow_run else None
    if spend is not None:  # an errored or crashed listing's cost: what its run said it spent
        ordered = fill_costs(ordered, spend, priced=True)
    unpriced = None if RunPricing(model or DEFAULT_MODEL).priced else model or DEFAULT_MODEL
    await publish_summary(batch.artifact_key, ordered, source=batch.source, spend=spend, unpriced_model=unpriced)
    return _final_state(ordered, total, invalid=len({problem.row for problem in batch.problems}))


async def _approvals(book: ListingLedger, listings: list[ListingRecord],
                     rule: ApprovalRule | None) -> dict[str, str]:
    """SKU -> why a person must approve it before Publish (only the listings that need it)."""
    if rule is None:
        return {}
    found: dict[str, str] = {}
    for listing in listings:
        last = await book.last_listed(listing.sku) if rule.needs_history else None
        reason = approval_reason(listing, rule, last)
        if reason:
            found[listing.sku] = reason
    return found


def _check_parameters(site_url: str, max_concurrency: int, fan_out: str, *, max_steps: int, model: str | None) -> None:
    """Once, before any listing: a parameter every listing would fail on fails the batch instead."""
    if not isinstance(site_url, str) or not site_url.startswith(("http://", "https://")):
        raise ConfigError("site_url", f"{site_url!r} is not an http(s) URL")
    for name, value in (("max_concurrency", max_concurrency), ("max_steps", max_steps)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(name, f"must be a positive integer, got {value!r}")
    if fan_out not in ("none", "deployments"):
        raise ConfigError("fan_out", f"must be 'none' or 'deployments', got {fan_out!r}")
    if model is not None:
        check_model_name(model)


async def _check_password_secret(password_secret: str, totp_secret: str | None) -> None:
    """The Secret blocks (or ``env:VARIABLE``) must exist and hold a password, and a TOTP seed when
    one is named, before any listing."""
    from webtask_core.totp import TotpCodes
    from webtask_flows.listings.runs import PASSWORD_SECRET_NAME, TOTP_SECRET_NAME
    from webtask_flows.run_flow import load_secrets

    for parameter, name, source in (("password_secret", PASSWORD_SECRET_NAME, password_secret),
                                    ("totp_secret", TOTP_SECRET_NAME, totp_secret)):
        if source is None:
            continue
        try:
            values = await load_secrets({name: source})
            if name == TOTP_SECRET_NAME:
                TotpCodes(name, values[name])  # a base32 seed, or the error says what it is not
        except ConfigError as exc:
            raise ConfigError(parameter, exc.problem) from None


def _batch_labels() -> dict[str, str]:
    """What the batch's runs carry into their events: the batch's flow run (id, name) and attempt."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return {}
    return {"batch_flow_run_id": str(context.flow_run.id), "batch_name": context.flow_run.name,
            ATTEMPT_LABEL: str(context.flow_run.run_count)}


async def _crash_earlier_attempts_orphans() -> None:
    """A retried batch first marks Crashed what a killed earlier attempt left Running (its task runs,
    its in-process listings): no process does that work any more."""
    from prefect.client.orchestration import get_client

    context = FlowRunContext.get()
    if context is None or context.flow_run is None or context.flow_run.run_count <= 1:
        return
    async with get_client() as client:
        await crash_orphans(client, context.flow_run.id,
                            reason=f"left unfinished by attempt {context.flow_run.run_count - 1} of this batch, "
                                   "whose process died")


def _current_attempt_id() -> str:
    """The batch's flow run and attempt: a retried batch submits fresh deployment runs."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        raise ConfigError("batch_id", "not given and not called inside a flow run")
    return f"{context.flow_run.id}-{context.flow_run.run_count}"


async def _look_up_all(book: ListingLedger, jobs: list[ListingJob]) -> dict[str, ListingResult]:
    """SKU -> stored result of every listing the ledger already holds (a few lookups at a time)."""
    gate = asyncio.Semaphore(_PARALLEL_LOOKUPS)

    async def look_up(job: ListingJob) -> ListingResult | None:
        async with gate:
            try:
                return await book.lookup(job.listing)
            except LedgerRecordError as exc:  # costs a rerun; the task's SKU check prevents a duplicate
                get_run_logger().warning("Running %s again: %s", job.sku, exc)
                return None

    found = await asyncio.gather(*(look_up(job) for job in jobs))
    return {job.sku: result for job, result in zip(jobs, found) if result is not None}


async def _remember(book: ListingLedger, job: ListingJob, result: ListingResult) -> None:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        await book.record(job.listing, result)
    except (OSError, ValueError, BotoCoreError, ClientError) as exc:
        # Not fatal: a rerun runs this listing again and its SKU check finds what was published.
        get_run_logger().warning("Could not record %s in the ledger at %s: %s", job.sku, book.location, exc)


def _invalid_results(batch: BatchInput) -> list[ListingResult]:
    """One result per invalid row, naming all of its problems."""
    by_row: dict[int, list[str]] = {}
    for problem in batch.problems:
        by_row.setdefault(problem.row, []).append(str(problem))
    return [ListingResult(sku=f"row-{row}", status="invalid", feedback="; ".join(found))
            for row, found in sorted(by_row.items())]


def _final_state(ordered: list[ListingResult], total: int, *, invalid: int) -> Any:
    skipped_rows = f"; {invalid} invalid manifest row(s) skipped" if invalid else ""
    failed = [result.sku for result in ordered if result.failed]
    if failed:
        message = f"{len(failed)} of {total} listing(s) failed: {', '.join(failed)}{skipped_rows}"
        return Failed(message=message, data=BatchFailed(message, ordered))
    return Completed(message=summary_line(ordered[:total], total) + skipped_rows, data=ordered)
