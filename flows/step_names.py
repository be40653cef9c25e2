"""Task runs named after what their step did: ``step 3 · fill "Price"``, ``step 4 · replayed click "Next"``.

Prefect names a task run before it runs (``step 3``); what the step did is known only after. The
task run recorder takes the name from every task run event, so renaming the running task run's
record before it finishes makes its final state event carry the new name, and the UI lists steps
by what they did. An element is called by what the page showed for it (its label, text,
placeholder or name), as a person would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webtask_core.record import Step, ToolCallRecord

if TYPE_CHECKING:
    from webtask_core.browser.models import Observation

__all__ = ["step_run_name", "rename_current_task_run"]

_LABEL_CHARS = 32
_NAME_CHARS = 80  # the UI's task run list shows about this much
_QUIET_CALLS = {"wait_for", "scroll"}  # named only when the step did nothing else


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _label(call: ToolCallRecord, observation: Observation | None) -> str:
    params = call.input if isinstance(call.input, dict) else {}
    element_id = params.get("element_id")
    if isinstance(element_id, str) and observation is not None and element_id in observation.elements:
        element = observation.elements[element_id]
        shown = (element.text or element.attributes.get("placeholder") or element.attributes.get("aria-label")
                 or element.name or "")
        if shown.strip():
            return f'"{_clip(shown, _LABEL_CHARS)}"'
    if call.name == "navigate" and isinstance(params.get("url"), str):
        return _clip(params["url"], _LABEL_CHARS)
    if call.name in ("wait_for", "type") and isinstance(params.get("text"), str):
        return f'"{_clip(params["text"], _LABEL_CHARS)}"'
    if call.name == "select_option" and isinstance(params.get("option"), str):
        return f'"{_clip(params["option"], _LABEL_CHARS)}"'
    return element_id if isinstance(element_id, str) else ""


def step_run_name(step: Step, observation: Observation | None = None) -> str:
    """``step N · <the step's main call> [+k]``; replayed steps say so; a step with no call says why."""
    prefix = f"step {step.index} · " + ("replayed " if step.replayed else "")
    calls = step.tool_calls
    if not calls:
        return _clip(prefix + ("stopped: " + step.error if step.error else "no action"), _NAME_CHARS)
    main = next((call for call in calls if call.name not in _QUIET_CALLS), calls[0])
    label = _label(main, observation)
    text = f"{prefix}{main.name}{' ' + label if label else ''}"
    if not main.ok:
        text += " (failed)"
    if len(calls) > 1:
        text += f" +{len(calls) - 1}"
    return _clip(text, _NAME_CHARS)


def rename_current_task_run(name: str) -> bool:
    """Give the running task run this name; its next state event carries it to the server."""
    from prefect.context import TaskRunContext

    context = TaskRunContext.get()
    if context is None or context.task_run is None:
        return False
    context.task_run.name = name
    return True
