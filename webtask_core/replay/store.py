"""Where replay scripts are kept: the session store's ``scripts/`` folder or S3 prefix, one JSON
document per script key. Listing and deleting them is one command each (``webtask scripts``)."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from typing import TYPE_CHECKING

from webtask_core.errors import ConfigError
from webtask_core.replay.script import SCRIPT_SCHEMA_VERSION, ReplayScript
from webtask_core.storage import parse_versioned_document

if TYPE_CHECKING:
    from webtask_core.storage import SessionStore

__all__ = ["ScriptStore", "script_key", "SCRIPTS_FOLDER"]

logger = logging.getLogger(__name__)

SCRIPTS_FOLDER = "scripts"
_SLUG = re.compile(r"[^a-z0-9]+")


def script_key(job: str, host: str, version: str | int = 1) -> str:
    """The key of "the same job": what the caller calls it (a template's name), the site's host and a
    version the caller bumps to start afresh — never the values: ``listing-task.shop.v1``, and when
    the names had to be slugged a short hash of them (``listing-task.shop-example-com.v1-3f09a1``)."""
    parts = []
    for name, value in (("job", job), ("host", host), ("version", version)):
        slug = _SLUG.sub("-", str(value).casefold()).strip("-")
        if not slug:
            raise ConfigError(f"replay {name}", f"must name something, got {value!r}")
        parts.append(slug)
    key = f"{parts[0][:48]}.{parts[1][:48]}.v{parts[2][:16]}"
    raw = f"{job}\n{host}\n{version}"
    if key != f"{job}.{host}.v{version}":  # slugging lost characters: a short hash keeps different jobs apart
        key += "-" + hashlib.sha256(raw.encode()).hexdigest()[:6]
    return key


def _older_version(raw: bytes) -> int | None:
    try:
        found = json.loads(raw).get("schema_version")
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return None
    return found if isinstance(found, int) and not isinstance(found, bool) and 0 < found < SCRIPT_SCHEMA_VERSION else None


class ScriptStore:
    """``ScriptStore(session_store)``: scripts beside the sessions (in its ``scripts/`` child)."""

    def __init__(self, sessions: SessionStore):
        self.sessions = sessions  # what else lives beside the scripts (the read-back's templates)
        self.backend = sessions.child(SCRIPTS_FOLDER)

    def __repr__(self) -> str:
        return f"ScriptStore({self.backend!r})"

    def location(self, key: str) -> str:
        return self.backend.location(key)

    @property
    def where(self) -> str:
        """The folder or ``s3://bucket/prefix`` the scripts are in."""
        return self.backend.where

    def load(self, key: str) -> ReplayScript | None:
        """The script, or None. One an older webtask wrote is None too (logged): it checked less than
        replay checks now, so the next completed run records it afresh over it. A corrupt one or one
        of a newer schema version is a :class:`SessionFormatError` naming it (and left in place)."""
        raw = self.backend.read_bytes(key)
        if raw is None:
            return None
        older = _older_version(raw)
        if older is not None:
            logger.warning("replay script %r at %s has schema_version %d (this webtask writes %d): recording it afresh",
                           key, self.location(key), older, SCRIPT_SCHEMA_VERSION)
            return None
        return parse_versioned_document(
            raw, ReplayScript, version=SCRIPT_SCHEMA_VERSION, where=f"replay script {key!r} at {self.location(key)}",
            advice="Delete it to record it afresh.")

    def save(self, script: ReplayScript) -> None:
        self.backend.write_bytes(script.key, script.model_dump_json(indent=1).encode())

    def delete(self, key: str) -> bool:
        return self.backend.delete(key)

    def keys(self) -> list[str]:
        return self.backend.keys()
