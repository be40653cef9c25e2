"""What a run that replayed a script and handed over keeps of it: a repair.

A repair replaces only what the model did in this run — the step the site changed under (or whose
replayed call failed) and whatever the model did until replay picked up again — and keeps every
step this run replayed exactly as the script had it (not as this item's run saw it: this item's
quirks are not the script's). It is saved only when it differs from the script, and never when a
step the model did holds a value of this item that the recording could not bind to a parameter:
that step would type this item's words into the next one.
"""

from __future__ import annotations

from collections.abc import Sequence

from webtask_core.replay.repeats import fold_repeats
from webtask_core.replay.script import ReplayScript, ScriptStep

__all__ = ["merge_repair", "unbound_reason"]

# Why a step is the model's that are not this item's values left unbound (kept in a repair).
_NOT_VALUES = ("set_output reports", "the step asks a person", "names a second element",
               "the page was not seen")


def unbound_reason(step: ScriptStep) -> str | None:
    """Why ``step`` holds a value of this item no parameter explains, or None."""
    reason = step.needs_model
    if reason is None or reason.startswith(_NOT_VALUES) or any(part in reason for part in _NOT_VALUES):
        return None
    return reason


def merge_repair(old: ReplayScript, recorded: Sequence[tuple[ScriptStep, int | None]],
                 params: dict[str, object]) -> tuple[list[ScriptStep] | None, str]:
    """The repaired steps (None: nothing to save) and why."""
    steps: list[ScriptStep] = []
    mine: list[ScriptStep] = []
    last: int | None = None
    for step, origin in recorded:
        if origin is None:
            steps.append(step)
            mine.append(step)
        elif origin != last and 0 <= origin < len(old.steps):
            steps.append(old.steps[origin])
        last = origin
    for step in mine:
        reason = unbound_reason(step)
        if reason is not None:
            return None, f"not saved: a step the model did holds a value of this item replay cannot bind ({reason})"
    steps = fold_repeats(steps, params)
    if _same_steps(steps, old.steps):
        return None, "not saved: the model did what the script does"
    return steps, "the model's steps in place of those it took over"


def _same_steps(new: list[ScriptStep], old: list[ScriptStep]) -> bool:
    """The same calls on the same elements, step by step (pages aside: a list that grew is no change)."""
    if len(new) != len(old):
        return False
    for mine, theirs in zip(new, old):
        if len(mine.actions) != len(theirs.actions) or (mine.needs_model is None) != (theirs.needs_model is None):
            return False
        for one, other in zip(mine.actions, theirs.actions):
            if (one.tool, one.input, one.each) != (other.tool, other.input, other.each):
                return False
            if (one.element is None) != (other.element is None) or (
                    one.element is not None and other.element is not None and not one.element.same_control(other.element)):
                return False
    return True
