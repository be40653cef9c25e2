"""TaskContext: everything one task owns, and the messages the model sees for it.

Message layout (internals.md §3), strictly alternating user / assistant:

- ``messages[0]`` (user): ``<task>``, ``<resources>``, and with a persisted conversation
  ``<previous_tasks>``. In a fresh conversation the first page state is appended to it (and later
  collapsed in place), so the roles still alternate.
- then the pairs: assistant (text + tool_use) / user (tool_result blocks, then text notes, then the
  collapsed page line of that step).
- the last user message is "open": its tool results and notes, then the current page state — the
  ``<page>`` block with the full tree, the ``<history>`` block and the screenshot.

Caching: ``cache=True`` on the task message and on the message just before the open one, so the
cached prefix grows by one pair per step. Only the open message changes from one step to the next.

The context is changed only by :meth:`TaskContext.commit`, which the worker calls at the very end of
a successful step; a step that fails half-way leaves it exactly as it was.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from webtask_core.errors import SessionFormatError
from webtask_core.history import ActionHistory, StuckThresholds
from webtask_core.human import ASK_HUMAN, PendingQuestion
from webtask_core.llm.types import Block, ImageBlock, Message, TextBlock, ToolResult, Usage
from webtask_core.prompt_set import PromptSet
from webtask_core.record import (
    PreviousTask,
    Step,
    TaskRecord,
    WorkerStatus,
    utc_now,
)
from webtask_core.resources import ResourceSet
from webtask_core.tools import OutputSpec, StepState, Tool, ToolRegistry

if TYPE_CHECKING:
    from webtask_core.browser import Observation

__all__ = ["TaskContext", "TaskSnapshot"]


class TaskSnapshot(BaseModel):
    """An unfinished task's state (see :meth:`TaskContext.snapshot`); plain data, JSON round trip."""

    task: str
    pairs: list[Message]
    steps: list[Step]
    history: ActionHistory
    started_at: datetime
    output: Any = None
    has_output: bool = False
    output_error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    discarded_usage: Usage = Field(default_factory=Usage)
    previous_tasks: list[PreviousTask] = Field(default_factory=list)
    head_extra: list[TextBlock] = Field(default_factory=list)
    pending_question: PendingQuestion | None = None
    secret_answers: list[str] = Field(default_factory=list)  # names only: the values are kept nowhere


class TaskContext:
    """Task-scoped state: the task, resources, output schema, steps, history and conversation."""

    def __init__(
        self,
        task: str,
        *,
        prompts: PromptSet,
        resources: ResourceSet | None = None,
        output_spec: OutputSpec | None = None,
        max_steps: int = 20,
        previous_session: TaskRecord | None = None,
        thresholds: StuckThresholds | None = None,
        tools: Sequence[Tool] = (),
    ):
        self.task = task
        self.prompts = prompts
        self.resources = resources or ResourceSet()
        self.output_spec = output_spec or OutputSpec()
        self.max_steps = max_steps
        self.tools = ToolRegistry.default(self.output_spec, extra=tools)  # tools: the caller's own, checked
        self.history = ActionHistory(thresholds=thresholds or StuckThresholds())
        self.steps: list[Step] = []
        self.started_at: datetime = utc_now()
        self.status: WorkerStatus | None = None
        self.feedback = ""
        self.output: Any = None
        self.has_output = False
        self.output_error: str | None = None
        self.usage = Usage()
        self.discarded_usage = Usage()  # model calls of steps that failed and were not recorded
        self.previous_tasks: list[PreviousTask] = []
        self.pairs: list[Message] = []  # after the task message; see the module docstring
        # The page the last step saw (what a replay recorder fingerprints its elements from).
        self.last_observation: Observation | None = None
        # The elements of last_observation to mask in a picture, and whether a secret showed where
        # none can be masked (see SecretValues.scrub_observation).
        self.last_masks: tuple[list[str], bool] = ([], False)
        # Told to the model at the next step it decides: an earlier attempt at it may have submitted
        # before it failed (TaskRun), so the page is to be looked at before submitting again.
        self.retry_note: str | None = None
        # The question the last step's ask_human asked, until its answer is in (webtask_core.human).
        self.pending_question: PendingQuestion | None = None
        # The secrets made from a person's secret answers (names; the worker's SecretValues has the values).
        self.secret_answers: list[str] = []
        self._head_extra: list[Block] = []  # the collapsed first page, in a fresh conversation
        if previous_session is not None:
            self._continue_from(previous_session)
        self._task_blocks = self._render_task_blocks()

    # ---- state ----

    @property
    def finished(self) -> bool:
        return self.status is not None

    @property
    def steps_used(self) -> int:
        return len(self.steps)

    @property
    def next_index(self) -> int:
        return len(self.steps) + 1

    @property
    def current_url(self) -> str:
        """The last URL seen or acted on (where a relaunched browser should go back to)."""
        return self.history.last_url

    def step_state(self) -> StepState:
        """A fresh per-step state for the tools, starting from the committed output."""
        return StepState(
            output=self.output, has_output=self.has_output, output_error=self.output_error
        )

    # ---- rendering ----

    def _continue_from(self, session: TaskRecord) -> None:
        pairs = [message.model_copy(deep=True, update={"cache": False}) for message in session.pairs]
        for index, message in enumerate(pairs):
            expected = "assistant" if index % 2 == 0 else "user"
            if message.role != expected:
                raise SessionFormatError(
                    f"previous_session.pairs[{index}] is a {message.role} message where a "
                    f"{expected} message was expected (the pairs must alternate, starting with "
                    "the assistant and ending with the user)"
                )
        if pairs and pairs[-1].role != "user":
            raise SessionFormatError("previous_session.pairs must end with a user message")
        self.previous_tasks = [*session.previous_tasks, session.as_previous_task()]
        if pairs:
            note = TextBlock(text=self.prompts.render("new_task"))
            pairs[-1] = Message(role="user", content=[*pairs[-1].content, note])
        self.pairs = pairs

    def _render_task_blocks(self) -> list[Block]:
        blocks: list[Block] = [
            TextBlock(
                text=self.prompts.render(
                    "task", task=self.task, has_output_schema=self.output_spec.given
                )
            ),
            TextBlock(text=self.prompts.render("resources", resources=self.resources.describe())),
        ]
        if self.previous_tasks:
            items = [
                {
                    "task": item.task,
                    "status": item.status.value,
                    "feedback": item.feedback,
                    "output": item.output,
                    "output_json": json.dumps(item.output, ensure_ascii=False, default=str),
                }
                for item in self.previous_tasks
            ]
            blocks.append(TextBlock(text=self.prompts.render("previous_tasks", previous_tasks=items)))
        return blocks

    def task_message(self) -> Message:
        return Message(role="user", content=[*self._task_blocks, *self._head_extra])

    def page_blocks(
        self, observation: Observation, *, step: int, history: ActionHistory,
        screenshot_b64: str | None, now: float | None = None, note: str | None = None,
    ) -> list[Block]:
        """The current page state: ``<page>`` with the full tree, ``<history>``, the screenshot.
        ``note``: a line for this step only (where a replay handed over to the model, and why)."""
        extra: list[str] = [note] if note else []
        if step >= self.max_steps:
            extra.append(
                "This is your LAST step: finish now (set_output and complete) if the task is done."
            )
        blocks: list[Block] = [
            TextBlock(
                text=self.prompts.render(
                    "page", url=observation.url, title=observation.title, step=step,
                    tree=observation.tree,
                )
            ),
            TextBlock(
                text=self.prompts.render(
                    "history",
                    body=history.render(now=now, extra_lines=extra),
                    url=observation.url,
                    scroll=observation.scroll,
                    tabs=[tab.model_dump() for tab in observation.tabs],
                    step=step,
                    max_steps=self.max_steps,
                )
            ),
        ]
        if screenshot_b64 is not None:
            blocks.append(ImageBlock(media_type="image/jpeg", data=screenshot_b64))
        return blocks

    def collapsed_page(self, url: str, title: str, step: int) -> TextBlock:
        return TextBlock(
            text=self.prompts.render("page_collapsed", url=url, title=title, step=step)
        )

    def messages_for(self, page_blocks: list[Block]) -> list[Message]:
        """The request's messages: the conversation so far with the current page state appended."""
        head = self.task_message()
        if not self.pairs:
            return [Message(role="user", content=[*head.content, *page_blocks])]
        messages = [head.model_copy(update={"cache": True}), *self.pairs[:-1]]
        open_message = self.pairs[-1]
        messages[-1] = messages[-1].model_copy(update={"cache": True})
        messages.append(Message(role="user", content=[*open_message.content, *page_blocks]))
        return messages

    # ---- the one place the context changes ----

    def commit(
        self,
        step: Step,
        *,
        history: ActionHistory,
        collapsed_page: TextBlock,
        assistant: Message | None,
        next_user_blocks: list[Block],
        state: StepState | None,
    ) -> None:
        """Record a finished step: its record, the pair it added, history, output and status."""
        if assistant is not None:
            if self.pairs:
                closed = self.pairs[-1]
                self.pairs[-1] = Message(role="user", content=[*closed.content, collapsed_page])
            else:
                self._head_extra = [collapsed_page]
            self.pairs.append(assistant)
            self.pairs.append(Message(role="user", content=list(next_user_blocks)))
        self.history = history
        self.steps.append(step)
        self.usage = self.usage + step.usage
        if state is not None:
            self.output, self.has_output = state.output, state.has_output
            self.output_error = state.output_error
            if state.status is not None:
                self.status, self.feedback = state.status, state.feedback
            elif state.question is not None:
                position = max(index for index, call in enumerate(step.tool_calls) if call.name == ASK_HUMAN and call.ok)
                self.pending_question = PendingQuestion(call_id=step.tool_calls[position].id, position=position,
                                                        request=state.question)
        if self.status is None and len(self.steps) >= self.max_steps:
            self.status = WorkerStatus.max_steps
            self.feedback = self._max_steps_feedback()
        step.ended = self.status

    def answer_question(self, message: str) -> None:
        """Put ``message`` (the person's answer, as the model reads it) in place of the pending
        ask_human call's result, in the conversation and in the step's record."""
        pending = self.pending_question
        if pending is None:
            raise RuntimeError("no question is waiting for an answer")
        # The results are in the order of the step's calls (their ids may have been made valid).
        open_message = self.pairs[-1]
        results = [position for position, block in enumerate(open_message.content) if isinstance(block, ToolResult)]
        content = list(open_message.content)
        where = results[pending.position]
        content[where] = content[where].model_copy(update={"content": [TextBlock(text=message)], "is_error": False})
        self.pairs[-1] = open_message.model_copy(update={"content": content})
        self.steps[-1].tool_calls[pending.position].message = message
        self.pending_question = None

    # ---- an unfinished task, stored while its run is suspended (waiting for a person) ----

    def snapshot(self) -> TaskSnapshot:
        """Everything an unfinished task has gathered, to :meth:`resume` it in another process."""
        if self.finished:
            raise RuntimeError("the task is finished; store its TaskRecord instead")
        return TaskSnapshot(
            task=self.task, pairs=[message.model_copy(deep=True) for message in self.pairs], steps=list(self.steps),
            history=self.history, started_at=self.started_at, output=self.output, has_output=self.has_output,
            output_error=self.output_error, usage=self.usage, discarded_usage=self.discarded_usage,
            previous_tasks=list(self.previous_tasks),
            head_extra=[block for block in self._head_extra if isinstance(block, TextBlock)],
            pending_question=self.pending_question, secret_answers=list(self.secret_answers),
        )

    def resume(self, snapshot: TaskSnapshot) -> None:
        """Continue the task a snapshot was taken of (this context must be the same task, unstarted)."""
        if snapshot.task != self.task:
            raise SessionFormatError("the stored unfinished task is another task than this one")
        if self.steps:
            raise RuntimeError("resume() needs a context that has run no step")
        self.pairs, self.steps, self.history = list(snapshot.pairs), list(snapshot.steps), snapshot.history
        self.started_at, self.output, self.has_output = snapshot.started_at, snapshot.output, snapshot.has_output
        self.output_error, self.usage, self.discarded_usage = snapshot.output_error, snapshot.usage, snapshot.discarded_usage
        self.previous_tasks, self._head_extra = list(snapshot.previous_tasks), list(snapshot.head_extra)
        self.pending_question, self.secret_answers = snapshot.pending_question, list(snapshot.secret_answers)
        self._task_blocks = self._render_task_blocks()

    def end(self, status: WorkerStatus, feedback: str) -> None:
        self.status, self.feedback = status, feedback
        if self.steps:
            self.steps[-1].ended = status

    def _max_steps_feedback(self) -> str:
        text = f"stopped after {self.max_steps} steps without completing the task"
        error = self.history.last_error()
        if error is not None:
            text += f"; last error (step {error.step}, {error.tool[:80]}): {error.message[:500]}"
        return text

    def to_session(
        self, *, final_url: str = "", final_dom: str = "", final_screenshot: str | None = None
    ) -> TaskRecord:
        if self.status is None:
            raise RuntimeError("the task is not finished; run steps until ctx.finished")
        return TaskRecord(
            status=self.status,
            output=self.output if self.has_output else None,
            feedback=self.feedback,
            task_description=self.task,
            pairs=[message.model_copy(deep=True) for message in self.pairs],
            steps=list(self.steps),
            steps_used=self.steps_used,
            max_steps=self.max_steps,
            final_url=final_url,
            final_dom=final_dom,
            final_screenshot=final_screenshot,
            usage=self.usage + self.discarded_usage,
            started_at=self.started_at,
            finished_at=utc_now(),
            previous_tasks=list(self.previous_tasks),
        )
