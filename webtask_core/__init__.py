"""webtask_core: Claude driving a real Chromium through Playwright. Never imports prefect.

The public names are imported lazily, so ``import webtask_core`` stays cheap (no Playwright, no
anthropic SDK) until one of them is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webtask_core.lazy_exports import lazy_exports

__all__ = [
    "Agent",
    "AgentResult",
    "StepOutcome",
    "Worker",
    "WorkerOptions",
    "TaskRecord",
    "WorkerSession",
    "WorkerStatus",
    "TaskContext",
    "TaskRun",
    "Step",
    "tool",
    "ToolContext",
    "Replay",
]

_WHERE = {
    "Agent": "webtask_core.agent",
    "AgentResult": "webtask_core.agent",
    "StepOutcome": "webtask_core.agent",
    "Worker": "webtask_core.worker",
    "WorkerOptions": "webtask_core.worker",
    "TaskRecord": "webtask_core.record",
    "WorkerSession": "webtask_core.record",
    "WorkerStatus": "webtask_core.record",
    "Step": "webtask_core.record",
    "TaskContext": "webtask_core.task_context",
    "TaskRun": "webtask_core.task_run",
    "tool": "webtask_core.tools",
    "ToolContext": "webtask_core.tools",
    "Replay": "webtask_core.replay",
}

if TYPE_CHECKING:
    from webtask_core.agent import Agent, AgentResult, StepOutcome
    from webtask_core.record import Step, TaskRecord, WorkerSession, WorkerStatus
    from webtask_core.replay import Replay
    from webtask_core.task_context import TaskContext
    from webtask_core.task_run import TaskRun
    from webtask_core.tools import ToolContext, tool
    from webtask_core.worker import Worker, WorkerOptions


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
