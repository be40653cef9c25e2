"""A replay script: what a completed run did, step by step, with this run's values taken out.

Each step keeps the page it acted on (a :class:`PageSignature`), its tool calls — each call's
element as an :class:`ElementFingerprint` (never the per-observation id) and its input with the
task's parameters as placeholders (:mod:`~webtask_core.replay.templates`) — and, for a step that
submits, what the page showed right before (a :class:`CommitCheck`). A model's step that filled a
form and submitted it in one turn is kept as two steps, split before the submit, so replay looks at
the filled form before it submits.

A step replay must leave to the model says why in ``needs_model``: an output read off the page
(``set_output`` with a literal), or a value the recording could not bind to a parameter without a
guess (a ``5`` that fits both price and quantity, a title typed shortened).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from webtask_core.replay.commit import CommitCheck
from webtask_core.replay.signature import ElementFingerprint, PageSignature

__all__ = ["ScriptAction", "ScriptStep", "ReplayScript", "SCRIPT_SCHEMA_VERSION"]

# 2: pages as control multisets and text digests, fields with the text beside them, commit checks,
# formatted placeholders. 3: list items and repeats, hrefs folded with this run's values, a
# control's section, sentences of a form, words that may be the site's own. A script of an older
# version is recorded afresh (ScriptStore.load).
SCRIPT_SCHEMA_VERSION = 3


class ScriptAction(BaseModel):
    tool: str
    input: dict[str, Any] = Field(default_factory=dict)
    element: ElementFingerprint | None = None
    commit: bool = False  # it may submit or change something for good (see replay.commit)
    # The list parameter this action is repeated over: consecutive actions with the same ``each``
    # run once per item of this run's list, ``{{param:NAME[#]}}`` standing for the item.
    each: str | None = None
    links: list[ElementFingerprint] = Field(default_factory=list)  # the links {{link:N}} names, found again


class ScriptStep(BaseModel):
    page: PageSignature  # the page before the step: replay checks it before acting
    text: str = ""  # what the model said (shown in the conversation when the model takes over)
    actions: list[ScriptAction]
    # What the page showed right before the step's commit (its first action when it has one).
    commit: CommitCheck | None = None
    needs_model: str | None = None  # why this step cannot be replayed
    # List parameters whose items the step types by their place (a photo into each of two slots):
    # replayed only for a list of the recording's length.
    lengths: dict[str, int] = Field(default_factory=dict)

    @property
    def commits(self) -> bool:
        return any(action.commit for action in self.actions)


class ReplayScript(BaseModel):
    schema_version: int = SCRIPT_SCHEMA_VERSION
    key: str
    revision: int = 1  # 1 when first recorded; +1 each time a run repaired it
    params: list[str] = Field(default_factory=list)  # the parameter names the recording had
    steps: list[ScriptStep]
    recorded_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    source: str = ""  # what recorded it (a flow run id, "agent")

    @property
    def replayable_steps(self) -> int:
        return sum(1 for step in self.steps if step.needs_model is None)
