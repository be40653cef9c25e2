"""The batch's shared site login: log in once, then every listing starts with those cookies.

Before the listings run, the batch looks at the stored login for its site and account (a session
key derived from both, in the session store: ``WEBTASK_SESSION_STORE``, a folder or an ``s3://``
prefix that fan-out workers must share). When it is usable — saved less than
``login_max_age_minutes`` ago by a login task that completed, with unexpired cookies for the site —
nothing happens. Otherwise the stale document is removed and one ``run-webtask`` run named "login"
(the ``flows/listings/prompts/login_task.yaml`` task, with the key as its ``session_key``) logs in and saves the
storage state. Each listing gets ``login_session_key``: its browser context starts from that
storage state, read only, so listings never wait for one another. In the batch's process the
listings start while the login runs (``webtask_flows.run_signals.announce_session``) and wait for it only just before
opening their browser context; fanned out, they are submitted once it completed. A listing that
finds itself logged out anyway (a cookie the site revoked) logs in itself: its task says "log in if
needed".

A login that fails does not stop the batch: it logs a warning and the listings log in themselves.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.resources
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from webtask_core.errors import ConfigError, SessionFormatError
from webtask_core.record import WorkerStatus
from webtask_core.storage import SavedSession
from webtask_flows.listings.records import load_task_template
from webtask_flows.run_signals import SubflowStarts

__all__ = [
    "LoginPlan",
    "plan_login",
    "login_session_key_for",
    "render_login_task",
    "stored_login_problem",
    "start_shared_login",
    "LOGIN_RUN_NAME",
    "LOGIN_MAX_STEPS",
]

LOGIN_RUN_NAME = "login"
LOGIN_MAX_STEPS = 10  # at most: a log-in takes two or three steps
_LOGIN_TEMPLATE = "login_task.yaml"


class LoginPlan(BaseModel):
    """The login run's ``run-webtask`` parameters and the session key it saves under."""

    session_key: str
    parameters: dict[str, Any]
    max_age_minutes: float


def plan_login(
    *,
    site_url: str,
    username: str,
    password_secret: str,
    template: str | None,
    max_steps: int,
    model: str | None,
    allowed_domains: list[str] | None,
    max_age_minutes: float,
    totp_secret: str | None = None,
) -> LoginPlan:
    """Render the log-in task up front (a template error fails the batch before any run)."""
    from webtask_flows.listings.runs import PASSWORD_PLACEHOLDER, TOTP_PLACEHOLDER, run_secrets, site_domains

    if isinstance(max_age_minutes, bool) or not isinstance(max_age_minutes, (int, float)) or max_age_minutes < 0:
        raise ConfigError("login_max_age_minutes", f"must be a number >= 0, got {max_age_minutes!r}")
    parameters = {
        "task": render_login_task(site_url, username, PASSWORD_PLACEHOLDER, template,
                                  totp=TOTP_PLACEHOLDER if totp_secret else None),
        "start_url": site_url,
        "max_steps": min(max_steps, LOGIN_MAX_STEPS),
        "model": model,
        "allowed_domains": site_domains(site_url, allowed_domains),
        "secrets": run_secrets(password_secret, totp_secret),
    }
    return LoginPlan(session_key=login_session_key_for(site_url, username), parameters=parameters,
                     max_age_minutes=float(max_age_minutes))


def login_session_key_for(site_url: str, username: str) -> str:
    """``login-<host>-<hash of origin and user>``: one stored login per site and account."""
    parts = urlsplit(site_url.strip())
    origin = f"{parts.scheme}://{parts.netloc}".lower()
    host = re.sub(r"[^a-z0-9]+", "-", parts.netloc.lower()).strip("-")[:40] or "site"
    digest = hashlib.sha256(f"{origin}\n{username}".encode()).hexdigest()[:10]
    return f"login-{host}-{digest}"


def render_login_task(site_url: str, username: str, password: str, template: str | None = None, *,
                      totp: str | None = None) -> str:
    """The log-in task: the packaged ``login_task.yaml``, or ``template`` (a path or Jinja2 text);
    ``totp``: the placeholder of the account's authenticator code (the data's ``totp`` key)."""
    import jinja2

    if template is None:
        template = importlib.resources.files("webtask_flows.listings").joinpath("prompts", _LOGIN_TEMPLATE).read_text()
    try:
        compiled = load_task_template(template)
    except ConfigError as exc:
        raise ConfigError("login_task_template", exc.problem) from None
    data = {"username": username, "password": password, "site_url": site_url}
    if totp:
        data["totp"] = totp
    try:
        return compiled.render(login_json=json.dumps(data, indent=2), **{"totp": None, **data}).strip()
    except jinja2.UndefinedError as error:
        raise ConfigError("login_task_template", f"uses an unknown variable: {error}") from error


def _cookie_matches(cookie: dict[str, Any], host: str) -> bool:
    domain = str(cookie.get("domain", "")).lstrip(".").lower()
    return bool(domain) and (host == domain or host.endswith("." + domain))


def stored_login_problem(stored: SavedSession | None, *, site_url: str, max_age: timedelta,
                         now: datetime | None = None) -> str | None:
    """Why the stored login cannot be reused (None: it can). Judged from the document alone; the
    site may still have revoked the cookies, which the listings' "log in if needed" covers."""
    if stored is None:
        return "no stored login"
    now = now or datetime.now(UTC)
    age = now - stored.saved_at
    if age > max_age:
        return f"the stored login is {age.total_seconds() / 60:.0f} minutes old"
    try:
        status = stored.worker_session().status
    except SessionFormatError as exc:
        return f"the stored login is unreadable: {exc}"
    if status != WorkerStatus.completed:
        return f"the last login task ended {status.value}"
    host = (urlsplit(site_url).hostname or "").lower()
    cookies = [c for c in (stored.storage_state or {}).get("cookies", []) if isinstance(c, dict)]
    mine = [c for c in cookies if _cookie_matches(c, host)]
    if not mine:
        return f"the stored login holds no cookie for {host}"
    expired = [c.get("name", "?") for c in mine if isinstance(c.get("expires"), (int, float))
               and 0 < c["expires"] <= now.timestamp()]
    if expired:
        return f"cookie(s) {', '.join(map(str, expired))} expired"
    return None


async def start_shared_login(plan: LoginPlan, *, fan_out: str, deployment: str, batch_id: str,
                             starts: SubflowStarts | None = None,
                             labels: dict[str, str] | None = None) -> asyncio.Future[str | None]:
    """Make sure a usable login will be stored under ``plan.session_key``.

    Reads the stored login first (a session store that cannot be read fails the batch here, before
    any run). Returns a future of the key — done at once when the stored login is reused, else the
    running login task's — which gives None when the login did not complete (the listings then log
    in themselves).
    """
    from prefect import get_run_logger

    from webtask_flows.session_store import get_session_store, load_session

    logger = get_run_logger()
    store = await get_session_store()
    key = plan.session_key
    problem: str | None
    try:
        stored = await load_session(key, store=store)
    except SessionFormatError as exc:
        stored, problem = None, f"the stored login is unreadable: {exc}"
    else:
        problem = stored_login_problem(stored, site_url=plan.parameters["start_url"],
                                       max_age=timedelta(minutes=plan.max_age_minutes))
    if problem is None and stored is not None:  # (no stored login is a problem too)
        logger.info("Reusing the stored login %r (saved %s)", key, stored.saved_at.isoformat())
        done: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        done.set_result(key)
        return done
    logger.info("Logging in once for the batch: %s", problem)
    # A fresh login task, not one continuing the last login's conversation (that would grow nightly).
    await asyncio.to_thread(store.delete, key)
    plan = plan.model_copy(update={"parameters": {**plan.parameters, "labels": {**(labels or {}), "name": "login"}}})
    return asyncio.ensure_future(_log_in(plan, fan_out=fan_out, deployment=deployment, batch_id=batch_id,
                                         starts=starts))


async def _log_in(plan: LoginPlan, *, fan_out: str, deployment: str, batch_id: str,
                  starts: SubflowStarts | None) -> str | None:
    from prefect import get_run_logger

    logger = get_run_logger()
    try:
        outcome = await _run_login(plan, fan_out=fan_out, deployment=deployment, batch_id=batch_id, starts=starts)
    except Exception as exc:  # the listings can still log in themselves; the login run shows why in the UI
        logger.warning("The shared login failed (%s: %s); every listing logs in itself", type(exc).__name__, exc,
                       exc_info=exc)
        return None
    if not outcome.completed:
        logger.warning("The shared login ended %s (%s); every listing logs in itself", outcome.state_name,
                       outcome.message)
        return None
    return plan.session_key


class LoginOutcome(BaseModel):
    """How the login run ended (a plain value: the task it runs in must not return a State)."""

    completed: bool
    state_name: str
    message: str | None = None

    @classmethod
    def of(cls, state: Any) -> LoginOutcome:
        if state is None:
            return cls(completed=False, state_name="without a state")
        return cls(completed=state.is_completed(), state_name=state.name, message=state.message)


async def _run_login(plan: LoginPlan, *, fan_out: str, deployment: str, batch_id: str,
                     starts: SubflowStarts | None) -> LoginOutcome:
    from webtask_flows.subflows import run_in_own_task

    parameters = {**plan.parameters, "session_key": plan.session_key}
    if fan_out == "deployments":
        from prefect.deployments import arun_deployment

        async def on_pool() -> LoginOutcome:
            flow_run = await arun_deployment(
                deployment, parameters=parameters, flow_run_name=LOGIN_RUN_NAME,
                idempotency_key=f"{batch_id}-{LOGIN_RUN_NAME}", as_subflow=True, poll_interval=1,
                tags=["batch-listing-upload"],
            )
            return LoginOutcome.of(flow_run.state)

        return await run_in_own_task(LOGIN_RUN_NAME, LOGIN_RUN_NAME, on_pool)
    from webtask_flows.run_flow import run_webtask

    async def in_process() -> LoginOutcome:
        state = await run_webtask.with_options(flow_run_name=LOGIN_RUN_NAME)(**parameters, return_state=True)
        return LoginOutcome.of(state)

    def start() -> Any:
        return run_in_own_task(LOGIN_RUN_NAME, LOGIN_RUN_NAME, in_process)

    return await (starts.run(start) if starts is not None else start())
