"""webtask_core: Claude driving a real Chromium through Playwright. Never imports prefect.

The public names are imported lazily, so ``import webtask_core`` stays cheap (no Playwright, no
anthropic SDK) until one of them is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "Agent",
    "AgentResult",
    "StepOutcome",
    "Worker",
    "WorkerOptions",
    "WorkerSession",
    "WorkerStatus",
    "TaskContext",
    "Step",
]

_WHERE = {
    "Agent": "webtask_core.agent",
    "AgentResult": "webtask_core.agent",
    "StepOutcome": "webtask_core.agent",
    "Worker": "webtask_core.worker",
    "WorkerOptions": "webtask_core.worker",
    "WorkerSession": "webtask_core.session",
    "WorkerStatus": "webtask_core.session",
    "Step": "webtask_core.session",
    "TaskContext": "webtask_core.task_context",
}

if TYPE_CHECKING:
    from webtask_core.agent import Agent, AgentResult, StepOutcome
    from webtask_core.session import Step, WorkerSession, WorkerStatus
    from webtask_core.task_context import TaskContext
    from webtask_core.worker import Worker, WorkerOptions


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
