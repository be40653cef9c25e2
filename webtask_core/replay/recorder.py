"""Turning a run's steps into a replay script while it runs.

After every step (replayed or the model's) the recorder keeps the page signature of the observation
the step acted on and each successful tool call, its element as a fingerprint taken from that same
observation (the element was there when the call was made) and its input with this run's values as
placeholders. Calls that failed or were skipped are left out: the run's later steps did what they
could not, and the script follows the run's successful path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from webtask_core.replay.script import (
    ELEMENT,
    ReplayScript,
    ScriptAction,
    ScriptStep,
    count_placeholders,
    parameterise,
)
from webtask_core.replay.signature import ElementFingerprint, Normaliser, PageSignature

if TYPE_CHECKING:
    from webtask_core.browser.models import Observation
    from webtask_core.record import Step

__all__ = ["Recorder"]

# Tools whose free text (not a value typed into the page) may quote parameters.
_FREE_TEXT_TOOLS = {"complete", "abort"}


class Recorder:
    def __init__(self, params: Mapping[str, Any], *, identifying: Iterable[str] | None = None):
        self.params = dict(params)
        self.normalise = Normaliser(params, identifying=identifying)
        self.steps: list[ScriptStep] = []

    def record(self, step: Step, observation: Observation) -> None:
        """Keep ``step`` (its calls made on ``observation``)."""
        actions: list[ScriptAction] = []
        needs_model = None
        for call in step.tool_calls:
            if not call.ok:
                continue
            if not isinstance(call.input, dict):
                continue
            action, literal_output = self._action(call.name, call.input, observation)
            if action is None:
                return  # an element the observation does not know: this step cannot be recorded
            if literal_output:
                needs_model = f"{call.name} reports a value read off the page, which a replay cannot know"
            if call.input.get("to_element_id") is not None:
                # Only element_id is fingerprinted: a second element (drag's target) would be a bare id.
                needs_model = f"{call.name} names a second element by id, which a replay cannot recognise"
            actions.append(action)
        if actions:
            # What the model said, kept for reading a script: with placeholders, like its calls.
            text, _ = parameterise(step.model_text, self.params, page_url=observation.url, free_text=True)
            self.steps.append(ScriptStep(page=PageSignature.of(observation, self.normalise),
                                         text=text, actions=actions, needs_model=needs_model))

    def script(self, key: str, *, revision: int = 1, source: str = "") -> ReplayScript:
        return ReplayScript(key=key, revision=revision, params=sorted(self.params), steps=list(self.steps),
                            source=source)

    def _action(self, tool: str, raw: dict[str, Any],
                observation: Observation) -> tuple[ScriptAction | None, bool]:
        data = dict(raw)
        element = None
        element_id = data.get("element_id")
        if isinstance(element_id, str):
            info = observation.elements.get(element_id)
            if info is None:
                return None, False
            element = ElementFingerprint.of(info, self.normalise)
            data["element_id"] = ELEMENT
        value, literal = parameterise(
            {key: item for key, item in data.items() if key != "element_id"}, self.params,
            page_url=observation.url, prefer=element.name if element is not None else None,
            free_text=tool in _FREE_TEXT_TOOLS,
        )
        if "element_id" in data:
            value["element_id"] = data["element_id"]
        if tool == "wait_for" and isinstance(value.get("text"), str):  # "2 photos ready" for two photos
            value["text"] = count_placeholders(value["text"], self.params)
        return ScriptAction(tool=tool, input=value, element=element), literal and tool == "set_output"
