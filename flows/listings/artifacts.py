"""What a batch shows in the Prefect UI: a progress artifact updated after every listing, and a
summary table keyed for the manifest (runs of the same manifest are versions of one artifact).

Artifacts belong to the flow run they are created in, so call these from the batch flow itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from webtask_core.pricing import format_usd
from webtask_flows.listings.models import ListingResult

if TYPE_CHECKING:
    from webtask_flows.listings.spend import BatchSpend

__all__ = ["BatchProgress", "publish_summary", "summary_rows", "summary_line", "model_calls_line", "cost_line",
           "cause_first", "failure_reason"]

_FEEDBACK_CHARS = 200


def summary_line(results: Sequence[ListingResult], total: int) -> str:
    """``3/5 done: 2 completed, 1 already done, 1 aborted``."""
    counts = Counter("already done" if r.skipped else r.status for r in results)
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"{len(results)}/{total} done" + (f": {parts}" if parts else "")


class BatchProgress:
    """A progress artifact: created at 0 %, updated after every finished listing."""

    def __init__(self, key: str, total: int):
        self.key = key
        self.total = total
        self._artifact_id: UUID | None = None

    async def start(self) -> None:
        from prefect.artifacts import acreate_progress_artifact

        self._artifact_id = await acreate_progress_artifact(
            progress=0.0 if self.total else 100.0, key=self.key,
            description=f"0/{self.total} listings done",
        )

    async def update(self, results: Sequence[ListingResult]) -> None:
        from prefect.artifacts import aupdate_progress_artifact

        if self._artifact_id is None:
            raise RuntimeError("BatchProgress.start() was not called")
        done = len(results)
        progress = 100.0 * done / self.total if self.total else 100.0
        await aupdate_progress_artifact(
            self._artifact_id, progress=round(progress, 1), description=summary_line(results, self.total)
        )


# Prefect's artifact page gives the table about 844 px (the classic UI in a 1,400 px window; the new
# one, whose side panel is wider, in a 1,540 px one): the first columns fit it — why a listing failed
# (its cause's words first), which one, how it ended, what it cost, where it is (a URL of ~40
# characters); the others (model calls, replay, tokens by kind, the whole feedback, the flow run)
# come after, to scroll to.
_REASON_CHARS = 34


def _clipped(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _usd(amount: float | None) -> str:
    return format_usd(amount) if amount is not None else ""


def cause_first(text: str) -> str:
    """An error's cause in its own words first, what wrapped it after: ``PermanentModelError: model API
    returned 400: invalid_request_error: the listing is set to fail`` reads ``the listing is set to fail
    (PermanentModelError: model API returned 400: invalid_request_error)``. The cause is the last
    ``: ``-separated part that says something (three words or more), with what follows it."""
    parts = " ".join(text.split()).split(": ")
    for index in range(len(parts) - 1, 0, -1):
        if len(parts[index].split()) >= 3:
            return f"{': '.join(parts[index:])} ({': '.join(parts[:index])})"
    return " ".join(text.split())


def failure_reason(result: ListingResult) -> str:
    """Why a listing did not complete, as a person reads it first: an error's cause before its
    wrapping (the agent's own words, for an abort, are already a sentence)."""
    return cause_first(result.feedback) if result.status in ("error", "invalid") else " ".join(result.feedback.split())


def summary_rows(results: Sequence[ListingResult]) -> list[dict[str, Any]]:
    """One row per listing, the mismatches first (published, and the site shows them otherwise), then
    the others that did not complete, each starting with why: that is what someone opening the table
    after an alert looks for. The token columns are by kind, each priced differently, so they
    recompute to the cost."""
    ordered = sorted(results, key=lambda result: (result.status != "mismatch",
                                                  not (result.failed or result.status == "invalid")))
    rows = []
    for result in ordered:
        failed = result.failed or result.status == "invalid"
        rows.append({
            "reason": _clipped(failure_reason(result), _REASON_CHARS) if failed else "",
            "sku": result.sku,
            "status": "already done" if result.skipped else result.status,
            "cost": _usd(result.cost_usd),
            "listing_url": result.listing_url or "",
            "model calls": result.model_calls,
            "replay": result.replay,
            "saved by replay": _usd(result.saved_by_replay_usd),
            "steps": result.steps,
            "replayed steps": result.replayed_steps,
            "tokens": result.tokens,
            "fresh input tokens": result.usage.input_tokens,
            "cache write tokens": result.usage.cache_write_tokens,
            "cache read tokens": result.usage.cache_read_tokens,
            "output tokens": result.usage.output_tokens,
            "feedback": _clipped(result.feedback, _FEEDBACK_CHARS),
            "flow_run_id": result.flow_run_id or "",
        })
    return rows


def cost_line(results: Sequence[ListingResult], spend: BatchSpend | None = None, *,
              unpriced_model: str | None = None) -> str:
    """``Cost: $0.0479 over 2 attempts (attempt 1: $0.0332, attempt 2: $0.0147); saved by replay:
    ~$1.10. ``: everything the batch's attempts spent (``spend``), else what this attempt's listings
    cost; empty when nothing ran and nothing is known."""
    run = [result for result in results if not result.skipped and result.status != "invalid"]
    if unpriced_model:
        text = f"Cost: unknown (the model {unpriced_model} has no price; set WEBTASK_MODEL_PRICES)"
    elif spend is not None:
        text = f"Cost: {spend.line()}"
    elif run:
        text = f"Cost: {format_usd(sum(result.cost_usd or 0.0 for result in run))}"
    else:
        return ""
    saved = [result.saved_by_replay_usd for result in run if result.saved_by_replay_usd is not None]
    if saved:
        text += f"; saved by replay: ~{format_usd(sum(saved))}"
    return text + ". "


def _failures_line(results: Sequence[ListingResult]) -> str:
    failed = [result for result in results if result.failed or result.status == "invalid"]
    if not failed:
        return ""
    shown = "; ".join(f"{result.sku} {result.status}: {_clipped(failure_reason(result), 80)}" for result in failed[:5])
    more = f"; and {len(failed) - 5} more" if len(failed) > 5 else ""
    return f"{len(failed)} did not complete — {shown}{more}. "


def model_calls_line(results: Sequence[ListingResult]) -> str:
    """``Model calls: 14 made, 152 saved by replay (steps replayed). ``; empty without replay."""
    run = [result for result in results if not result.skipped]
    saved = sum(result.replayed_steps for result in run)
    if not saved and all(result.replay == "none" for result in run):
        return ""
    repaired = sum(1 for result in run if result.replay == "repaired")
    return (f"Model calls: {sum(result.model_calls for result in run)} made, {saved} saved by replay"
            + (f"; the replay script was repaired {repaired} time(s)" if repaired else "") + ". ")


async def publish_summary(key: str, results: Sequence[ListingResult], *, source: str, spend: BatchSpend | None = None,
                          unpriced_model: str | None = None) -> UUID:
    """The summary table artifact of one batch run; its description names the failures first, then
    what the batch's attempts spent (``spend``)."""
    from prefect.artifacts import acreate_table_artifact

    costs = cost_line(results, spend, unpriced_model=unpriced_model)
    return await acreate_table_artifact(
        table=summary_rows(results), key=key,
        description=(f"{_failures_line(results)}Batch listing upload of `{source}`: "
                     f"{summary_line(results, len(results))}. {costs}{model_calls_line(results)}")[:2000],
    )
