"""The user-facing Agent: a browser, a worker, resources, and (optionally) a persisted conversation.

    async with Agent(llm, start_url="https://shop.example") as agent:
        agent.add_resource("listing_image_1", "photos/1.jpg")
        result = await agent.do("List the item ...", output_schema=Listing)

``async with`` always closes what the agent opened (its own Browser when none was given, or the tab
it opened in a given Browser). A BrowserSession passed in stays the caller's to close.

Hardening: ``secrets={"shop_password": ...}`` are typed where the model writes
``{{secret:shop_password}}`` and scrubbed from everything the model sees and the session records;
``allowed_domains=["shop.example.com"]`` keeps navigation (and secrets) on those hosts. Bad input is
rejected by the constructor and by ``do``/``set_task`` before any browser starts.

``tools=[lookup_price, ...]`` adds the caller's own tools (``@tool`` functions, see
webtask_core/tools/function.py) to the built-in ones in every task.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, ValidationError

from webtask_core.errors import ActionError, ConfigError, ModelTransientError, TransientError
from webtask_core.hosts import HostPatterns
from webtask_core.llm.types import LLM, Usage
from webtask_core.progress import Phase, ProgressCallback
from webtask_core.resources import Resource, ResourceSet
from webtask_core.secrets import SecretsInput, SecretValue
from webtask_core.session import Step, WorkerSession, WorkerStatus
from webtask_core.task_context import TaskContext
from webtask_core.tools import OutputSchema, UserTools
from webtask_core.worker import Worker, WorkerOptions

if TYPE_CHECKING:
    from webtask_core.browser import Browser, BrowserConfig, BrowserSession

__all__ = ["Agent", "AgentResult", "StepOutcome", "check_start_url"]

logger = logging.getLogger(__name__)

_SNAPSHOT_TIMEOUT_S = 3.0

PathLike = str | os.PathLike[str]


class AgentResult(BaseModel):
    status: WorkerStatus
    output: Any = None  # an instance of the output schema's model class when one was given
    feedback: str = ""
    steps: int = 0
    usage: Usage = Field(default_factory=Usage)

    @property
    def ok(self) -> bool:
        return self.status is WorkerStatus.completed


class StepOutcome(NamedTuple):
    step: Step
    finished: bool


class Agent:
    def __init__(
        self,
        llm: LLM,
        *,
        browser: "Browser | BrowserSession | None" = None,
        browser_config: "BrowserConfig | None" = None,
        persist_context: bool = False,
        resources: Mapping[str, PathLike] | None = None,
        start_url: str | None = None,
        options: WorkerOptions | None = None,
        secrets: SecretsInput | None = None,
        allowed_domains: Sequence[str] | None = None,
        block_requests: bool = False,
        step_retries: int = 2,
        retry_delay_s: float = 0.5,
        progress: ProgressCallback | None = None,
        tools: UserTools | None = None,
    ):
        if isinstance(step_retries, bool) or not isinstance(step_retries, int) or step_retries < 0:
            raise ConfigError("step_retries", f"must be an integer >= 0, got {step_retries!r}")
        if not isinstance(retry_delay_s, int | float) or not 0 <= retry_delay_s <= 60:
            raise ConfigError("retry_delay_s", f"must be between 0 and 60 seconds, got {retry_delay_s!r}")
        self.step_retries = step_retries
        self.retry_delay_s = float(retry_delay_s)
        if browser is not None and browser_config is not None:
            raise ConfigError("browser_config", "give either browser= or browser_config=, not both")
        self.allowed_domains = HostPatterns(allowed_domains)
        if block_requests and not self.allowed_domains:
            raise ConfigError("block_requests", "needs allowed_domains to say which hosts requests may reach")
        self.block_requests = bool(block_requests)
        self.llm = llm
        self.persist_context = persist_context
        self.start_url = check_start_url(start_url, self.allowed_domains)
        self._browser_config = browser_config
        self._browser: Browser | None = None
        self._session: BrowserSession | None = None
        self._owns_browser = self._owns_session = False
        if browser is not None:
            if hasattr(browser, "new_session"):
                self._browser = browser  # type: ignore[assignment]
            elif hasattr(browser, "observe"):
                if self.allowed_domains:
                    raise ConfigError(
                        "allowed_domains",
                        "a BrowserSession passed in keeps its own rules: give allowed_domains to "
                        "browser.new_session(), or pass the Browser instead",
                    )
                self._session = browser  # type: ignore[assignment]
            else:
                raise ConfigError("browser", f"expected a Browser or a BrowserSession, got {type(browser).__name__}")
        self._resources = ResourceSet(resources)
        self.worker = Worker(llm, self._current_session, options=_with_secrets(options, secrets, self.allowed_domains),
                             progress=progress, tools=tools)
        self.last_session: WorkerSession | None = None
        self.last_result: AgentResult | None = None
        self.task_context: TaskContext | None = None
        self._visit_start_url = False
        self._finalised = False
        # Where a relaunched browser resumes: cookies / local storage and URL after the last step.
        self._storage_snapshot: dict[str, Any] | None = None
        self._url_snapshot = ""
        self.relaunches = 0
        self._fresh_tab_needed = False  # the page failed (stuck, crashed): retry in a new tab
        self._resume_blank = False  # ... on a blank page, when the last URL itself keeps failing

    # ---- browser lifecycle ----

    async def __aenter__(self) -> "Agent":
        await self._ensure_session()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the tab and browser this agent opened (never ones the caller passed in)."""
        session = self._session if self._owns_session else None
        browser = self._browser if self._owns_browser else None
        if self._owns_session:
            self._session = None
        if self._owns_browser:
            self._browser = None
        self._owns_session = self._owns_browser = False
        try:
            if session is not None:
                await session.close()
        finally:
            if browser is not None:
                await browser.close()

    def _current_session(self) -> "BrowserSession":
        if self._session is None:
            raise RuntimeError("the agent has no browser session yet (use `async with Agent(...)` or do())")
        return self._session

    async def _ensure_session(self) -> "BrowserSession":
        if self._session is not None:
            if self._owns_session and (self._fresh_tab_needed or not self._session.is_alive):
                await self._relaunch()  # ours died or got stuck (a crash, a killed process): start again
            return self._session  # type: ignore[return-value]
        await self._open_session()
        return self._session  # type: ignore[return-value]

    async def _open_session(self, storage_state: dict[str, Any] | None = None) -> None:
        if self._browser is None:
            from webtask_core.browser import Browser, BrowserConfig

            self._browser = await Browser.launch(self._browser_config or BrowserConfig())
            self._owns_browser = True
        self._session = await self._browser.new_session(
            storage_state=storage_state,
            allowed_domains=list(self.allowed_domains) or None,
            block_requests=self.block_requests,
        )
        self._owns_session = True

    async def _relaunch(self) -> None:
        """A fresh tab (and Chromium, when ours died) with the last step's cookies, at its URL."""
        dead, self._session, self._owns_session = self._session, None, False
        assert dead is not None
        # A tab that is alive but stuck (a script spinning) is stuck on its URL: do not go back there.
        stuck_url = dead.url if dead.is_alive else None
        await dead.close()  # safe after a crash
        if self._owns_browser and self._browser is not None and not self._browser.is_alive:
            browser, self._browser, self._owns_browser = self._browser, None, False
            await browser.close()  # removes what the dead Chromium left behind
        await self._open_session(storage_state=self._storage_snapshot)
        self.relaunches += 1
        ctx = self.task_context
        url = self._url_snapshot or (ctx.current_url if ctx is not None else "")
        resume_blank, self._resume_blank, self._fresh_tab_needed = self._resume_blank, False, False
        if resume_blank or url == stuck_url:
            logger.warning("the page kept failing; the retried step starts on a blank page")
        elif url and url != "about:blank" and not self._visit_start_url:
            try:
                await self._session.navigate(url)  # type: ignore[union-attr]
            except ActionError as error:  # the page is gone now: the model sees where the tab is
                logger.warning("after relaunching the browser, %s could not be opened again: %s", url, error)

    async def _snapshot(self, session: "BrowserSession") -> None:
        """Remember cookies, local storage and the URL, so a relaunch can resume (our session only)."""
        if not self._owns_session:
            return
        try:
            # Bounded: reading local storage waits on the page, which may be stuck in a script.
            self._storage_snapshot = await asyncio.wait_for(session.storage_state(), timeout=_SNAPSHOT_TIMEOUT_S)
            self._url_snapshot = session.url
        except (TransientError, TimeoutError) as error:  # the next step relaunches if it must
            logger.warning("could not save the browser state after the step: %s", error or "timed out")

    # ---- resources (agent-scoped; a task's own resources win on a name clash) ----

    def add_resource(self, name: str, path: PathLike) -> Resource:
        return self._resources.add(name, path)

    def set_resources(self, resources: Mapping[str, PathLike]) -> None:
        self._resources = ResourceSet(resources)  # validated in full before replacing

    def clear_resources(self) -> None:
        self._resources.clear()

    def get_resource(self, name: str) -> Resource | None:
        return self._resources.get(name)

    @property
    def resources(self) -> list[str]:
        return self._resources.names()

    # ---- tasks ----

    async def do(
        self,
        task: str,
        max_steps: int = 20,
        resources: Mapping[str, PathLike] | None = None,
        output_schema: OutputSchema = None,
    ) -> AgentResult:
        """Run a task to its end; with persist_context it continues the last task's conversation.

        A step that fails for an infrastructure reason is retried as ``run_step(retry=True)`` says.
        """
        self.set_task(task, max_steps=max_steps, resources=resources, output_schema=output_schema)
        while not (await self.run_step(retry=True)).finished:
            pass
        assert self.last_result is not None
        return self.last_result

    def set_task(
        self,
        task: str,
        *,
        max_steps: int = 20,
        resources: Mapping[str, PathLike] | None = None,
        output_schema: OutputSchema = None,
    ) -> TaskContext:
        """Start a task for step-by-step use with :meth:`run_step` (replaces an unfinished one)."""
        previous = self.last_session if self.persist_context else None
        self.task_context = self.worker.start(
            task,
            resources=self._resources.merged(ResourceSet(resources)),
            output_schema=output_schema,
            max_steps=max_steps,
            previous_session=previous,
        )
        self._visit_start_url = self.start_url is not None and previous is None
        self._finalised = False
        return self.task_context

    async def run_step(self, *, retry: bool = False) -> StepOutcome:
        """One step of the current task; when it ends, ``last_session`` / ``last_result`` are set.

        A TransientError leaves the task as it was: call run_step() again to retry the step (or, if
        the step had ended the task and only the final capture failed, to finish it). With ``retry``
        the agent does that itself: a step that fails for an infrastructure reason (model
        overloaded, rate limited or timing out; the browser crashed) is retried up to
        ``step_retries`` times with backoff, relaunching a browser the agent owns; after that the
        TransientError is raised.
        """
        failures = 0
        while True:
            try:
                return await self._run_step()
            except TransientError as error:
                failures += 1
                if not retry or failures > self.step_retries:
                    raise
                delay = self.retry_delay_s * 2 ** (failures - 1)
                logger.warning("step failed (%s); retry %d of %d", error, failures, self.step_retries)
                if self.task_context is not None:
                    self.worker.report(self.task_context, Phase.retrying,
                                       f"{error}; retry {failures} of {self.step_retries} in {delay:g} s")
                if not isinstance(error, ModelTransientError):
                    # The page or the browser failed, not the model: retry in a fresh tab, at the last
                    # good URL first, then on a blank page (the URL itself may be what keeps failing).
                    self._fresh_tab_needed = True
                    self._resume_blank = failures > 1
                await asyncio.sleep(delay)

    async def _run_step(self) -> StepOutcome:
        ctx = self.task_context
        if ctx is None:
            raise RuntimeError("no task: call set_task() first")
        if ctx.finished and self._finalised:
            raise RuntimeError("the task is finished; call set_task() for another")
        session = await self._ensure_session()
        if not ctx.finished:
            if self._visit_start_url:
                try:
                    await session.navigate(self.start_url)  # type: ignore[arg-type]
                except ActionError as exc:
                    raise ConfigError("start_url", f"cannot open {self.start_url!r}: {exc}") from exc
                self._visit_start_url = False
            step = await self.worker.step(ctx)
            await self._snapshot(session)
        else:
            step = ctx.steps[-1]
        if ctx.finished:
            await self._finalise(ctx)
        return StepOutcome(step, ctx.finished)

    async def _finalise(self, ctx: TaskContext) -> None:
        session_record = await self.worker.finish(ctx)
        self.last_session = session_record
        self.last_result = AgentResult(
            status=session_record.status,
            output=ctx.output_spec.to_user(session_record.output),
            feedback=session_record.feedback,
            steps=session_record.steps_used,
            usage=session_record.usage,
        )
        self._finalised = True


def check_start_url(url: object, allowed: HostPatterns) -> str | None:
    """The start URL, trimmed, if it is an http(s) URL inside ``allowed`` (when given); else ConfigError.
    The flows call it too, to refuse a bad start_url before anything starts."""
    if url is None:
        return None
    if not isinstance(url, str) or not url.strip():
        raise ConfigError("start_url", f"must be a non-empty http(s) URL, got {url!r}")
    url = url.strip()
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ConfigError("start_url", f"{url!r} has an invalid port") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(char.isspace() for char in url):
        raise ConfigError("start_url", f"{url!r} is not an http(s) URL; give a full address like https://example.com/")
    if allowed and not allowed.matches(url):
        raise ConfigError("start_url", f"{url!r} is outside allowed_domains [{', '.join(allowed)}]")
    return url


def _with_secrets(options: WorkerOptions | None, secrets: SecretsInput | None, allowed: HostPatterns) -> WorkerOptions:
    """The worker options with the agent's secrets added (they win on a name clash) and, unless the
    options say otherwise, allowed_domains as the hosts where secrets may be typed."""
    options = options or WorkerOptions()
    if secrets is not None and not isinstance(secrets, Mapping):
        raise ConfigError("secrets", f"must be a mapping of name -> value, got {type(secrets).__name__}")
    update: dict[str, Any] = {}
    if secrets:
        wrapped: dict[str, SecretStr | SecretValue] = dict(options.secrets)
        for name, value in secrets.items():
            wrapped[name] = _as_secret(name, value)
        update["secrets"] = wrapped
    if allowed and options.secret_domains is None:
        update["secret_domains"] = list(allowed)
    return options.model_copy(update=update) if update else options


def _as_secret(name: object, value: object) -> SecretStr | SecretValue:
    """Kept as SecretStr / SecretValue, so no repr or log line of the options ever prints a value."""
    if isinstance(value, (SecretStr, SecretValue)):
        return value
    if isinstance(value, str):
        return SecretStr(value)
    if isinstance(value, Mapping):
        try:
            return SecretValue.model_validate(value)
        except ValidationError as error:
            raise ConfigError("secrets", f"{name!r}: {error.errors()[0]['msg']}") from None
    raise ConfigError("secrets", f"{name!r} must be a string, a SecretStr or a SecretValue, got {type(value).__name__}")
