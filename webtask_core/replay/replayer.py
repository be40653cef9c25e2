"""Replaying a script: each step's calls, without the model, for as long as a model reading the same
page would do the same thing with this run's values.

Before a scripted step is replayed, the page must be the page the step acted on when it was recorded
(its signature: URL, title, controls, words), every element the step acts on must be found as the
one control a model would take for it, every placeholder must have a value in this run, and before
a submit the page must show this run's values where the recording showed its own (the commit
check). Then the step's calls run through the same tools the model's calls do. The first time
anything differs — or a replayed call fails, or a step's output can only be read off the page — the
model takes over at that point, seeing in its conversation what was replayed and a note saying where
and why replay stopped. Replay picks up again when the model's steps reach a page that matches a
later step of the script (never the step it handed over, and never on the page where it handed over).

A step that submitted and then failed (the browser died after the click) is never replayed again:
the submission may have gone through, so the model looks first.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from webtask_core.llm.types import ModelReply, ToolCall, Usage
from webtask_core.replay.commit import verify_commit
from webtask_core.replay.folding import Normaliser
from webtask_core.replay.repeats import adds_an_item, expand_repeats
from webtask_core.replay.script import ReplayScript, ScriptAction
from webtask_core.replay.signature import PageSignature, PageView
from webtask_core.replay.templates import MissingValue, render, typed_params

if TYPE_CHECKING:
    from webtask_core.browser.models import Observation
    from webtask_core.record import Step

__all__ = ["Replayer", "Handover", "REPLAYED_TEXT"]

logger = logging.getLogger(__name__)

REPLAYED_TEXT = "(replayed step {number} of the recorded run {key!r}, revision {revision})"


@dataclass(frozen=True)
class Handover:
    """Where and why the model took over: ``kind`` says whose difference it was — ``site`` (the site
    changed: a run completed after it repairs the script), ``item`` (this item's state, e.g. listed
    already), ``values`` (this run's values cannot be written as recorded), ``model`` (the step is
    the model's in the script itself), ``failed`` (a replayed call failed), ``slow`` (a replayed call
    got no answer in time: the site is slow, not changed, and a submit may have gone through), ``unsure`` (a submit
    that may have gone through before a failure) or ``lost`` (the tab lost its page: blank or a
    browser error page after a failure or a slow answer)."""

    step: int  # the script's step number, from 1
    kind: str
    reason: str

    def __str__(self) -> str:
        return f"step {self.step}: {self.reason}"


class Replayer:
    """Decides, step by step, whether the next step is replayed (a scripted reply) or the model's."""

    def __init__(self, script: ReplayScript, params: Mapping[str, Any], *, identifying: Iterable[str] | None = None,
                 files: Sequence[str] = ()):
        self.script = script
        self.params = dict(params)
        self.files = tuple(files)
        # The same folding the recorder used, so pages are compared alike.
        self.normalise = Normaliser(params, identifying=identifying, files=self.files)
        # What each step typed, so a page is read knowing what was typed before it (as the recorder read it).
        self._typed_by = [{name for action in step.actions for name in typed_params(action.tool, action.input)}
                          for step in script.steps]
        self.position = 0  # the next scripted step
        self.replayed = 0  # steps replayed in this run
        self.handovers: list[Handover] = []  # each time the model took over
        self._handed_over_on: PageSignature | None = None  # the page where the model took over
        self._handed_over_step = -1  # the scripted step it took over
        self._pending_note: str | None = None
        self._decided: int | None = None  # the scripted step the last decision replayed
        self._decided_actions: list[ScriptAction] = []  # its actions as run (repeats expanded)
        self._committed: str | None = None  # the last replayed submit that ran without failing
        self._last_url = ""  # the page the last replayed step acted on
        self._last_document = 0.0  # and its document (Observation.document)
        self._model_first = False  # the next step is the model's before replay may resume
        self._look_again = False  # the page differed on a first look: let it settle, look once more
        self._looked_again_at = -1  # the scripted step that was given its second look
        self.last_view: PageView | None = None  # the page as the last decision read it (the recorder reads it too)
        # The replayed key presses that add the item typed just before to a list widget (call id -> the
        # item's text): the worker checks each made its chip, and presses once more when it did not.
        self.item_presses: dict[str, str] = {}

    @property
    def site_changed(self) -> bool:
        """Whether a handover was for a change of the site (a repaired run is worth keeping), not of
        this item (already listed: the script stays for the next item) or of this run's values."""
        return any(handover.kind in ("site", "failed") for handover in self.handovers)

    def checkpoint(self) -> dict[str, Any]:
        """The replay's position, to restore when the step it decided fails and is retried."""
        return {**vars(self), "handovers": list(self.handovers)}

    def restore(self, checkpoint: dict[str, Any]) -> None:
        vars(self).update(checkpoint, handovers=list(checkpoint["handovers"]))

    def failed(self, checkpoint: dict[str, Any], error: BaseException, *, started: Sequence[str] = ()) -> None:
        """The step decided since ``checkpoint`` raised: decide it afresh on its retry — unless it
        was a replayed submit that had started (``started``: the ids of the calls that began),
        which may have gone through: then the model looks first."""
        decided = self._decided if self.position != checkpoint["position"] else None
        if decided is not None:
            for number, action in enumerate(self._decided_actions):
                if action.commit and f"replay_{decided + 1}_{number + 1}" in started:
                    what = action.element.describe() if action.element is not None else action.tool
                    self._hand_over(None, decided, "unsure",
                                    f"the replayed {action.tool} on {what} failed ({error}); the submission may have "
                                    "gone through already. Look at the page (and the list of items) before submitting "
                                    "again")
                    return
        self.restore(checkpoint)

    @property
    def replaying(self) -> bool:
        """Whether the next step is the script's to decide (no hand-over pending, steps left)."""
        return self._handed_over_on is None and self.position < len(self.script.steps)

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
        self.normalise.typed = set().union(*self._typed_by[:self.position])
        view = self.last_view = PageView.of(observation, self.normalise)
        page = PageSignature.of(view)
        if self._handed_over_on is not None:
            if self._model_first:  # handed over after a step ran: the model acts before replay may resume
                self._model_first = False
                return None
            return self._resume(page, view)
        if _lost(observation) and not self.script.steps[self.position].page.url.startswith("about:"):
            # The tab lost its page (reopened blank after failures, a browser error page): that is
            # no change of the site, and a submit before it may have gone through.
            where = f"; the last page replayed was {self._last_url}" if self._last_url else ""
            self._hand_over(page, self.position, "lost", f"the page was lost ({observation.url or 'blank'}) "
                            f"after a failure of the browser or a slow answer, not a change of the site{where}")
            return None
        reply, kind, problem = self._reply_for(self.position, view)
        if reply is None and kind == "site" and self._looked_again_at != self.position:
            # A page still building (an editor without its frame yet) looks like another page: the
            # worker lets it settle and asks again, once, before the model is asked.
            self._look_again, self._looked_again_at = True, self.position
            return None
        if reply is None:
            self._hand_over(page, self.position, kind, problem)
        return reply

    @property
    def decided_step(self) -> int | None:
        """The script step (from 0) the last scripted reply replayed."""
        return self._decided

    def wants_another_look(self) -> bool:
        wanted, self._look_again = self._look_again, False
        return wanted

    def after(self, step: Step) -> bool:
        """A replayed step ran: a failed call hands the next step to the model (True). A submit that
        ran and did not clearly fail is remembered: any later hand-over says it may have gone through."""
        for call, action in zip(step.tool_calls, self._decided_actions):
            # a submit that ran, or that got no answer in time, may have gone through
            if action.commit and (call.ok or _NO_ANSWER.search(call.message or "")):
                what = action.element.describe() if action.element is not None else action.tool
                self._committed = f"{action.tool} on {what} (step {self.position})"
        failed = [call for call in step.tool_calls if not call.ok]
        if failed and _NO_ANSWER.search(failed[0].message or ""):
            # The site was slow, not changed: no repair is worth saving for it (issue 25 §6, §9).
            self._hand_over(None, self.position - 1, "slow", f"the replayed {failed[0].name} got no answer in time "
                            f"({failed[0].message}): the site is slow, not changed")
        elif failed:
            self._hand_over(None, self.position - 1, "failed", f"the replayed {failed[0].name} failed: {failed[0].message}")
        return bool(failed)

    # ---- helpers ----

    def _reply_for(self, index: int, view: PageView) -> tuple[ModelReply | None, str, str]:
        step = self.script.steps[index]
        if step.needs_model:
            return None, "model", step.needs_model
        for name, length in step.lengths.items():
            items = self.params.get(name)
            if not isinstance(items, list) or len(items) != length:
                count = len(items) if isinstance(items, list) else "no"
                return None, "values", (f"this run has {count} item(s) of {name}; the step names the recording's "
                                        f"{length} one by one")
        same_document = bool(self._last_document) and view.observation.document == self._last_document
        difference = step.page.difference(view, same_document=same_document)
        if difference is not None:
            return None, difference.kind, difference.message
        calls = []
        url = view.observation.url
        try:
            actions = expand_repeats(step.actions, self.params)  # a list's items: as many as this run has
        except MissingValue as missing:
            return None, "values", str(missing)
        for number, action in enumerate(actions):
            element_id = None
            if action.element is not None:
                element_id, problem = view.resolve(action.element)
                if element_id is None:
                    return None, "site", problem
            if action.commit and step.commit is not None:
                mismatch = verify_commit(step.commit, view, element_id, self.params, self.files)
                if mismatch is not None:
                    what = action.element.describe() if action.element else "the page"
                    return None, "site", f"before {action.tool} on {what}: {mismatch}"
            links = []
            for link in action.links:  # a link the report names: this run's, found again on this page
                found, why = view.resolve(link)
                href = view.observation.elements[found].attributes.get("href") if found is not None else None
                if href is None:
                    return None, "values", f"the report names a link that is not on this page ({why or 'no href'})"
                links.append(urljoin(url, href))
            try:
                arguments = render(action.input, self.params, page_url=url, element_id=element_id, files=self.files,
                                   links=links)
            except MissingValue as missing:
                return None, "values", str(missing)
            calls.append(ToolCall(id=f"replay_{index + 1}_{number + 1}", name=action.tool, input=arguments))
        self.item_presses = {
            calls[number].id: str(calls[number - 1].input.get("text") or calls[number - 1].input.get("option") or "")
            for number in range(1, len(actions)) if adds_an_item(actions[number - 1], actions[number])}
        self.position = index + 1
        self.replayed += 1
        self._decided, self._decided_actions = index, actions
        self._last_url, self._last_document = url, view.observation.document
        self._committed = None  # the page after the last submit is the script's: it went through as recorded
        text = REPLAYED_TEXT.format(number=index + 1, key=self.script.key, revision=self.script.revision)
        return ModelReply(text=text, tool_calls=calls, usage=Usage(), stop_reason="tool_use"), "", ""

    def _resume(self, page: PageSignature, view: PageView) -> ModelReply | None:
        if page == self._handed_over_on:
            return None
        for index in range(max(self.position, self._handed_over_step + 1), len(self.script.steps)):
            if self.script.steps[index].page.difference(view) is not None:
                continue
            reply, _, _ = self._reply_for(index, view)
            if reply is not None:
                self._handed_over_on = None
                return reply
        return None

    def _hand_over(self, page: PageSignature | None, index: int, kind: str, problem: str) -> None:
        handover = Handover(index + 1, kind, problem)
        # Handed over after a replayed step ran (a call failed, a submit may have gone through): the
        # next step is the model's, whatever page it is on; never a later scripted step straight away.
        self._model_first = page is None
        self.handovers.append(handover)
        logger.info("replay of %r handed over to the model (%s) at %s", self.script.key, kind, handover)
        self._handed_over_step = index
        self._handed_over_on = page if page is not None else PageSignature(url="", title="")
        self.position = max(self.position, index + 1) if kind == "unsure" else self.position
        done = f"Steps 1-{self.replayed} of this task were replayed from a recorded run; " if self.replayed else ""
        note = f"{done}replay stopped at {handover}. Look at the page and go on with the task from here yourself."
        if self._committed is not None:
            note += (f" The replayed {self._committed} ran and did not clearly fail: it may have gone through. "
                     "Look first (the page, and the list of items) before submitting anything again.")
        self._pending_note = note


# A call's failure that says the page did not answer in time (browser/tab.py's action limit).
_NO_ANSWER = re.compile(r"did not respond within|timed? ?out", re.IGNORECASE)


def _lost(observation: Observation) -> bool:
    """A tab that shows no page of the site: blank after a reopen, or the browser's error page."""
    url = observation.url or "about:blank"
    return url == "about:blank" or url.startswith(("chrome-error:", "chrome://"))
