"""Replay in the flows: the ``replay`` parameter of ``run-webtask``, and where its scripts live.

Scripts are kept by the same store as sessions (``WEBTASK_SESSION_STORE``: a folder or an S3
prefix), in its ``scripts/`` child; ``webtask scripts list|show|delete`` manages them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from webtask_core.errors import ConfigError
from webtask_core.replay import Replay, ScriptStore
from webtask_core.storage import SessionStore, validate_session_key
from webtask_flows.session_store import get_session_store

__all__ = ["ReplaySpec", "get_script_store"]


class ReplaySpec(BaseModel):
    """What ``run-webtask`` replays (JSON, so deployments can pass it).

    ``key``: the script's key — the same job on the same site (see ``webtask_core.replay.script_key``),
    never the values. ``params``: the values the task was written from (a template's fields); the
    script keeps them as placeholders and this run types its own. ``identifying``: the params that
    tell one item from another (a SKU; default all). ``record``: save the script a completed run
    yields (the first recording, or a repair where the site changed).
    """

    key: str
    params: dict[str, Any] = Field(default_factory=dict)
    identifying: list[str] | None = None
    record: bool = True

    def check(self) -> None:
        try:
            validate_session_key(self.key)
        except ConfigError as exc:
            raise ConfigError("replay.key", exc.problem) from None
        unknown = sorted(set(self.identifying or ()) - set(self.params))
        if unknown:
            raise ConfigError("replay.identifying", f"names {', '.join(unknown)}, which are not in replay.params")

    def replay(self, store: ScriptStore, *, source: str = "") -> Replay:
        identifying = tuple(self.identifying) if self.identifying is not None else None
        return Replay(key=self.key, params=self.params, store=store, identifying=identifying,
                      record=self.record, source=source)


async def get_script_store(sessions: SessionStore | None = None) -> ScriptStore:
    """The scripts beside the sessions (``WEBTASK_SESSION_STORE``, else ``~/.webtask/sessions``)."""
    return ScriptStore(sessions if sessions is not None else await get_session_store())
