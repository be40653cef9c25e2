"""What a batch listing upload returns and records: one `ListingResult` per listing.

A downstream flow consumes the list the batch returns; the ledger stores the completed ones, so a
rerun reports them without running them again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from webtask_core.llm.types import Usage

__all__ = ["ListingStatus", "ListingResult", "ListingOutput", "FAILED_STATUSES"]

# completed: listed (or found already listed); aborted / max_steps: the agent gave up;
# mismatch: published, but the read-back found the site showing it otherwise than asked (the ledger
# keeps it: a rerun never lists it again, unless it repairs it); error: the run broke (a missing
# photo, a crashed worker, ...); invalid: a manifest row that did not validate (skip_invalid=True).
ListingStatus = Literal["completed", "aborted", "max_steps", "mismatch", "error", "invalid"]
FAILED_STATUSES: frozenset[str] = frozenset({"aborted", "max_steps", "mismatch", "error"})


class ListingOutput(BaseModel):
    """The structured output every listing task reports through ``set_output``."""

    listing_url: str = Field(description="The URL of the published listing's page.")
    sku: str = Field(description="The SKU of the listing, as shown on the marketplace.")


class ListingResult(BaseModel):
    sku: str
    status: ListingStatus
    listing_url: str | None = None
    feedback: str = ""
    steps: int = 0
    tokens: int = 0
    # By kind, to price a listing: cache reads cost a tenth of fresh input, cache writes a bit more.
    usage: Usage = Field(default_factory=Usage)
    skipped: bool = False  # True: found in the ledger, not run again by this batch
    flow_run_id: str | None = None  # the run-webtask run that did the work (an earlier one when skipped)
    content_hash: str | None = None
    model_calls: int = 0  # steps the model decided
    replayed_steps: int = 0  # steps a replay script decided: model calls saved
    replay: str = "none"  # replayed, repaired, recorded, handed_over, none (see webtask_core.task_run)
    cost_usd: float | None = None  # what its model calls cost (None: unknown, or no price for the model)
    saved_by_replay_usd: float | None = None  # its replayed steps priced as model calls (an estimate)
    readback: str = ""  # the read-back: passed, mismatch, unread, skipped ("" when none was asked)
    mismatched_fields: list[str] = Field(default_factory=list)  # what the site shows otherwise than asked
    finished_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES

    @property
    def uncached_input_tokens(self) -> int:
        """Input tokens not read from the prompt cache: fresh input and cache writes (priced apart)."""
        return self.usage.input_tokens + self.usage.cache_write_tokens
