"""Where a listing page's templates are kept: beside the replay scripts, in the session store's
``readback/`` folder (or S3 prefix), one JSON document per script key."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pydantic import ValidationError

from webtask_core.readback.templates import TEMPLATES_SCHEMA_VERSION, PageTemplates

if TYPE_CHECKING:
    from webtask_core.storage import SessionStore

__all__ = ["TemplateStore", "READBACK_FOLDER"]

logger = logging.getLogger(__name__)

READBACK_FOLDER = "readback"


class TemplateStore:
    """``TemplateStore(session_store)``: the listing pages' templates, keyed like the scripts."""

    def __init__(self, sessions: SessionStore):
        self.backend = sessions.child(READBACK_FOLDER)

    def __repr__(self) -> str:
        return f"TemplateStore({self.backend!r})"

    def load(self, key: str) -> PageTemplates | None:
        """The templates, or None (none yet; or unreadable, another version: logged, and the next
        read-back by the model records them afresh — they are only ever a shortcut)."""
        raw = self.backend.read_bytes(key)
        if raw is None:
            return None
        try:
            templates = PageTemplates.model_validate_json(raw)
        except ValidationError as error:
            logger.warning("read-back templates %r at %s cannot be read (%s): reading the page with the model",
                           key, self.backend.location(key), error.errors()[0]["msg"])
            return None
        if templates.schema_version != TEMPLATES_SCHEMA_VERSION:
            logger.warning("read-back templates %r at %s are of schema version %d (this webtask reads %d): "
                           "recording them afresh", key, self.backend.location(key), templates.schema_version,
                           TEMPLATES_SCHEMA_VERSION)
            return None
        return templates

    def save(self, templates: PageTemplates) -> None:
        self.backend.write_bytes(templates.key, templates.model_dump_json(indent=1).encode())

    def delete(self, key: str) -> bool:
        return self.backend.delete(key)
