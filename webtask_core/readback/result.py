"""What a read-back found: each field expected vs shown, how the page was read, and the verdict."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from webtask_core.llm.types import Usage

__all__ = ["Verdict", "ReadbackStatus", "ReadMethod", "FieldCheck", "ReadbackResult"]

# A field the page shows as asked (match), shows otherwise or contradicts (mismatch), or does not
# show at all (not_shown: never counted as passed).
Verdict = Literal["match", "mismatch", "not_shown"]
# passed: nothing shown differs; mismatch: a field differs or is contradicted; unread: the listing's
# page could not be found or read (not done either); skipped: not read back (verify, or no listing).
ReadbackStatus = Literal["passed", "mismatch", "unread", "skipped"]
# templates: in code, against the page's lines recorded with the replay script (no model call);
# model: one structured-output call read the page and code compared.
ReadMethod = Literal["templates", "model", "none"]


class FieldCheck(BaseModel):
    field: str
    expected: str
    shown: str | None = None
    verdict: Verdict
    note: str = ""  # "the page also shows $72.59", "shown in part"

    def describe(self) -> str:
        if self.verdict == "not_shown":
            return f"{self.field}: not shown"
        note = f" ({self.note})" if self.note else ""
        return f"{self.field}: expected {self.expected!r}, shown {self.shown!r}{note}"


class ReadbackResult(BaseModel):
    status: ReadbackStatus
    method: ReadMethod = "none"
    url: str = ""  # the listing's page that was read
    fields: list[FieldCheck] = Field(default_factory=list)
    reason: str = ""  # why it is unread or skipped
    model_calls: int = 0
    usage: Usage = Field(default_factory=Usage)
    duration_ms: float = 0.0
    templates: Literal["", "checked", "recorded", "unusable"] = ""  # what became of the page's templates
    screenshot: str | None = Field(default=None, repr=False)  # the page as read, a small JPEG (base64), when it did not pass

    @property
    def ok(self) -> bool:
        return self.status in ("passed", "skipped")

    @property
    def mismatches(self) -> list[FieldCheck]:
        return [check for check in self.fields if check.verdict == "mismatch"]

    @property
    def not_shown(self) -> list[str]:
        return [check.field for check in self.fields if check.verdict == "not_shown"]

    def summary(self) -> str:
        """One line: what differs, or what matched and what the page does not show."""
        if self.status == "mismatch":
            return "; ".join(check.describe() for check in self.mismatches)
        if self.status in ("unread", "skipped"):
            return self.reason
        matched = sum(1 for check in self.fields if check.verdict == "match")
        hidden = f"; not shown: {', '.join(self.not_shown)}" if self.not_shown else ""
        return f"{matched} field(s) as asked ({self.method}){hidden}"
