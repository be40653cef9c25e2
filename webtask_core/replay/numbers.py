"""Numbers as pages and people write them — ``45``, ``45.00``, ``24,50``, ``1,200.00``, ``1.200,00`` — read
back to their value, and a value written again the way a recording wrote it (never rounded)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["NUMBER", "NumberStyle", "as_number", "readings", "weak_number", "bare_number"]

# A number as pages and people write it: 45, 45.00, 24,50, 1,200.00, 1.200,00.
NUMBER = re.compile(r"(?<![\w.,])(?:\d{1,3}(?:(?:,\d{3})+|(?:\.\d{3})+|(?:\u00a0\d{3})+)(?:[.,]\d+)?"
                     r"|\d+(?:[.,]\d+)?)(?!\w|[.,]\d)")

@dataclass(frozen=True)
class NumberStyle:
    decimals: int | None  # None: as few as the value needs (no trailing zeros)
    comma: bool = False  # decimal comma
    group: bool = False  # thousands separators

    @property
    def spec(self) -> str:
        parts = ["num" if self.decimals is None else f"num:{self.decimals}"]
        if self.decimals is None and (self.comma or self.group):
            parts = ["num:min"]
        if self.comma:
            parts.append("comma")
        if self.group:
            parts.append("group")
        return ":".join(parts)

    @classmethod
    def parse(cls, spec: str) -> NumberStyle:
        parts = spec.split(":")
        decimals = None if len(parts) < 2 or parts[1] in ("min", "comma", "group") else int(parts[1])
        return cls(decimals, "comma" in parts[1:], "group" in parts[1:])

    def write(self, value: Decimal) -> str:
        if self.decimals is None:
            text = format(value.normalize(), "f")
        else:
            text = format(value.quantize(Decimal(1).scaleb(-self.decimals)), "f")
            if Decimal(text) != value:
                raise ValueError(f"{value} cannot be written with {self.decimals} decimals as the recording did")
        whole, _, fraction = text.partition(".")
        if self.group:
            sign = "-" if whole.startswith("-") else ""
            digits = whole.lstrip("-")
            groups = [digits[max(0, end - 3):end] for end in range(len(digits), 0, -3)][::-1]
            whole = sign + ("." if self.comma else ",").join(groups)
        return whole + ((("," if self.comma else ".") + fraction) if fraction else "")


def as_number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float, Decimal)):
        return Decimal(str(value))
    if isinstance(value, str) and re.fullmatch(r"-?\d+(\.\d+)?", value.strip()):
        return Decimal(value.strip())
    return None


def readings(token: str) -> list[tuple[Decimal, NumberStyle]]:
    """What a written number may mean: ``1,200`` is twelve hundred (grouped) or 1.2 (decimal comma)."""
    text = token.replace("\u00a0", ",")
    out: list[tuple[Decimal, NumberStyle]] = []

    def add(plain: str, comma: bool, group: bool) -> None:
        try:
            number = Decimal(plain)
        except InvalidOperation:
            return
        out.append((number, NumberStyle(len(plain.partition(".")[2]), comma, group)))

    marks = {char for char in text if char in ",."}
    if not marks:
        add(text, False, False)
    elif marks == {"."}:
        if text.count(".") == 1:
            add(text, False, False)
        if re.fullmatch(r"\d{1,3}(\.\d{3})+", text):
            add(text.replace(".", ""), True, True)
    elif marks == {","}:
        if text.count(",") == 1:
            add(text.replace(",", "."), True, False)
        if re.fullmatch(r"\d{1,3}(,\d{3})+", text):
            add(text.replace(",", ""), False, True)
    else:  # both: the last one is the decimal mark
        last = max(text.rfind(","), text.rfind("."))
        add(re.sub(r"[,.]", "", text[:last]) + "." + text[last + 1:], text[last] == ",", True)
    return out


def weak_number(number: Decimal) -> bool:
    return abs(number) < 10 and number == number.to_integral_value()


def bare_number(text: str) -> Decimal | None:
    """The number a field shows, currency signs and spaces aside (``$ 45.00`` -> 45.00)."""
    core = text.strip(" $€£¥")
    found = readings(core) if NUMBER.fullmatch(core) else []
    return found[0][0] if len(found) == 1 else None
