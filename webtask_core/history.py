"""Action history and stuck detection.

Every tool call is recorded with its result, the URL it ran on and when. Two kinds of "stuck" are
detected without reading the model's prose:

- the same failing action (same tool, same parameters) ``action_threshold`` times → a warning the
  model sees; ``hard_factor`` × that → the run ends ``aborted``;
- the same page (URL + tree hash) for ``page_threshold`` observations in a row → a warning;
  ``hard_factor`` × that → aborted.

The history is immutable in use: :meth:`ActionHistory.with_page` and :meth:`with_actions` return a
new history, so a step that fails half-way (and is retried) leaves the task's history untouched.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["StuckThresholds", "ActionRecord", "ActionHistory", "page_key"]

MESSAGE_CHARS_SHOWN = 200
DESCRIBE_CHARS_SHOWN = 300


class StuckThresholds(BaseModel):
    action_threshold: int = Field(default=3, ge=1)
    page_threshold: int = Field(default=4, ge=1)
    hard_factor: int = Field(default=2, ge=1)

    @property
    def action_hard_stop(self) -> int:
        return self.action_threshold * self.hard_factor

    @property
    def page_hard_stop(self) -> int:
        return self.page_threshold * self.hard_factor


class ActionRecord(BaseModel):
    step: int
    tool: str
    params: Any = None
    ok: bool
    message: str
    url: str
    at: float  # time.time() when the action finished
    skipped: bool = False  # not run because an earlier call in the step failed

    @property
    def key(self) -> str:
        return action_key(self.tool, self.params)

    def describe(self) -> str:
        # Clipped: a malformed call can carry megabytes, and the history is shown on every step.
        return _clip(f"{_clip(self.tool, 80)} {_params_text(self.params)}".rstrip(), DESCRIBE_CHARS_SHOWN)


def action_key(tool: str, params: Any) -> str:
    try:
        params_text = json.dumps(params, sort_keys=True, default=str)
    except (TypeError, ValueError):
        params_text = repr(params)
    return f"{tool} {params_text}"


def _params_text(params: Any) -> str:
    if isinstance(params, dict):
        return " ".join(
            f"{value}" if key == "element_id" else f"{key}={json.dumps(value, default=str)}"
            for key, value in params.items()
        )
    return json.dumps(params, default=str) if params is not None else ""


def page_key(url: str, tree: str, scroll: str = "") -> str:
    digest = hashlib.sha1(tree.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{url}#{digest}#{scroll}"


def _clip(text: str, limit: int = MESSAGE_CHARS_SHOWN) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ActionHistory(BaseModel):
    thresholds: StuckThresholds = Field(default_factory=StuckThresholds)
    records: list[ActionRecord] = Field(default_factory=list)
    # failures of one action key since it last succeeded
    failure_counts: dict[str, int] = Field(default_factory=dict)
    last_page_key: str | None = None
    same_page_count: int = 0  # consecutive observations of last_page_key, this one included
    last_url: str = ""

    # ---- building a new history (never mutate self) ----

    def with_page(self, key: str, url: str) -> ActionHistory:
        same = self.same_page_count + 1 if key == self.last_page_key else 1
        return self.model_copy(
            update={"last_page_key": key, "same_page_count": same, "last_url": url}
        )

    def with_actions(self, records: list[ActionRecord]) -> ActionHistory:
        counts = dict(self.failure_counts)
        for record in records:
            if record.skipped:
                continue
            if record.ok:
                counts.pop(record.key, None)
            else:
                counts[record.key] = counts.get(record.key, 0) + 1
        last_url = records[-1].url if records else self.last_url
        return self.model_copy(
            update={
                "records": [*self.records, *records],
                "failure_counts": counts,
                "last_url": last_url,
            }
        )

    # ---- what it says ----

    def _worst_failure(self) -> tuple[ActionRecord, int] | None:
        worst: tuple[ActionRecord, int] | None = None
        for record in reversed(self.records):
            count = self.failure_counts.get(record.key, 0)
            if not record.ok and not record.skipped and count and (worst is None or count > worst[1]):
                worst = (record, count)
        return worst

    def warnings(self) -> list[str]:
        found: list[str] = []
        seen: set[str] = set()
        for record in reversed(self.records):
            count = self.failure_counts.get(record.key, 0)
            if record.ok or record.skipped or record.key in seen:
                continue
            seen.add(record.key)
            if count >= self.thresholds.action_threshold:
                found.append(
                    f"STUCK: `{record.describe()}` has failed {count} times "
                    f"(last error: {_clip(record.message)}). Repeating it will not work: use "
                    "another element or approach, or abort if the task cannot be done. "
                    f"The run is stopped after {self.thresholds.action_hard_stop} failures."
                )
        if self.same_page_count >= self.thresholds.page_threshold:
            found.append(
                f"STUCK: the page has not changed for {self.same_page_count} steps (same URL and "
                "content); your actions are having no effect. Try something different, or abort. "
                f"The run is stopped after {self.thresholds.page_hard_stop} unchanged steps."
            )
        return found

    def hard_stop_reason(self) -> str | None:
        worst = self._worst_failure()
        if worst is not None and worst[1] >= self.thresholds.action_hard_stop:
            record, count = worst
            return f"stuck: {record.describe()} failed {count} times: {_clip(record.message)}"
        if self.same_page_count >= self.thresholds.page_hard_stop:
            return (
                f"stuck: the page {self.last_url} did not change for {self.same_page_count} steps"
            )
        return None

    def last_error(self) -> ActionRecord | None:
        for record in reversed(self.records):
            if not record.ok and not record.skipped:
                return record
        return None

    def render(self, *, now: float | None = None, extra_lines: list[str] | None = None) -> str:
        """The body of the ``<history>`` block: counts, timing, the last error, warnings.

        Each action and its result is already in the conversation (the tool_use / tool_result
        pairs, which prompt caching reuses), so they are not listed again here: this block is part
        of the uncacheable tail of every request, and repeating them cost ~30 % of it."""
        now = time.time() if now is None else now
        lines: list[str] = []
        done = [record for record in self.records if not record.skipped]
        if done:
            failed = sum(1 for record in done if not record.ok)
            last = done[-1]
            lines.append(
                f"Actions so far: {len(done)} ({failed} failed). Last action: step {last.step}, "
                f"{max(0.0, now - last.at):.1f} s ago."
            )
        else:
            lines.append("No actions yet.")
        error = self.last_error()
        if error is not None:
            lines.append(f"Last error (step {error.step}): {error.describe()} -> {_clip(error.message)}")
        lines.extend(extra_lines or [])
        lines.extend(self.warnings())
        return "\n".join(lines)
