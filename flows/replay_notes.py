"""What replay checked and did, for the step artifacts, and where a picture is worth its cost.

Replayed steps take no screenshot (they stay fast); what a person needs to see is the page where
replay handed over to the model (a step the model decided, whose picture the worker took anyway)
and the last page of a replayed run (the final screenshot every run takes). This module follows a
run's replay through what :class:`~webtask_core.task_run.TaskRun` exposes — its handovers and its
replayer's script and position — and turns it into artifact lines; it never changes the replay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webtask_core.record import Step

if TYPE_CHECKING:
    from webtask_core.task_run import TaskRun

__all__ = ["ReplayWatch", "StepReplay"]


class StepReplay:
    """What one step's artifact says about replay, and whether its picture shows a handover."""

    def __init__(self, lines: list[str], handover_page: bool, handovers: list[str]):
        self.lines = lines  # markdown lines for the step artifact
        self.handover_page = handover_page  # this step's page is where replay handed over
        self.handovers = handovers


class ReplayWatch:
    """Call :meth:`before` and :meth:`after` around each step of a run with replay."""

    def __init__(self, task_run: TaskRun):
        self.task_run = task_run
        self._seen = 0
        self._pending: list[str] = []  # handovers whose page no model step has shown yet

    def before(self) -> None:
        self._seen = len(self.task_run.replay_handovers)

    def after(self, step: Step) -> StepReplay:
        handovers = self.task_run.replay_handovers
        new, self._seen = handovers[self._seen:], len(handovers)
        self._pending += new
        lines: list[str] = []
        if step.replayed:
            lines += _replayed_lines(self.task_run.replayer, step)
        shows_handover = bool(self._pending) and not step.replayed and step.screenshot is not None
        if new:
            lines.append("**Replay handed over to the model**: " + "; ".join(new))
        elif shows_handover:
            lines.append("**The model took over from replay here**: " + "; ".join(self._pending))
        pending = list(self._pending)
        if shows_handover:
            self._pending.clear()
        return StepReplay(lines, shows_handover, pending if shows_handover else new)


def _replayed_lines(replayer: Any, step: Step) -> list[str]:
    """Which recorded step was replayed, and what was checked before its calls ran. Read off the
    replayer's script and position; where those are not there (the replay changed), a general line."""
    script = getattr(replayer, "script", None)
    position = getattr(replayer, "position", None)
    steps = getattr(script, "steps", None)
    if script is None or not isinstance(position, int) or not steps or not 0 < position <= len(steps):
        return ["**Replay**: decided by the replay script, without a model call; its page and elements "
                "matched the recording before the calls ran."]
    recorded = steps[position - 1]
    page = recorded.page
    lines = [f"**Replay**: step {position} of script `{script.key}` (revision {script.revision}), "
             "without a model call."]
    controls = getattr(page, "controls", None) or getattr(page, "kinds", None) or ()
    checked = (f"the page matched the recorded one (address `{page.url}`, title \"{page.title}\", "
               f"{len(controls)} control(s)" + (", showing this run's values" if getattr(page, "keyed", False) else "")
               + ")")
    elements = [action.element.describe() for action in recorded.actions if action.element is not None]
    if elements:
        checked += "; each element acted on was found by its fingerprint, one element and no guess: " + \
            ", ".join(elements)
    commit = getattr(recorded, "commit", None)
    commits = [action for action in recorded.actions if getattr(action, "commit", False)]
    if commits and commit is not None and not getattr(commit, "unsure", None):
        what = commits[0].element.describe() if commits[0].element is not None else commits[0].tool
        checked += (f"; before {commits[0].tool} on {what}, that the form showed this run's values "
                    f"({len(getattr(commit, 'controls', []))} control(s)) and the page its words")
    lines.append(f"**Replay checked**: {checked}.")
    return lines
