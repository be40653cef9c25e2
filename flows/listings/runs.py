"""Running one listing of a batch: a ``run-webtask`` subflow in this process (its browser context in
the batch's shared Chromium), or a run of the ``run-webtask`` deployment on the work pool (fan-out).
Either way the outcome becomes a :class:`ListingResult`; nothing a single listing does can stop the
batch.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, ValidationError

from webtask_core.replay import script_key
from webtask_flows.listings.models import ListingOutput, ListingResult
from webtask_flows.listings.records import (
    ListingRecord,
    listing_fields,
    listing_readback,
    load_readback_options,
    load_task_template,
    photo_resource_names,
    render_listing_task,
    template_name,
)
from webtask_flows.run_signals import SubflowStarts
from webtask_flows.subflows import run_in_own_task

__all__ = ["ListingJob", "plan_jobs", "repair_job", "run_listing", "site_domains", "listing_script_key", "FanOut",
           "PASSWORD_PLACEHOLDER", "TOTP_PLACEHOLDER", "run_secrets", "REPAIR_TEMPLATE"]

FanOut = Literal["none", "deployments"]
# The name the task template's password placeholder uses: {{secret:shop_password}}.
PASSWORD_SECRET_NAME = "shop_password"
PASSWORD_PLACEHOLDER = "{{secret:" + PASSWORD_SECRET_NAME + "}}"
# The account's authenticator code (batch parameter totp_secret): {{totp:shop_2fa}}, the code of the moment.
TOTP_SECRET_NAME = "shop_2fa"
TOTP_PLACEHOLDER = "{{totp:" + TOTP_SECRET_NAME + "}}"
# What tells one listing from another on the site's pages (a search for it, its own page).
IDENTIFYING_FIELDS = ("sku", "title")
REPAIR_TEMPLATE = "repair_task.yaml"  # packaged: corrects a mismatched listing through its edit page


def listing_script_key(task_template: str | None, site_url: str, version: str) -> str:
    """One replay script per listing template, site host and version — never per listing."""
    return script_key(template_name(task_template), urlsplit(site_url).netloc, version)


class ListingJob(BaseModel):
    """One listing, ready to run: its task and the ``run-webtask`` parameters."""

    listing: ListingRecord
    content_hash: str
    parameters: dict[str, Any]
    fields: dict[str, Any] = Field(default_factory=dict)  # what the task was rendered from (listing_fields)

    @property
    def sku(self) -> str:
        return self.listing.sku


def run_secrets(password_secret: str, totp_secret: str | None) -> dict[str, str]:
    """A run's ``secrets``: the password, and the authenticator's seed when the account has one."""
    secrets = {PASSWORD_SECRET_NAME: password_secret}
    if totp_secret:
        secrets[TOTP_SECRET_NAME] = f"totp:{totp_secret}"
    return secrets


def site_domains(site_url: str, allowed_domains: list[str] | None) -> list[str]:
    """Where the batch's browsers may go: ``allowed_domains``, else the site's own host."""
    return allowed_domains if allowed_domains is not None else [urlsplit(site_url).netloc]


def plan_jobs(
    listings: list[ListingRecord],
    *,
    site_url: str,
    username: str,
    password_secret: str,
    task_template: str | None,
    max_steps: int,
    model: str | None,
    allowed_domains: list[str] | None,
    replay_key: str | None = None,
    approvals: dict[str, str] | None = None,
    human: dict[str, Any] | None = None,
    verify: str = "always",
    totp_secret: str | None = None,
) -> list[ListingJob]:
    """Render every listing's task up front, so a template error fails the batch before any run.

    ``replay_key``: every listing replays (or records) the script under this key, with its own
    fields as the replay's parameters (a SKU and title tell one listing from another).
    ``approvals``: SKU -> why a person approves it before Publish (its task says so; it never replays).
    ``human``: each run's ``human`` parameter (how it waits for a person). ``verify``: when each
    run reads its listing back (its fields, and the template's ``readback`` options).
    ``totp_secret``: the Secret block with the account's TOTP seed (its code typed as ``{{totp:shop_2fa}}``)."""
    template = load_task_template(task_template)
    checking = load_readback_options(task_template)
    domains = site_domains(site_url, allowed_domains)
    totp = TOTP_PLACEHOLDER if totp_secret else None
    jobs = []
    for listing in listings:
        resources = photo_resource_names(listing)
        approval = (approvals or {}).get(listing.sku)
        task = render_listing_task(
            template, listing, photo_names=list(resources), site_url=site_url,
            username=username, password=PASSWORD_PLACEHOLDER, approval=approval, totp=totp,
        )
        parameters = {
            "task": task,
            "start_url": site_url,
            "resources": resources,
            "max_steps": max_steps,
            "output_schema": ListingOutput.model_json_schema(),
            "model": model,
            "allowed_domains": domains,
            "secrets": run_secrets(password_secret, totp_secret),
        }
        if human is not None:  # only then: a deployment made before the parameter existed still works
            parameters["human"] = human
        if verify != "off":  # likewise
            parameters["readback"] = listing_readback(listing, list(resources), checking).model_dump(exclude_defaults=True)
            parameters["verify"] = verify
        fields = listing_fields(listing, photo_names=list(resources), site_url=site_url,
                                username=username, password=PASSWORD_PLACEHOLDER, totp=totp)
        if replay_key is not None and approval is None:  # a replay would publish without asking
            parameters["replay"] = {"key": replay_key, "params": fields, "identifying": list(IDENTIFYING_FIELDS)}
        jobs.append(ListingJob(listing=listing, content_hash=listing.content_hash(), parameters=parameters,
                               fields=fields))
    return jobs


def repair_job(job: ListingJob, stored: ListingResult) -> ListingJob:
    """The job that corrects a listing the ledger holds as published with a mismatch: the packaged
    repair task (the listing's edit page), never a replay; read back as any listing is."""
    from importlib.resources import files

    template = load_task_template(files("webtask_flows.listings").joinpath("prompts", REPAIR_TEMPLATE).read_text())
    parameters = {key: value for key, value in job.parameters.items() if key != "replay"}
    data = {key: value for key, value in job.fields.items() if key != "site_url"}
    data["repair"] = {"listing_url": stored.listing_url or "", "fields": stored.mismatched_fields or ["(unknown)"]}
    parameters["task"] = template.render(listing=data, listing_json=json.dumps(data, indent=2, ensure_ascii=False),
                                         site_url=job.fields["site_url"], username=data["username"],
                                         password=data["password"]).strip()
    return job.model_copy(update={"parameters": parameters})


async def run_listing(job: ListingJob, *, fan_out: FanOut, deployment: str, batch_id: str,
                      login_session_key: str | None = None, starts: SubflowStarts | None = None,
                      labels: dict[str, str] | None = None) -> ListingResult:
    """Run one listing to its end and describe the outcome; errors of the run become results.

    ``login_session_key``: the batch's shared login, whose cookies the listing's browser starts with.
    ``starts``: in-process subflow runs are started one at a time through it.
    ``labels``: the batch's labels (its flow run); the listing's SKU is added.
    A listing that ends in error without its run having said so (it crashed, never started, or
    reported another SKU) emits ``webtask.task.error`` here.
    """
    from prefect import get_run_logger

    logger = get_run_logger()
    parameters = dict(job.parameters)
    if login_session_key:  # only then: a deployment made before the parameter existed still works
        parameters["login_session_key"] = login_session_key
    parameters["labels"] = {**(labels or {}), "sku": job.sku}
    key, name = f"{job.sku}-{job.content_hash[:12]}", f"listing {job.sku}"
    try:
        if fan_out == "deployments":
            return await run_in_own_task(key, name, lambda: _deployment_result(
                job, parameters, deployment=deployment, batch_id=batch_id))

        def start() -> Awaitable[ListingResult]:
            return run_in_own_task(key, name, lambda: _subflow_result(job, parameters))

        return await (starts.run(start) if starts is not None else start())
    except Exception as exc:  # one listing's failure is its own result; the batch goes on
        logger.error("Listing %s failed: %s: %s", job.sku, type(exc).__name__, exc, exc_info=exc)
        return _unreported_error(job, parameters, f"{type(exc).__name__}: {exc}", run_id=None)


async def _subflow_result(job: ListingJob, parameters: dict[str, Any]) -> ListingResult:
    from webtask_flows.run_flow import run_webtask

    state = await run_webtask.with_options(flow_run_name=job.sku)(**parameters, return_state=True)
    return await _result_from_state(job, state, _run_id(state), parameters)


async def _deployment_result(job: ListingJob, parameters: dict[str, Any], *, deployment: str,
                             batch_id: str) -> ListingResult:
    from prefect.deployments import arun_deployment

    flow_run = await arun_deployment(
        deployment,
        parameters=parameters,
        flow_run_name=job.sku,
        # The same batch attempt never submits a listing twice, even if the request is retried.
        idempotency_key=f"{batch_id}-{job.sku}-{job.content_hash}",
        as_subflow=True,
        poll_interval=1,
        tags=["batch-listing-upload"],
    )
    return await _result_from_state(job, flow_run.state, str(flow_run.id), parameters)


def _run_id(state: Any) -> str | None:
    run_id = getattr(state.state_details, "flow_run_id", None) if state is not None else None
    return str(run_id) if run_id else None


async def _result_from_state(job: ListingJob, state: Any, run_id: str | None,
                             parameters: dict[str, Any]) -> ListingResult:
    from webtask_flows.run_result import webtask_result

    if state is None or not state.is_final() or state.is_crashed() or state.is_cancelled():
        name = state.name if state is not None else "no state"
        message = f": {state.message}" if state is not None and state.message else ""
        return _unreported_error(job, parameters, f"the run ended {name}{message}", run_id=run_id)
    try:
        outcome = await webtask_result(state)  # raises the run's own error when it broke
    except Exception as exc:  # bad input, a missing S3 object, the model API down: the run emitted it
        return ListingResult(sku=job.sku, status="error", feedback=f"{type(exc).__name__}: {exc}",
                             flow_run_id=run_id, content_hash=job.content_hash)
    result = ListingResult(
        sku=job.sku, status=outcome.status.value, feedback=outcome.feedback, steps=outcome.steps,
        tokens=outcome.tokens, usage=outcome.usage, flow_run_id=outcome.flow_run_id or run_id,
        content_hash=job.content_hash, model_calls=outcome.model_calls, replayed_steps=outcome.replayed_steps,
        replay=outcome.replay, cost_usd=outcome.cost_usd, saved_by_replay_usd=outcome.saved_by_replay_usd,
        readback=outcome.readback.status if outcome.readback else "",
        mismatched_fields=[check.field for check in outcome.readback.mismatches] if outcome.readback else [],
    )
    if result.status == "mismatch":  # published: where it is, for the ledger and the summary
        reported = outcome.output.get("listing_url") if isinstance(outcome.output, dict) else None
        return result.model_copy(update={"listing_url": (outcome.readback.url if outcome.readback else None)
                                         or reported})
    if result.status != "completed":
        return result
    try:
        output = ListingOutput.model_validate(outcome.output)
    except ValidationError as exc:
        return _unreported_error(job, parameters, f"the task completed without a listing URL: {exc}",
                                 run_id=result.flow_run_id, like=result)
    if output.sku.strip().casefold() != job.sku.casefold():
        return _unreported_error(
            job, parameters, f"the task reported SKU {output.sku!r}, not {job.sku!r}: {outcome.feedback}",
            run_id=result.flow_run_id, like=result.model_copy(update={"listing_url": output.listing_url}))
    return result.model_copy(update={"listing_url": output.listing_url})


def _unreported_error(job: ListingJob, parameters: dict[str, Any], feedback: str, *, run_id: str | None,
                      like: ListingResult | None = None) -> ListingResult:
    """An error result for a listing whose run did not report it, and its ``webtask.task.error`` event."""
    from webtask_flows.events import emit_task_event

    emit_task_event("error", task=parameters["task"], reason=feedback, flow_run_id=run_id,
                    max_steps=parameters.get("max_steps"), labels=parameters.get("labels"),
                    steps_used=like.steps if like is not None else None)
    if like is not None:
        return like.model_copy(update={"status": "error", "feedback": feedback})
    return ListingResult(sku=job.sku, status="error", feedback=feedback, flow_run_id=run_id,
                         content_hash=job.content_hash)
