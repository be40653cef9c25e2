"""Replay: a task learned once runs again with zero model calls, and hands over to the model where
the site changed.

    replay = Replay(key=script_key("listing-task", "shop.example.com"), params=listing_fields,
                    store=ScriptStore(open_session_store(folder)))
    result = await agent.do(task, replay=replay)

The first run (no script under the key) is the model's; when it completes, its steps become the
script. Later runs replay it (:mod:`~webtask_core.replay.replayer`): the same calls with this run's
values, each step only after its page and elements were recognised. Where anything differs the model
takes over, and a run it completed that way saves a repaired script. See docs/internals.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from webtask_core.replay.recorder import Recorder
from webtask_core.replay.replayer import Replayer
from webtask_core.replay.script import ReplayScript, ScriptAction, ScriptStep
from webtask_core.replay.signature import ElementFingerprint, PageSignature
from webtask_core.replay.store import ScriptStore, script_key

__all__ = [
    "Replay",
    "ReplayScript",
    "ScriptStep",
    "ScriptAction",
    "ScriptStore",
    "script_key",
    "Recorder",
    "Replayer",
    "ElementFingerprint",
    "PageSignature",
]


@dataclass(frozen=True)
class Replay:
    """What a run replays: the script ``key`` in ``store``, with this run's parameter values.

    ``params``: the values the task was written from (a template's fields); recorded values equal to
    one of them become placeholders, so the next run types its own. ``identifying``: the parameters
    that tell one item from another (a SKU, a title; default all): a recorded page that showed one
    of them is compared strictly (a search for this item), one that did not may have gained links
    (a list of earlier items). ``record``: save the script this run yields — the first recording, or
    a repair after the model took over (default True).
    """

    key: str
    params: Mapping[str, Any]
    store: ScriptStore
    identifying: tuple[str, ...] | None = None
    record: bool = True
    source: str = field(default="", compare=False)  # who records (a flow run id), kept in the script
