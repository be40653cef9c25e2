"""The worker loop: start a task, run steps, finish. Holds no state between calls.

One step = observe the page, one model call, run the reply's tool calls in order, record everything.
:meth:`Worker.step` is what the Prefect layer wraps as a retryable task: it builds the step record
locally and commits it to the TaskContext only at its very end, so a step that raised a
TransientError can simply be called again (it observes the page afresh and never records twice).
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Callable, Mapping
from os import PathLike
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from webtask_core.errors import ActionError, ConfigError
from webtask_core.history import StuckThresholds, page_key
from webtask_core.human import HumanHandler
from webtask_core.images import shrink_jpeg
from webtask_core.llm.types import LLM, ModelReply, ToolCall, Usage
from webtask_core.progress import Phase, Progress, ProgressCallback, describe_call
from webtask_core.prompt_set import PromptSet
from webtask_core.record import Step, TaskRecord, ToolCallRecord, WorkerStatus
from webtask_core.resources import ResourceSet
from webtask_core.secrets import SecretValue, SecretValues
from webtask_core.step_outcome import action_records, elapsed_ms, reply_messages, step_timings
from webtask_core.task_context import TaskContext, TaskSnapshot
from webtask_core.tools import OutputSchema, OutputSpec, StepState, ToolContext, UserTools, user_tools
from webtask_core.tools.uncover import retry_uncovered

if TYPE_CHECKING:
    from webtask_core.browser import BrowserTab
    from webtask_core.browser.models import Observation

__all__ = ["Worker", "WorkerOptions", "SessionProvider", "Director", "Watcher"]

SessionProvider = Callable[[], "BrowserTab"]


class Watcher(Protocol):
    """Looks at the page between the calls of a step (replay's recorder, before a submit)."""

    async def before_call(self, call: ToolCall, observation: Observation, first: bool, tab: BrowserTab) -> str | None:
        """Called just before ``call`` runs (``first``: no call of this step ran before it); a note it
        returns says the call need not run (it is then done with that note, not run)."""

    async def after_call(self, call: ToolCall, message: str, tab: BrowserTab) -> str:
        """Called once ``call`` ran, with its message; returns it (an ActionError fails the call)."""


class Director(Protocol):
    """Decides a step instead of the model when it can (replay: webtask_core.replay.Replayer)."""

    def decide(self, observation: Observation) -> ModelReply | None:
        """The reply to act on for this page, or None to ask the model."""

    def take_note(self) -> str | None:
        """A line for the model at the next step it decides (why it decides it), or None."""

    def wants_another_look(self) -> bool:
        """After ``decide`` gave None: whether to let the page settle and decide once more (a page
        still building looks like another page)."""


# How long a director's second look waits for the page to settle (a widget still building).
ANOTHER_LOOK_WAIT_S = 2.0
# What typing a person's secret answer says after the run was suspended and resumed (Worker.resume).
FORGOTTEN_ANSWER = ("a person's secret answer given before this run was suspended; secret answers live only in "
                    "the memory of the run that received them and are stored nowhere, so it is gone. If you still "
                    "need it, ask the person again with ask_human.")


class WorkerOptions(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    prompts: PromptSet | str = "worker"  # a packaged set name, a YAML path, or a PromptSet
    screenshots: bool = True  # send the marked screenshot to the model and keep thumbnails
    screenshot_quality: int = Field(default=70, ge=10, le=95)
    # The model's screenshot at this fraction of the viewport's size (0.6: 768x480 for 1280x800),
    # rendered small by Chromium with labels drawn large enough to read. Every step pays for the
    # picture in uncacheable input tokens (width x height / 750), so it is no bigger than needed:
    # the element tree carries the text and ids, the picture the layout.
    screenshot_scale: float = Field(default=0.6, ge=0.25, le=1.0)
    thumbnail_width: int = Field(default=400, ge=64)
    stuck: StuckThresholds = Field(default_factory=StuckThresholds)
    # Values for {{secret:NAME}} placeholders in fill/type; the model never sees them, and every text
    # the worker records or sends is scrubbed of them (see webtask_core.secrets).
    secrets: dict[str, SecretStr | SecretValue] = Field(default_factory=dict)
    # Hosts where secrets without their own SecretValue.domains may be typed (None: anywhere). The
    # Agent sets it to its allowed_domains.
    secret_domains: list[str] | None = None


class Worker:
    """``Worker(llm, browser_session_or_provider, options, tools=[...])``; then ``do`` or start/step/finish.

    ``tools``: the caller's own tools (``@tool`` functions or Tool instances), offered with the
    built-in ones in every task; a bad one or a name clash is a ConfigError here."""

    def __init__(
        self,
        llm: LLM,
        browser: BrowserTab | SessionProvider,
        *,
        options: WorkerOptions | None = None,
        progress: ProgressCallback | None = None,
        tools: UserTools | None = None,
        human: HumanHandler | None = None,
    ):
        if human is not None and not callable(human):
            raise ConfigError("human", f"must be an async callable taking a HumanRequest, got {type(human).__name__}")
        self.human = human  # answers ask_human (webtask_core.human); None: nobody can
        self.tools = user_tools(tools)
        self.llm = llm
        self.progress = progress  # told what each step is doing as it happens (webtask_core.progress)
        # A provider lets the caller swap in a relaunched browser between (retried) steps.
        self._provider: SessionProvider = browser if callable(browser) else (lambda: browser)
        self.options = options or WorkerOptions()
        self.prompts = PromptSet.resolve(self.options.prompts)
        self.system = self.prompts.render("system")
        # Rendered up front: nothing that runs after a step's actions may fail on a bad template.
        self._notes = {key: self.prompts.render(key) for key in ("tool_call_required", "empty_reply")}
        self.secrets = SecretValues(self.options.secrets, domains=self.options.secret_domains)

    @property
    def tab(self) -> BrowserTab:
        return self._provider()

    # ---- the three parts ----

    def start(
        self,
        task: str,
        *,
        resources: ResourceSet | Mapping[str, str | PathLike[str]] | None = None,
        output_schema: OutputSchema = None,
        max_steps: int = 20,
        previous_session: TaskRecord | None = None,
    ) -> TaskContext:
        """A new TaskContext. Checks the caller's input; touches neither the browser nor the model."""
        if not isinstance(task, str) or not task.strip():
            raise ConfigError("task", "must be a non-empty string")
        task = self.secrets.scrub(task)  # a value pasted into the task reaches the model as its placeholder
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise ConfigError("max_steps", f"must be a positive integer, got {max_steps!r}")
        if previous_session is not None and not isinstance(previous_session, TaskRecord):
            raise ConfigError("previous_session", "must be a TaskRecord (or None)")
        if not isinstance(resources, ResourceSet):
            resources = ResourceSet(resources)
        return TaskContext(
            task.strip(),
            prompts=self.prompts,
            resources=resources,
            output_spec=OutputSpec(output_schema),
            max_steps=max_steps,
            previous_session=previous_session,
            thresholds=self.options.stuck,
            tools=self.tools,
        )

    def resume(self, ctx: TaskContext, snapshot: TaskSnapshot) -> None:
        """Go on with an unfinished task (``ctx`` from :meth:`start`, no step run) from its snapshot,
        taken in another process before its run was suspended. A person's secret answers from before
        are not in it — they are kept nowhere — so their placeholders now say so when typed."""
        ctx.resume(snapshot)
        for name in snapshot.secret_answers:
            self.secrets.forget(name, FORGOTTEN_ANSWER)

    async def step(self, ctx: TaskContext, *, director: Director | None = None,
                   watcher: Watcher | None = None) -> Step:
        """Observe, one model call, act, record. Raises TransientError with the context untouched.

        An exception leaving the step never shows a secret value (Playwright may quote typed text)."""
        try:
            return await self._step(ctx, director, watcher)
        except BaseException as error:
            redacted = self.secrets.redact_exception(error)
            if redacted is error:
                raise
        raise redacted  # outside the except block, so the original is not chained as its context

    async def _step(self, ctx: TaskContext, director: Director | None = None, watcher: Watcher | None = None) -> Step:
        if ctx.status is not None:  # ctx.finished, in a form the type checker follows
            raise RuntimeError(f"the task is already finished ({ctx.status.value})")
        started = time.perf_counter()
        index = ctx.next_index
        tab = self.tab
        self.report(ctx, Phase.observing)

        observation, mask_ids, unmaskable = self.secrets.scrub_observation(await tab.observe())
        ctx.last_observation, ctx.last_masks = observation, (mask_ids, unmaskable)
        # A scripted step (replay) needs neither the model nor a picture for it.
        scripted = director.decide(observation) if director is not None else None
        if scripted is None and director is not None and director.wants_another_look():
            await tab.wait_for_change(ANOTHER_LOOK_WAIT_S)  # until it changes and settles (bounded)
            observation, mask_ids, unmaskable = self.secrets.scrub_observation(await tab.observe())
            ctx.last_observation, ctx.last_masks = observation, (mask_ids, unmaskable)
            scripted = director.decide(observation)
        # A blank tab (every fresh task's first step) shows nothing a picture could add.
        blank = observation.url == "about:blank" and not observation.elements
        withhold = unmaskable or blank or scripted is not None
        shot = await self._screenshot(tab, marks=True, mask_ids=mask_ids, withhold=withhold)
        observed = time.perf_counter()
        history = ctx.history.with_page(
            page_key(observation.url, observation.tree, observation.scroll), observation.url
        )
        warnings = history.warnings()
        thumbnail = self._start_thumbnail(shot)
        collapsed = ctx.collapsed_page(observation.url, observation.title, index)

        stop = history.hard_stop_reason()
        if stop is not None:  # the page has not changed for too long: end before another model call
            step = Step(
                index=index, url=observation.url, title=observation.title, warnings=warnings,
                error=stop, screenshot=await thumbnail,
                timings=step_timings(started, observed, observed, observed, observed),
            )
            state = StepState(status=WorkerStatus.aborted, feedback=stop)
            ctx.commit(step, history=history, collapsed_page=collapsed, assistant=None,
                       next_user_blocks=[], state=state)
            return step

        asked = time.perf_counter()
        if scripted is not None:
            reply = scripted
        else:
            shot_b64 = base64.b64encode(shot).decode("ascii") if shot is not None else None
            notes = [director.take_note() if director is not None else None, ctx.retry_note]
            ctx.retry_note = None
            note = "\n".join(note for note in notes if note) or None
            page = ctx.page_blocks(observation, step=index, history=history, screenshot_b64=shot_b64, note=note)
            # The last line of defence before a request leaves: every text and tool input scrubbed.
            messages = self.secrets.scrub_messages(ctx.messages_for(page))
            self.report(ctx, Phase.thinking)
            try:
                reply = await self.llm.complete(
                    system=self.system, messages=messages, tools=ctx.tools.specs()
                )
            except BaseException:
                thumbnail.cancel()
                raise
        modelled = time.perf_counter()
        reply = self._scrub_reply(reply)

        state = ctx.step_state()
        tool_ctx = ToolContext(
            tab=tab, resources=ctx.resources, output_spec=ctx.output_spec, state=state,
            secrets=self.secrets, human_available=self.human is not None,
        )

        def acting(call: ToolCall) -> None:
            self.report(ctx, Phase.acting, describe_call(call.name, call.input), answered=reply.usage)

        before_call = after_call = None
        if watcher is not None:
            async def before_call(call: ToolCall, first: bool) -> str | None:
                return await watcher.before_call(call, observation, first, tab)

            async def after_call(call: ToolCall, message: str) -> str:
                return await watcher.after_call(call, message, tab)

        try:
            outcomes = await ctx.tools.run_calls(reply.tool_calls, tool_ctx, page_url=observation.url,
                                                 page_document=observation.document, on_call=acting,
                                                 before_call=before_call, after_call=after_call)
            if scripted is not None:  # a replayed click the page covered: closed and clicked again, as a model would
                outcomes = await retry_uncovered(ctx.tools, reply.tool_calls, outcomes, tool_ctx,
                                                 page_url=observation.url, page_document=observation.document,
                                                 on_call=acting, before_call=before_call,
                                                 after_call=after_call)
        except BaseException:
            ctx.discarded_usage = ctx.discarded_usage + reply.usage  # spent, though not recorded
            thumbnail.cancel()
            raise
        acted = time.perf_counter()

        records = action_records(index, outcomes, reply, observation.url)
        history = history.with_actions(records)
        if state.status is None:
            stop = history.hard_stop_reason()
            if stop is not None:
                state.status, state.feedback = WorkerStatus.aborted, stop
        used_ids = {block.id for message in ctx.pairs for block in message.content if isinstance(block, ToolCall)}
        assistant, next_user_blocks, error = reply_messages(reply, outcomes, used_ids, self._notes)
        step = Step(
            index=index,
            url=observation.url,
            title=observation.title,
            model_text=reply.text,
            tool_calls=[
                ToolCallRecord(
                    id=outcome.call.id, name=outcome.call.name, input=outcome.call.input,
                    ok=outcome.ok, message=outcome.message, duration_ms=outcome.duration_ms,
                )
                for outcome in outcomes
            ],
            usage=reply.usage,
            warnings=warnings,
            error=error,
            screenshot=await thumbnail,
            timings=step_timings(started, observed, asked, modelled, acted),
            replayed=scripted is not None,
        )
        ctx.commit(step, history=history, collapsed_page=collapsed, assistant=assistant,
                   next_user_blocks=next_user_blocks, state=state)
        step.timings.total_ms = elapsed_ms(started, time.perf_counter())
        return step

    async def page_for_person(self, ctx: TaskContext) -> tuple[str, str, str | None]:
        """The page as a person should see it to answer a question: URL, title and a JPEG (base64,
        secret fields masked; None when a secret shows where it cannot be masked)."""
        tab = self.tab
        observation, mask_ids, unmaskable = self.secrets.scrub_observation(await tab.observe())
        shot = await self._screenshot(tab, marks=False, mask_ids=mask_ids, withhold=unmaskable, scale=0.75)
        return observation.url, observation.title, base64.b64encode(shot).decode("ascii") if shot else None

    async def finish(self, ctx: TaskContext, *, capture: bool = True) -> TaskRecord:
        """The TaskRecord of a finished task; with ``capture``, the final page and screenshot."""
        if not ctx.finished:
            raise RuntimeError("the task is not finished yet; call step() until ctx.finished")
        try:
            return await self._finish(ctx, capture=capture)
        except BaseException as error:
            redacted = self.secrets.redact_exception(error)
            if redacted is error:
                raise
        raise redacted

    async def _finish(self, ctx: TaskContext, *, capture: bool) -> TaskRecord:
        if not capture:
            return self.secrets.scrub_model(ctx.to_session(final_url=ctx.current_url))
        tab = self.tab
        if self._page_unchanged(ctx, tab):  # the last step only reported: its look is the final page
            observation = ctx.last_observation
            mask_ids, unmaskable = ctx.last_masks
        else:
            observation, mask_ids, unmaskable = self.secrets.scrub_observation(await tab.observe())
        assert observation is not None
        shot = await self._screenshot(tab, marks=False, mask_ids=mask_ids, withhold=unmaskable)
        record = ctx.to_session(
            final_url=observation.url,
            final_dom=observation.tree,
            final_screenshot=base64.b64encode(shot).decode("ascii") if shot is not None else None,
        )
        # Everything in it was scrubbed on the way in; this is the last check before it is stored.
        return self.secrets.scrub_model(record)

    @staticmethod
    def _page_unchanged(ctx: TaskContext, tab: BrowserTab) -> bool:
        """Whether the page is still the one the last step looked at: its calls did not drive the
        browser (set_output, complete, abort) and the tab is where it was."""
        if ctx.last_observation is None or not ctx.steps or tab.url != ctx.last_observation.url:
            return False
        for call in ctx.steps[-1].tool_calls:
            tool = ctx.tools.get(call.name)
            if tool is None or tool.uses_browser:
                return False
        return bool(ctx.steps[-1].tool_calls)

    async def do(
        self,
        task: str,
        previous_session: TaskRecord | None = None,
        max_steps: int = 20,
        *,
        resources: ResourceSet | Mapping[str, str | PathLike[str]] | None = None,
        output_schema: OutputSchema = None,
    ) -> TaskRecord:
        """Run a whole task: start, step until it ends, finish."""
        ctx = self.start(
            task, resources=resources, output_schema=output_schema, max_steps=max_steps,
            previous_session=previous_session,
        )
        while not ctx.finished:
            await self.step(ctx)
        return await self.finish(ctx)

    # ---- helpers ----

    def report(self, ctx: TaskContext, phase: Phase, detail: str = "", *, answered: Usage | None = None) -> None:
        """Tell ``progress`` what the task's next step is doing; ``answered``: its model call's usage."""
        if self.progress is None:
            return
        tokens = (ctx.usage + ctx.discarded_usage + (answered or Usage())).total_tokens
        self.progress(Progress(ctx.next_index, ctx.max_steps, phase, detail, tokens))

    async def _screenshot(
        self, tab: BrowserTab, *, marks: bool, mask_ids: list[str], withhold: bool, scale: float | None = None
    ) -> bytes | None:
        """The screenshot with the elements showing a secret masked (password fields always are).
        None when a secret shows where no element can be masked (text in the page itself)."""
        if not self.options.screenshots or withhold:
            return None
        # The model's view is scaled down; the final picture (a record for people) is not.
        if scale is None:
            scale = self.options.screenshot_scale if marks else 1.0
        quality = self.options.screenshot_quality
        if not mask_ids:
            return await tab.screenshot(marks=marks, format="jpeg", quality=quality, scale=scale)
        try:
            return await tab.screenshot(
                marks=marks, format="jpeg", quality=quality, mask_ids=mask_ids, scale=scale
            )
        except ActionError:  # an element to mask went stale meanwhile: better no picture than a secret
            return None

    # ---- secrets: nothing the worker sends or records may show a value ----

    def _scrub_reply(self, reply: ModelReply) -> ModelReply:
        """What the model said, with any secret value it wrote as its placeholder (tools reveal it
        again when they type it, so the action is the same; records and later requests stay clean)."""
        if not self.secrets:
            return reply
        calls = [call.model_copy(update={"input": self.secrets.scrub_data(call.input)}) for call in reply.tool_calls]
        return reply.model_copy(update={"text": self.secrets.scrub(reply.text), "tool_calls": calls})

    def _start_thumbnail(self, shot: bytes | None) -> asyncio.Future[str | None]:
        """Shrink the screenshot for the step record in a thread, while the model is thinking."""
        if shot is None:
            future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
            future.set_result(None)
            return future
        return asyncio.ensure_future(asyncio.to_thread(shrink_jpeg, shot, self.options.thumbnail_width))
