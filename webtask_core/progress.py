"""What a running task is doing right now, for a live display (the ``webtask run`` status line).

``Agent(llm, progress=callback)`` (or ``Worker(..., progress=callback)``) calls ``callback(Progress)``
when a step starts observing the page, when it asks the model, before each tool call, and when a
failed step is about to be retried. The callback runs on the event loop, so it must be quick. It is
for display only: the Step records stay what a task is judged by.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any, NamedTuple

__all__ = ["Phase", "Progress", "ProgressCallback", "describe_call"]


class Phase(str, Enum):
    observing = "observing the page"
    thinking = "waiting for the model"
    acting = "acting"
    retrying = "retrying"


class Progress(NamedTuple):
    step: int  # 1-based index of the step running (or about to be retried)
    max_steps: int
    phase: Phase
    detail: str = ""  # acting: the tool call, e.g. "click(element_id='button-3')"; retrying: the error
    tokens: int = 0  # the task's tokens so far (input, output, cache), this step's model call included once answered


ProgressCallback = Callable[[Progress], None]


def describe_call(name: str, params: Any, limit: int = 80) -> str:
    """``name(key='value', ...)``, cut to ``limit`` characters of parameters (a fill's text can be long)."""
    text = ", ".join(f"{key}={value!r}" for key, value in params.items()) if isinstance(params, dict) else repr(params)
    return f"{name}({text if len(text) <= limit else text[: limit - 1] + '…'})"
