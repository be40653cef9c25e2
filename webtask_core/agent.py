"""The user-facing Agent: a browser, a worker, resources, and (optionally) a persisted conversation.

    async with Agent(llm, start_url="https://shop.example") as agent:
        agent.add_resource("listing_image_1", "photos/1.jpg")
        result = await agent.do("List the item ...", output_schema=Listing)

``async with`` always closes what the agent opened (its own Browser when none was given, or the tab
it opened in a given Browser). A BrowserTab passed in stays the caller's to close. Each task is
a :class:`~webtask_core.task_run.TaskRun` in the agent's browser runtime (the same loop the Prefect
flow runs), plus the retry loop of :meth:`Agent.run_step`.

Hardening: ``secrets={"shop_password": ...}`` are typed where the model writes
``{{secret:shop_password}}`` and scrubbed from everything the model sees and the session records;
``allowed_domains=["shop.example.com"]`` keeps navigation (and secrets) on those hosts. Bad input is
rejected by the constructor and by ``do``/``set_task`` before any browser starts.

``human=handler`` answers the model's ``ask_human`` questions (a log-in code, a CAPTCHA, an approval;
see webtask_core/human.py); without one the model is told nobody can answer.

``tools=[lookup_price, ...]`` adds the caller's own tools (``@tool`` functions, see
webtask_core/tools/function.py) to the built-in ones in every task.

``do(..., readback=ReadBack(fields=item))`` reads the listing back from the site after the task
completed (webtask_core/readback): ``result.readback`` says what the page shows, and a listing the
site shows otherwise ends ``WorkerStatus.mismatch``; ``verify=`` says when ("always", "replayed",
"off").
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, ValidationError

from webtask_core.errors import ConfigError, TransientError
from webtask_core.hosts import HostPatterns
from webtask_core.human import HumanHandler
from webtask_core.llm.types import LLM, Usage
from webtask_core.progress import Phase, ProgressCallback
from webtask_core.readback import ReadBack, ReadbackResult, VerifyMode, check_verify
from webtask_core.record import Step, TaskRecord, WorkerStatus
from webtask_core.resources import Resource, ResourceSet
from webtask_core.secrets import SecretsInput, SecretValue
from webtask_core.task_context import TaskContext
from webtask_core.task_run import ReplayOutcome, TaskRun
from webtask_core.tools import OutputSchema, UserTools
from webtask_core.worker import Worker, WorkerOptions

if TYPE_CHECKING:
    from webtask_core.browser import Browser, BrowserConfig, BrowserTab
    from webtask_core.browser.runtime import BrowserRuntime
    from webtask_core.replay import Replay

__all__ = ["Agent", "AgentResult", "StepOutcome", "check_start_url"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]


class AgentResult(BaseModel):
    status: WorkerStatus
    output: Any = None  # an instance of the output schema's model class when one was given
    feedback: str = ""
    steps: int = 0
    usage: Usage = Field(default_factory=Usage)
    replayed_steps: int = 0  # steps a replay script decided (no model call)
    replay: ReplayOutcome = "none"  # with do(replay=...): replayed, repaired, recorded, or none
    replay_handovers: list[str] = Field(default_factory=list)  # where and why the model took over from replay
    readback: ReadbackResult | None = None  # with do(readback=...): what the listing's page shows

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
        browser: Browser | BrowserTab | None = None,
        browser_config: BrowserConfig | None = None,
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
        human: HumanHandler | None = None,
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
        self._given: dict[str, Any] = {}
        if browser is not None:
            if hasattr(browser, "new_tab"):
                self._given = {"browser": browser}
            elif hasattr(browser, "observe"):
                if self.allowed_domains:
                    raise ConfigError(
                        "allowed_domains",
                        "a BrowserTab passed in keeps its own rules: give allowed_domains to "
                        "browser.new_tab(), or pass the Browser instead",
                    )
                self._given = {"tab": browser}
            else:
                raise ConfigError("browser", f"expected a Browser or a BrowserTab, got {type(browser).__name__}")
        self._runtime = self._new_runtime()
        self._resources = ResourceSet(resources)
        # The tab can be replaced between steps (a crash, a stuck page): the worker asks for it each step.
        self.worker = Worker(llm, lambda: self._runtime.current_tab(),
                             options=_with_secrets(options, secrets, self.allowed_domains), progress=progress,
                             tools=tools, human=human)
        self.last_session: TaskRecord | None = None
        self.last_result: AgentResult | None = None
        self.task_context: TaskContext | None = None
        self._run: TaskRun | None = None
        self._finalised = False

    def _new_runtime(self) -> BrowserRuntime:
        from webtask_core.browser.runtime import BrowserRuntime

        return BrowserRuntime(self._browser_config, allowed_domains=list(self.allowed_domains) or None,
                              block_requests=self.block_requests, **self._given)

    # ---- browser lifecycle ----

    async def __aenter__(self) -> Agent:
        await self._runtime.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the tab and browser this agent opened (never ones the caller passed in); the agent
        starts afresh (no cookies kept) if it is used again."""
        runtime, self._runtime = self._runtime, self._new_runtime()
        await runtime.close()

    @property
    def relaunches(self) -> int:
        """How often the agent's tab was reopened (after a crash or a stuck page)."""
        return self._runtime.relaunches

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
        replay: Replay | None = None,
        readback: ReadBack | None = None,
        verify: VerifyMode = "always",
    ) -> AgentResult:
        """Run a task to its end; with persist_context it continues the last task's conversation.

        A step that fails for an infrastructure reason is retried as ``run_step(retry=True)`` says.
        ``replay``: replay the script recorded under its key (zero model calls where the site still
        matches), and record one when there is none (see webtask_core.replay).
        ``readback``: the listing the task makes; once it completed, its page is read back and a
        listing shown otherwise ends it ``mismatch`` (``verify``: "always", "replayed" for runs with a
        replay script only, or "off"; see webtask_core.readback).
        """
        self.set_task(task, max_steps=max_steps, resources=resources, output_schema=output_schema, replay=replay,
                      readback=readback, verify=verify)
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
        replay: Replay | None = None,
        readback: ReadBack | None = None,
        verify: VerifyMode = "always",
    ) -> TaskContext:
        """Start a task for step-by-step use with :meth:`run_step` (replaces an unfinished one)."""
        check_verify(verify)
        if readback is not None:
            readback.validated()  # a bad read-back fails here, before the task starts
        previous = self.last_session if self.persist_context else None
        self.task_context = self.worker.start(
            task,
            resources=self._resources.merged(ResourceSet(resources)),
            output_schema=output_schema,
            max_steps=max_steps,
            previous_session=previous,
        )
        # A task continuing the last one's conversation stays on its page.
        start_url = self.start_url if previous is None else None
        self._run = TaskRun(self.worker, self.task_context, self._runtime, start_url=start_url, replay=replay,
                            readback=readback, verify=verify)
        self._finalised = False
        return self.task_context

    async def run_step(self, *, retry: bool = False) -> StepOutcome:
        """One step of the current task; when it ends, ``last_session`` / ``last_result`` are set.

        A TransientError leaves the task as it was: call run_step() again to retry the step (the
        TaskRun reopens what failed). With ``retry`` the agent does that itself: a step that fails
        for an infrastructure reason (model overloaded, rate limited or timing out; the browser
        crashed) is retried up to ``step_retries`` times with backoff; after that the
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
                await asyncio.sleep(delay)

    async def _run_step(self) -> StepOutcome:
        run, ctx = self._run, self.task_context
        if run is None or ctx is None:
            raise RuntimeError("no task: call set_task() first")
        if ctx.finished and self._finalised:
            raise RuntimeError("the task is finished; call set_task() for another")
        if run.runtime is not self._runtime:  # the agent was closed and used again: a fresh tab
            run.runtime = self._runtime
        step = await run.step() if not ctx.finished else ctx.steps[-1]
        if ctx.finished:
            await self._finalise(run)
        return StepOutcome(step, ctx.finished)

    async def _finalise(self, run: TaskRun) -> None:
        session_record = await run.finish()
        self.last_session = session_record
        self.last_result = AgentResult(
            status=session_record.status,
            output=run.ctx.output_spec.to_user(session_record.output),
            feedback=session_record.feedback,
            steps=session_record.steps_used,
            usage=session_record.usage,
            replayed_steps=run.replayed_steps,
            replay=run.replay_outcome,
            replay_handovers=[run.worker.secrets.scrub(reason) for reason in run.replay_handovers],
            readback=run.readback_result,
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
