"""One task run: the worker's start / step / finish tied to the browser tab the task runs in.

``Agent.do`` is a TaskRun plus a retry loop; the Prefect flow wraps :meth:`TaskRun.step` in its
retryable step task. Both get the same behaviour from here:

- before the first step the tab is opened at the start URL (a URL that cannot be opened is a
  ``ConfigError("start_url")``, before any model call);
- a step that raised a TransientError left the task as it was, and the next call retries it: a
  dead tab is reopened from the snapshot of the last good step; a page or browser failure gets a
  fresh tab at the last good URL, and if that fails again, a blank one (the URL itself may be what
  keeps failing); a failure of the model API keeps the tab;
- after every good step the tab's cookies, local storage and URL are snapshotted;
- ``finish`` captures the final page when the browser still runs, and does without when it died;
- with a :class:`~webtask_core.replay.Replay`, steps the script still fits are replayed without the
  model, and a completed run saves the script it yields (the first recording, or a repair);
- with a :class:`~webtask_core.readback.ReadBack`, a completed run's listing is read back from the
  site (``verify``: always, replayed runs only, or off): with the templates kept beside the replay
  script in code, else by one model call; a listing the site shows otherwise ends the task
  ``mismatch`` (and its script is not saved).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Literal

from webtask_core.browser.item_press import ItemField, confirm_item_added, item_field, press_needed
from webtask_core.browser.motion import BUILD_WINDOW_S, page_age_s, settle_building
from webtask_core.errors import (
    ActionError,
    BrowserCrashedError,
    ConfigError,
    ModelTransientError,
    PermanentModelError,
    TransientError,
)
from webtask_core.human import HumanAnswer, HumanRequest, NoHumanAnswer, answer_message, as_answer
from webtask_core.progress import describe_call
from webtask_core.readback import ReadBack, ReadbackResult, TemplateStore, VerifyMode, check_verify, read_back
from webtask_core.record import Step, TaskRecord, WorkerStatus
from webtask_core.replay.commit import is_commit
from webtask_core.replay.recorder import Recorder
from webtask_core.replay.repair import merge_repair
from webtask_core.replay.replayer import Replayer
from webtask_core.tools.browser_tools import FillTool

if TYPE_CHECKING:
    from webtask_core.browser import BrowserTab
    from webtask_core.browser.models import Observation
    from webtask_core.browser.runtime import BrowserRuntime
    from webtask_core.llm.types import ToolCall
    from webtask_core.replay import Replay, ReplayScript
    from webtask_core.replay.replayer import Handover
    from webtask_core.task_context import TaskContext
    from webtask_core.worker import Worker

__all__ = ["TaskRun", "ReplayOutcome"]

# A page younger than this when a recorded step looks at it is let settle first, for at most RECORD_SETTLE_S.
FRESH_PAGE_S = 2.0
RECORD_SETTLE_S = 3.0
# The longest a replayed key press's check that it added its item may take (pressing again, picking
# it in a list, typing it over the term: item_press.py); a page stuck in a script fails it after that.
_CONFIRM_ITEM_S = 20.0

logger = logging.getLogger(__name__)

# What a run with a Replay did with its script: replayed it all, repaired it (the site changed and
# the model took over), recorded it (there was none), handed over (the model took over where this
# item differed, e.g. it was listed already: the script stays), or none (no script used or saved).
ReplayOutcome = Literal["replayed", "repaired", "recorded", "handed_over", "none"]
_READBACK_ATTEMPTS = 2


class TaskRun:
    """``TaskRun(worker, ctx, runtime, start_url=...)``; ``await step()`` until ``finished``, then ``finish()``.

    ``worker`` must take its browser tab from ``runtime.current_tab`` (the tab can be replaced
    between steps). ``start_url``: where the tab goes before the first step (None: it stays where it
    is, as when a task continues the last one's conversation).
    """

    def __init__(self, worker: Worker, ctx: TaskContext, runtime: BrowserRuntime, *,
                 start_url: str | None = None, replay: Replay | None = None, readback: ReadBack | None = None,
                 verify: VerifyMode = "always"):
        self.worker = worker
        self.ctx = ctx
        self.runtime = runtime
        self.start_url = start_url
        self.replay = replay
        self.replayer: Replayer | None = None  # set at start when the store holds a script
        self.recorder: Recorder | None = None
        if replay is not None and replay.record:
            self.recorder = Recorder(replay.params, identifying=replay.identifying, files=ctx.resources.file_names(),
                                     rich_fill=FillTool.RICH_TEXT_FILL)
        self.saved_script: ReplayScript | None = None  # what finish() saved
        self.readback = readback.validated() if readback is not None else None
        self.verify = check_verify(verify)
        self.readback_result: ReadbackResult | None = None  # set by finish() when the listing was read back
        self.commit_calls: list[str] = []  # ids of the calls that may have submitted (a form post, Publish)
        self._started = False
        # Failures of the page or the browser (not the model) in a row: the retry gets a fresh tab.
        self.page_failures = 0
        self.snapshot_ms: dict[int, float] = {}  # step index -> time spent saving the tab's state after it

    def __repr__(self) -> str:  # shown by Prefect in logs instead of a huge object dump
        return f"TaskRun(task={self.ctx.task[:40]!r}, steps_used={self.ctx.steps_used})"

    @property
    def finished(self) -> bool:
        return self.ctx.finished

    @property
    def replayed_steps(self) -> int:
        return self.replayer.replayed if self.replayer is not None else 0

    @property
    def replay_handovers(self) -> list[str]:
        """Where and why the model took over from the script, each time it did."""
        return [str(handover) for handover in self.replay_handover_details]

    @property
    def replay_handover_details(self) -> list[Handover]:
        """The handovers with their kind (site, item, values, model, failed, unsure) and step."""
        return list(self.replayer.handovers) if self.replayer is not None else []

    @property
    def replay_outcome(self) -> ReplayOutcome:
        if self.saved_script is not None:
            return "recorded" if self.replayer is None else "repaired"
        if self.replayer is not None and self.replayer.handed_over:
            return "handed_over"
        if self.replayer is not None and self.replayer.replayed:
            return "replayed"
        return "none"

    async def start(self) -> None:
        """Open the tab at the start URL, and load the replay script (done by the first step when
        not called before). A script that cannot be read is a SessionFormatError naming it."""
        if self.replay is not None and self.replayer is None:
            script = await asyncio.to_thread(self.replay.store.load, self.replay.key)
            if script is not None:
                self.replayer = Replayer(script, self.replay.params, identifying=self.replay.identifying,
                                         files=self.ctx.resources.file_names())
        await self.runtime.open(self.start_url)
        self._started = True

    async def step(self, index: int | None = None) -> Step:
        """Step ``index`` (default: the next one): observe, ask the model, act, snapshot.

        When step ``index`` was committed already (an earlier attempt failed after it, in the
        caller's own bookkeeping), it is returned as it was: the model is not asked twice.
        """
        ctx = self.ctx
        if index is not None and ctx.steps_used >= index:
            await self.runtime.ensure_alive(ctx.current_url)
            return ctx.steps[index - 1]
        if index is not None and index != ctx.next_index:
            raise RuntimeError(f"step {index} requested but the task is at step {ctx.next_index}")
        if ctx.pending_question is not None:
            await self.answer_pending()
            if ctx.finished:  # no answer, or a rejected approval: the task ended without another step
                return ctx.steps[-1]
        replayer = checkpoint = None
        watch: _CallWatch | None = None
        try:
            await self._prepare_tab()  # the first step also loads the script
            replayer = self.replayer
            checkpoint = replayer.checkpoint() if replayer is not None else None
            if replayer is not None and replayer.replaying:
                self._hold_still()  # a person looks once the overlay opened or closed; so does replay
            elif self.recorder is not None:
                await self._settle_fresh_page()  # the recording keeps the page a replay's second look finds
                self._hold_still()  # and reads it once it holds still, as a replayed step does
            watch = _CallWatch(self.recorder, self.commit_calls, replayer)
            step = await self.worker.step(ctx, director=replayer, watcher=watch)
        except TransientError as error:
            if replayer is not None and checkpoint is not None:
                # The retry decides afresh; after a replayed submit that had started, the model looks first.
                replayer.failed(checkpoint, error, started=watch.started if watch is not None else [])
            if watch is not None and watch.committed is not None:
                # The retry is decided afresh, by a model that never saw this attempt: tell it.
                ctx.retry_note = (f"The last attempt at this step ran {watch.committed} and then failed ({error}); "
                                  "it may have gone through already. Look at the page (and the list of items) "
                                  "before submitting again.")
            if not isinstance(error, ModelTransientError):
                self.page_failures += 1
            raise
        self.page_failures = 0
        origin = None
        if replayer is not None and step.replayed:
            origin = replayer.decided_step
            if replayer.after(step):  # a replayed call failed: what this run did there is the model's to keep
                origin = None
        if self.recorder is not None and ctx.last_observation is not None:
            self.recorder.record(step, ctx.last_observation, origin=origin,
                                 view=replayer.last_view if replayer is not None else None)
        started = time.perf_counter()
        await self.runtime.snapshot()
        self.snapshot_ms[step.index] = round((time.perf_counter() - started) * 1000.0, 2)
        return step

    # ---- a question for a person (webtask_core.human) ----

    async def question_for_person(self) -> HumanRequest:
        """The pending ask_human question with what the person needs to see: the task, the page's URL
        and title, and a screenshot (best effort: a page that cannot be captured goes without)."""
        ctx = self.ctx
        if ctx.pending_question is None:
            raise RuntimeError("no question is waiting for an answer")
        url, title, screenshot = ctx.current_url, "", None
        try:
            await self.runtime.ensure_alive(ctx.current_url)
            url, title, screenshot = await self.worker.page_for_person(ctx)
        except (TransientError, ActionError) as error:
            logger.warning("no screenshot for the question to a person: %s", self.worker.secrets.scrub(str(error)))
        return ctx.pending_question.request.model_copy(
            update={"task": ctx.task, "url": url, "page_title": title, "step": ctx.steps_used, "screenshot": screenshot})

    async def answer_pending(self) -> None:
        """Ask the worker's human handler the pending question and give the model its answer; a
        handler that raises NoHumanAnswer (or none at all) ends the task aborted with the reason."""
        if self.ctx.pending_question is None or self.ctx.finished:
            return
        request = await self.question_for_person()
        handler = self.worker.human
        try:
            if handler is None:
                raise NoHumanAnswer("nobody can answer the question (no human handler)")
            answer = as_answer(request, await handler(request))
        except NoHumanAnswer as error:
            self.no_answer(error.reason)
            return
        self.apply_answer(request, answer)

    def no_answer(self, reason: str) -> None:
        """End the task aborted: the person's answer did not come (``reason`` says why)."""
        reason = self.worker.secrets.scrub(reason)
        self.ctx.answer_question(f"no answer: {reason}")
        self.ctx.end(WorkerStatus.aborted, reason)

    def apply_answer(self, request: HumanRequest, answer: HumanAnswer) -> None:
        """Give the model the answer: a secret one as a new secret's placeholder; a rejected approval
        ends the task aborted with the reviewer's comment."""
        ctx = self.ctx
        placeholder = None
        if request.secret:
            name = f"ask_human_{ctx.steps_used}"
            try:
                placeholder = self.worker.secrets.add(name, answer.answer)
            except ConfigError as error:
                self.no_answer(f"the secret answer cannot be kept secret: {error.problem}")
                return
            ctx.secret_answers.append(name)
        ctx.answer_question(self.worker.secrets.scrub(answer_message(request, answer, placeholder=placeholder)))
        if request.kind == "approve" and not answer.approved:
            comment = self.worker.secrets.scrub(answer.comment) or "no comment"
            who = f" ({answer.by})" if answer.by else ""
            ctx.end(WorkerStatus.aborted, f"rejected by the reviewer{who}: {comment}")

    def _hold_still(self) -> None:
        if self.runtime.has_tab:  # the step's look at the page holds still first, in the same round trip
            self.runtime.current_tab().hold_still_first()

    async def _settle_fresh_page(self) -> None:
        """A page loaded a moment ago may still be drawing (an admin's sidebar its script adds): a
        step the recording keeps is taken once it settled, as a replay takes its second look
        (worker.ANOTHER_LOOK_WAIT_S). A page loaded earlier is taken as it is."""
        tab = self.runtime.current_tab() if self.runtime.has_tab else None
        if tab is None or tab.page is None:
            return
        try:
            age = await tab.answer("the page's age", page_age_s(tab.page))
        except ActionError:
            return  # a page stuck in a script: the step's own look reports it
        if age is None:
            return
        if age < FRESH_PAGE_S:
            await tab.wait_for(timeout_s=RECORD_SETTLE_S)
        if age < BUILD_WINDOW_S:
            # and for a widget its script builds on a timer (an editor started 2 s after the load): a
            # recording taken before that holds a page a replay that looks later never finds. Bounded
            # from when the page's build is due, on its own clock, not from this step's start: under
            # load 17 a step that began at 0.3 s ran out of its 3 s before TinyMCE, due at 2 s, was built.
            # A page past FRESH_PAGE_S is waited for only while such a timeout is pending.
            await settle_building(tab.page, max_s=RECORD_SETTLE_S, pending_only=age >= FRESH_PAGE_S)

    async def _prepare_tab(self) -> None:
        if not self._started:
            await self.start()
        elif self.page_failures and self.runtime.can_reopen:
            # A page stuck in a script or a load can keep failing in the same tab.
            await self.runtime.reopen(self.ctx.current_url, blank=self.page_failures > 1)
        else:
            await self.runtime.ensure_alive(self.ctx.current_url)

    async def finish(self) -> TaskRecord:
        """The finished task's record, with the final page when the browser still runs; a completed
        run with a Replay saves its script when there was none or the model repaired it."""
        if not self.runtime.is_alive:
            record = await self.worker.finish(self.ctx, capture=False)
        else:
            try:
                record = await self.worker.finish(self.ctx)
            except BrowserCrashedError:  # it died after the last step: the record is complete without it
                record = await self.worker.finish(self.ctx, capture=False)
        if record.status is WorkerStatus.completed or (record.status is WorkerStatus.aborted and self._submitted(record)):
            record = await self._read_back(record)
        await self._save_script(record)
        return record

    def _submitted(self, record: TaskRecord) -> bool:
        """Whether a call that may have submitted (a form post, Publish) ran without an error."""
        commits = set(self.commit_calls)
        return any(call.id in commits and call.ok for step in record.steps for call in step.tool_calls)

    async def _read_back(self, record: TaskRecord) -> TaskRecord:
        """The record after reading the listing back: ``mismatch`` when the site does not show it as
        asked. A browser or model failure is tried once more; then the listing counts as unread.

        After a run that aborted once it had submitted (the model gave up on what the site showed
        after Publish), the listing may be on the site: only a listing shown otherwise than asked
        changes the outcome (to ``mismatch``, so it is known to be published); else it stays aborted."""
        spec, replay = self.readback, self.replay
        aborted = record.status is WorkerStatus.aborted
        if spec is None:
            return record
        if self.verify == "off" or (self.verify == "replayed" and replay is None):
            self.readback_result = ReadbackResult(status="skipped", reason=f"verify={self.verify}")
            return record
        templates = TemplateStore(replay.store.sessions) if replay is not None else None
        result = None
        for attempt in range(_READBACK_ATTEMPTS):
            try:
                await self.runtime.ensure_alive(record.final_url or self.ctx.current_url)
                result = await read_back(
                    self.runtime.current_tab(), self.worker.llm, spec, output=record.output, feedback=record.feedback,
                    final_url=record.final_url,
                    final_tree=record.final_dom or "", templates=templates, key=replay.key if replay else None,
                    scrub=self.worker.secrets.scrub, source=replay.source if replay else "")
                break
            except (TransientError, PermanentModelError) as error:
                logger.warning("read-back attempt %d failed: %s", attempt + 1, self.worker.secrets.scrub(str(error)))
                result = ReadbackResult(status="unread", reason=f"the listing could not be read back: {error}")
                if isinstance(error, PermanentModelError):
                    break  # asking again will not help
        assert result is not None
        scrub = self.worker.secrets.scrub  # what the page showed goes into results, events and alerts
        result.reason = scrub(result.reason)
        result.fields = [check.model_copy(update={"expected": scrub(check.expected), "note": scrub(check.note),
                                                  "shown": scrub(check.shown) if check.shown is not None else None})
                         for check in result.fields]
        self.readback_result = result
        record.usage = record.usage + result.usage
        if result.ok or (aborted and result.status != "mismatch"):
            return record
        what = ("the site does not show the listing as asked: " + result.summary() if result.status == "mismatch"
                else result.reason)
        record.status = WorkerStatus.mismatch
        record.feedback = self.worker.secrets.scrub(f"Read-back: {what} (the run reported: {record.feedback})")
        return record

    async def _save_script(self, record: TaskRecord) -> None:
        replay, recorder, replayer = self.replay, self.recorder, self.replayer
        if replay is None or recorder is None or record.status is not WorkerStatus.completed:
            return
        revision = replayer.script.revision + 1 if replayer is not None else 1
        # The recorder keeps placeholders, never values; scrubbing is the last check before storing.
        script = recorder.script(replay.key, revision=revision, source=replay.source)
        if replayer is not None:
            old = replayer.script
            steps, why = merge_repair(old, recorder.recorded(), dict(replay.params))
            repaired = script.model_copy(update={"steps": steps}) if steps is not None else None
            if repaired is None or not (replayer.site_changed or _more_replayable(repaired, old)):
                # replayed as it was, the model handled what differs for this item or these values,
                # or its steps would carry this item's values into the next one
                logger.info("replay script %r kept at revision %d (%s)", replay.key, old.revision,
                            why if repaired is None else "no change of the site")
                return
            script = repaired
        script = self.worker.secrets.scrub_model(script)
        if not script.steps:
            return
        await asyncio.to_thread(replay.store.save, script)
        self.saved_script = script
        logger.info("replay script %r %s (revision %d, %d step(s))", replay.key,
                    "repaired" if replayer is not None else "recorded", revision, len(script.steps))


class _CallWatch:
    """Notes which calls of a step started (a replayed submit that failed once it had started may have
    gone through), and lets the recorder look at the page before a submit."""

    def __init__(self, recorder: Recorder | None, commits: list[str] | None = None, replayer: Replayer | None = None):
        self.recorder = recorder
        self.replayer = replayer
        self._item_before: ItemField | None = None  # the field before a replayed press that adds a list's item
        self.started: list[str] = []
        self.committed: str | None = None  # the first call that started and may have submitted
        self.commits = commits if commits is not None else []  # every commit call started (for the read-back)

    async def before_call(self, call: ToolCall, observation: Observation, first: bool, tab: BrowserTab) -> str | None:
        """Just before ``call`` runs; a note when it need not run (it is then done without running)."""
        if call.id.startswith("replay_") and not first and tab.page is not None:
            tab.hold_still_first()  # the last call may have opened a picker, a modal may still fade
        item = self._item_of(call)
        self._item_before = (
            await tab.answer("reading the focused field", item_field(tab.page, item))
            if item is not None and tab.page is not None else None
        )
        if item is not None:
            key = str(call.input.get("key", "")) if isinstance(call.input, dict) else ""
            if (note := press_needed(self._item_before, key, item)) is not None:
                self._item_before = None
                return note  # not started: nothing to watch, record or count as a submit
        self.started.append(call.id)
        if isinstance(call.input, dict):
            element_id = call.input.get("element_id")
            element = observation.elements.get(element_id) if isinstance(element_id, str) else None
            if is_commit(call.name, call.input, element):
                # An Enter that adds a typed list item submits nothing: no need to let an autosave finish first.
                if self._item_of(call) is None and (waited := await tab.wait_for_own_saves(blur=call.name == "click")):
                    logger.info("before %s: %s", describe_call(call.name, call.input), waited)
                self.commits.append(call.id)
                # A replayed submit is the replayer's to report (it hands over); the model's own is told here.
                if self.committed is None and not call.id.startswith("replay_"):
                    self.committed = describe_call(call.name, call.input)
        if self.recorder is not None:
            await self.recorder.before_call(call, observation, first, tab)
        return None

    async def after_call(self, call: ToolCall, message: str, tab: BrowserTab) -> str:
        """A replayed key press that should have added the item typed before it to a list widget: when it
        did nothing (the field still holds the item, no chip shows it), pressed once more (item_press.py)."""
        item, before, self._item_before = self._item_of(call), self._item_before, None
        if item is None or before is None or tab.page is None or not isinstance(call.input, dict):
            return message
        added = confirm_item_added(tab.page, str(call.input.get("key", "")), item, before)
        return message + await tab.answer(f"confirming the item {item!r} was added", added, limit_s=_CONFIRM_ITEM_S)

    def _item_of(self, call: ToolCall) -> str | None:
        return self.replayer.item_presses.get(call.id) if self.replayer is not None else None


def _more_replayable(new: ReplayScript, old: ReplayScript) -> bool:
    """Whether this run's recording leaves fewer steps to the model than the script it replayed (the
    old one could not bind a value this run's values tell apart): worth keeping as a repair."""
    return (len(new.steps) - new.replayable_steps) < (len(old.steps) - old.replayable_steps)
