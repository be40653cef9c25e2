"""Approvals in the batch: listings a person must approve before they are published.

``batch_listing_upload(approve_if={"price_above": 500, "changed": ["price"]})``: a listing whose price
is above 500, or whose price differs from the last completed run of its SKU (the ledger keeps each
SKU's last listed fields), carries ``"approval": "<why>"`` in its task data, and its task says to ask
for approval before Publish. The model calls ``ask_human`` (kind ``approve``); the run pauses with
the filled form's screenshot in the Prefect UI; "reject" ends that listing ``aborted`` with the
reviewer's comment, while the rest of the batch goes on. Such listings never replay a script (a
replayed run would publish without asking).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from webtask_flows.listings.records import ListingRecord

__all__ = ["ApprovalRule", "approval_reason"]


class ApprovalRule(BaseModel):
    """When a listing needs a person's approval before it is published (any one rule is enough)."""

    model_config = ConfigDict(extra="forbid")

    price_above: Decimal | None = Field(default=None, gt=0, description="The price is above this.")
    changed: list[str] = Field(default_factory=list,
                               description="These fields differ from the SKU's last completed listing.")
    categories: list[str] = Field(default_factory=list, description="The listing is in one of these categories.")

    @property
    def needs_history(self) -> bool:
        return bool(self.changed)


def approval_reason(listing: ListingRecord, rule: ApprovalRule | None, last: dict[str, Any] | None) -> str | None:
    """Why ``listing`` needs approval under ``rule`` (``last``: its SKU's last listed fields), or None."""
    if rule is None:
        return None
    reasons = []
    if rule.price_above is not None and listing.price > rule.price_above:
        reasons.append(f"the price {listing.price} is above {rule.price_above}")
    if rule.categories and listing.category.casefold() in {category.casefold() for category in rule.categories}:
        reasons.append(f"the category is {listing.category}")
    if last is not None:
        now = listing.model_dump(mode="json")
        for name in rule.changed:
            before, after = last.get(name), now.get(name)
            if name == "price" and before is not None and after is not None:
                if Decimal(str(before)) == Decimal(str(after)):
                    continue
            elif before == after:
                continue
            reasons.append(f"{name} changed since the last listing of this SKU ({before} → {after})")
    return "; ".join(reasons) or None
