"""The demo marketplace's "the site changes what you typed" switch: what it stores differs from what
the form said, after the review page showed what was typed — the listing is published wrong, and
only reading it back shows it (webtask_core.readback).

- ``vat``: prices are stored with VAT added (19 % by default); the form now says "Prices exclude
  VAT", where a listing's price used to be what buyers pay.
- ``quantity``: quantities above a cap (5) are stored as the cap, silently.
- ``title``: titles are cut to their first 40 characters, silently.

``Alterations()`` changes nothing. ``Alterations.parse("vat,title")`` or ``"vat=20,quantity=3"``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

__all__ = ["Alterations", "ALTERATIONS_ENV"]

ALTERATIONS_ENV = "WEBTASK_SITE_ALTERATIONS"
_DEFAULTS = {"vat": 19, "quantity": 5, "title": 40}
_FIELDS = {"vat": "vat_percent", "quantity": "max_quantity", "title": "title_chars"}


@dataclass(frozen=True)
class Alterations:
    vat_percent: int | None = None  # added to every price when it is stored
    max_quantity: int | None = None  # a larger quantity is stored as this
    title_chars: int | None = None  # a longer title is stored cut to this

    @classmethod
    def parse(cls, text: str) -> Alterations:
        """``"vat,quantity,title"`` (commas or spaces), each optionally ``=N``; ``""``/``"none"``: none."""
        values: dict[str, int] = {}
        for word in (part for part in text.replace(",", " ").split() if part and part != "none"):
            name, _, number = word.partition("=")
            if name not in _DEFAULTS:
                raise ValueError(f"unknown alteration {name!r}; known: {', '.join(_DEFAULTS)} (or 'none')")
            try:
                value = int(number) if number else _DEFAULTS[name]
            except ValueError:
                raise ValueError(f"alteration {word!r}: {number!r} is not a whole number") from None
            if value < 1:
                raise ValueError(f"alteration {word!r}: the number must be at least 1")
            values[_FIELDS[name]] = value
        return cls(**values)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Alterations:
        """From JSON (``POST /_alterations``): the field names, each a whole number or null."""
        known = {item.name for item in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown alteration field {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        for name, value in data.items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a whole number of at least 1, or null")
        return replace(cls(), **data)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, field in _FIELDS.items() if getattr(self, field) is not None)

    def __str__(self) -> str:
        return ",".join(f"{name}={getattr(self, _FIELDS[name])}" for name in self.names) or "none"

    def stored(self, *, title: str, price: float, quantity: int) -> tuple[str, float, int]:
        """What the site stores for what was typed."""
        if self.title_chars is not None:
            title = title[: self.title_chars].rstrip()
        if self.vat_percent is not None:
            with_vat = Decimal(str(price)) * (100 + self.vat_percent) / 100
            price = float(with_vat.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
        if self.max_quantity is not None:
            quantity = min(quantity, self.max_quantity)
        return title, price, quantity
