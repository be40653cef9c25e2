"""What a finished task leaves behind: the TaskRecord, its Step records, and their JSON form.

``WorkerSession`` is the same class under its first name (``Worker.do`` returns it); both names stay.

A TaskRecord is plain data (pydantic). It is what the Prefect layer stores between flow runs, so it
carries a ``schema_version``; :meth:`TaskRecord.from_json` refuses a corrupt document or another
version with a :class:`~webtask_core.errors.SessionFormatError` instead of guessing.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from webtask_core.errors import SessionFormatError
from webtask_core.llm.types import Message, Usage
from webtask_core.progress import describe_call

__all__ = [
    "SCHEMA_VERSION",
    "WorkerStatus",
    "ToolCallRecord",
    "StepTimings",
    "Step",
    "PreviousTask",
    "TaskRecord",
    "WorkerSession",
    "utc_now",
]

SCHEMA_VERSION = 1


def utc_now() -> datetime:
    return datetime.now(UTC)


class WorkerStatus(str, Enum):
    completed = "completed"
    aborted = "aborted"
    max_steps = "max_steps"
    # The task completed, and reading its listing back found the site showing something else (or
    # not finding it at all): webtask_core.readback. Set by TaskRun.finish, never by the worker.
    mismatch = "mismatch"


class ToolCallRecord(BaseModel):
    """One tool call the model made in a step and what came of it."""

    id: str
    name: str
    input: Any = None
    ok: bool
    message: str
    duration_ms: float = 0.0  # how long the call ran (0 when skipped or refused)


class StepTimings(BaseModel):
    observe_ms: float = 0.0
    model_ms: float = 0.0
    act_ms: float = 0.0
    total_ms: float = 0.0


class Step(BaseModel):
    """The record of one step: the page it saw, what the model said and did, and how long it took."""

    index: int  # 1-based within its task
    url: str
    title: str
    model_text: str = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    timings: StepTimings = Field(default_factory=StepTimings)
    screenshot: str | None = None  # small JPEG, base64
    warnings: list[str] = Field(default_factory=list)  # stuck warnings the model was shown
    error: str | None = None  # a step-level problem: no tool call, empty reply, a hard stop
    ended: WorkerStatus | None = None  # set on the step that ended the task
    replayed: bool = False  # its calls came from a replay script, not from the model

    @property
    def ok(self) -> bool:
        return all(call.ok for call in self.tool_calls)

    @property
    def asked_model(self) -> bool:
        """The model decided this step (not a replay script, nor a stop before any call)."""
        return not self.replayed and bool(self.usage.total_tokens or self.model_text or self.tool_calls)

    @property
    def decided_by(self) -> str:
        """``replayed``, ``model``, or ``none`` (a stop before any call): what step artifacts show."""
        return "replayed" if self.replayed else "model" if self.asked_model else "none"

    def summary(self) -> str:
        """One line: the tools called and their results (used by the CLI and artifacts)."""
        if not self.tool_calls:
            return "(no tool call)"
        parts = []
        for call in self.tool_calls:
            mark = "ok" if call.ok else "error"
            parts.append(f"{describe_call(call.name, call.input)} -> {mark}: {call.message}")
        return "; ".join(parts)


class PreviousTask(BaseModel):
    """A task done earlier in a persisted conversation, as the model is reminded of it."""

    task: str
    status: WorkerStatus
    feedback: str = ""
    output: Any = None
    steps_used: int = 0


class TaskRecord(BaseModel):
    """A finished task: outcome, output, feedback, the conversation, the steps, the final page."""

    schema_version: int = SCHEMA_VERSION
    status: WorkerStatus
    output: Any = None
    feedback: str = ""
    task_description: str
    # The tool-call conversation after the task message: assistant tool_use / user tool_result
    # messages with page states collapsed; it always ends with a user message (the last results),
    # so a following task can continue it. Includes the pairs of earlier persisted tasks.
    pairs: list[Message] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    steps_used: int = 0
    max_steps: int
    final_url: str = ""
    final_dom: str = ""
    final_screenshot: str | None = None  # base64 JPEG of the viewport at the end
    usage: Usage = Field(default_factory=Usage)
    started_at: datetime
    finished_at: datetime
    previous_tasks: list[PreviousTask] = Field(default_factory=list)

    def to_json(self, *, indent: int | None = None) -> str:
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes) -> TaskRecord:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SessionFormatError(f"stored session is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise SessionFormatError(
                f"stored session must be a JSON object, got {type(data).__name__}"
            )
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise SessionFormatError(
                f"stored session has schema_version {version!r}; this version of webtask reads "
                f"only schema_version {SCHEMA_VERSION}"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise SessionFormatError(f"stored session is corrupt: {_first_errors(exc)}") from exc

    def as_previous_task(self) -> PreviousTask:
        return PreviousTask(
            task=self.task_description,
            status=self.status,
            feedback=self.feedback,
            output=self.output,
            steps_used=self.steps_used,
        )


def _first_errors(exc: ValidationError, limit: int = 3) -> str:
    errors = exc.errors()
    parts = [
        f"{'.'.join(str(loc) for loc in err['loc']) or '(root)'}: {err['msg']}"
        for err in errors[:limit]
    ]
    more = f" (+{len(errors) - limit} more)" if len(errors) > limit else ""
    return "; ".join(parts) + more


# The seed's name for the record: Worker.do(...) -> WorkerSession.
WorkerSession = TaskRecord
