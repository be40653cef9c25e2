"""Replaying a script: each step's calls, without the model, for as long as the site still matches.

Before a scripted step is replayed, the page must match the page the step acted on when it was
recorded (its signature), every element the step acts on must be found by its fingerprint (one
element, not a guess among several), and every placeholder must have a value in this run. Then the
step's calls run through the same tools the model's calls do. The first time anything differs — or
a replayed call fails, or a step's output can only be read off the page — the model takes over at
that point, seeing in its conversation what was replayed and a note saying where and why replay
stopped. Replay picks up again when the model's steps reach a page that matches a later step of the
script (never the step it handed over, and never on the page where it handed over).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from webtask_core.llm.types import ModelReply, ToolCall, Usage
from webtask_core.replay.script import MissingValue, ReplayScript, fill_in
from webtask_core.replay.signature import ElementFingerprint, Normaliser, PageSignature, page_fingerprints, resolve_element

if TYPE_CHECKING:
    from webtask_core.browser.models import Observation
    from webtask_core.record import Step

__all__ = ["Replayer", "REPLAYED_TEXT"]

REPLAYED_TEXT = "(replayed step {number} of the recorded run {key!r}, revision {revision})"


class Replayer:
    """Decides, step by step, whether the next step is replayed (a scripted reply) or the model's."""

    def __init__(self, script: ReplayScript, params: Mapping[str, Any], *, identifying: Iterable[str] | None = None):
        self.script = script
        self.params = dict(params)
        # The same folding the recorder used, so pages are compared alike.
        self.normalise = Normaliser(params, identifying=identifying)
        self.position = 0  # the next scripted step
        self.replayed = 0  # steps replayed in this run
        self.handovers: list[str] = []  # why the model took over, each time it did
        # Whether a handover was for a change of the site (the repaired run is worth keeping), not of
        # this item (already listed: the script stays for the next item).
        self.site_changed = False
        self._handed_over_on: PageSignature | None = None  # the page where the model took over
        self._handed_over_step = -1  # the scripted step it took over
        self._pending_note: str | None = None
        self._candidates: list[tuple[str, ElementFingerprint]] | None = None  # of the page being decided

    def checkpoint(self) -> dict[str, Any]:
        """The replay's position, to restore when the step it decided fails and is retried."""
        return {**vars(self), "handovers": list(self.handovers)}

    def restore(self, checkpoint: dict[str, Any]) -> None:
        vars(self).update(checkpoint, handovers=list(checkpoint["handovers"]))

    @property
    def handed_over(self) -> bool:
        return bool(self.handovers)

    def take_note(self) -> str | None:
        """What the model should be told at the step where it takes over (once)."""
        note, self._pending_note = self._pending_note, None
        return note

    def decide(self, observation: Observation) -> ModelReply | None:
        """The scripted reply for this page, or None when the model must decide this step."""
        if self.position >= len(self.script.steps):
            return None
        page = PageSignature.of(observation, self.normalise)
        self._candidates = None
        if self._handed_over_on is not None:
            return self._resume(page, observation)
        reply, problem = self._reply_for(self.position, page, observation)
        if reply is None:
            item_only = self.script.steps[self.position].page.only_grew(page)
            self._hand_over(page, self.position, problem, site_changed=not item_only)
        return reply

    def after(self, step: Step) -> None:
        """A replayed step ran: a failed call hands the next step to the model."""
        failed = [call for call in step.tool_calls if not call.ok]
        if failed:
            self._hand_over(None, self.position - 1, f"the replayed {failed[0].name} failed: {failed[0].message}")

    # ---- helpers ----

    def _reply_for(self, index: int, page: PageSignature,
                   observation: Observation) -> tuple[ModelReply | None, str]:
        step = self.script.steps[index]
        if step.needs_model:
            return None, step.needs_model
        difference = step.page.difference(page)
        if difference is not None:
            return None, difference
        calls = []
        for number, action in enumerate(step.actions):
            element_id = None
            if action.element is not None:
                if self._candidates is None:
                    self._candidates = page_fingerprints(observation, self.normalise)
                element_id, problem = resolve_element(action.element, observation, self.normalise,
                                                      candidates=self._candidates)
                if element_id is None:
                    return None, problem
            try:
                arguments = fill_in(action.input, self.params, page_url=observation.url, element_id=element_id)
            except MissingValue as missing:
                return None, str(missing)
            calls.append(ToolCall(id=f"replay_{index + 1}_{number + 1}", name=action.tool, input=arguments))
        self.position = index + 1
        self.replayed += 1
        text = REPLAYED_TEXT.format(number=index + 1, key=self.script.key, revision=self.script.revision)
        return ModelReply(text=text, tool_calls=calls, usage=Usage(), stop_reason="tool_use"), ""

    def _resume(self, page: PageSignature, observation: Observation) -> ModelReply | None:
        if page == self._handed_over_on:
            return None
        for index in range(max(self.position, self._handed_over_step + 1), len(self.script.steps)):
            reply, _ = self._reply_for(index, page, observation)  # checks the page before any element
            if reply is not None:
                self._handed_over_on = None
                return reply
        return None

    def _hand_over(self, page: PageSignature | None, index: int, problem: str, *, site_changed: bool = True) -> None:
        reason = f"step {index + 1}: {problem}"
        self.handovers.append(reason)
        self.site_changed = self.site_changed or site_changed
        self._handed_over_step = index
        self._handed_over_on = page if page is not None else PageSignature(url="", title="", kinds=())
        done = f"Steps 1-{self.replayed} of this task were replayed from a recorded run; " if self.replayed else ""
        self._pending_note = (f"{done}replay stopped at {reason}. Look at the page and go on with the task from here "
                              "yourself.")
