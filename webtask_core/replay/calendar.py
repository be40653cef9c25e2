"""Which month and year a date picker shows, against this run's date (issue 25 §5).

A day of a date (``{release_date.day}``) is this run's only in a calendar showing this run's month
*of this run's year*: one that opened before the date was typed may still show another month, or the
same month of today's year ("November" "2026" for 2024-11-02). Pickers show them as separate texts
(Wagtail's, Pikaday: "November" and "2026"), as one heading (jQuery UI: "November 2026") or as a
year field's value (flatpickr's number input).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MONTHS", "month_of", "other_month"]

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")

_ISO = re.compile(r"(\d{4})-(\d{2})-\d{2}")
_SHOWN = re.compile(rf"({'|'.join(MONTHS)})?[,\s]*(\d{{4}})?")


def month_of(params: Mapping[str, Any], name: str) -> str | None:
    """The month's name (``march``) of the date parameter ``name``, when it is an ISO date."""
    value = params.get(name)
    match = _ISO.fullmatch(value.strip()) if isinstance(value, str) else None
    return MONTHS[int(match.group(2)) - 1] if match and 1 <= int(match.group(2)) <= 12 else None


def other_month(params: Mapping[str, Any], name: str, texts: Iterable[str]) -> str | None:
    """Why a calendar whose texts (lines, element texts and values) are ``texts`` shows another month
    or year than the date parameter ``name``; None when it shows this one, or no month at all."""
    wanted = month_of(params, name)
    if wanted is None:
        return None
    year = str(params[name]).strip()[:4]
    months: set[str] = set()
    years: set[str] = set()
    for text in texts:
        match = _SHOWN.fullmatch(text.strip().casefold())
        if match is not None and any(match.groups()):
            months.update(filter(None, [match.group(1)]))
            years.update(filter(None, [match.group(2)]))
    if not months:
        return None  # no calendar on the page (a year alone is a date navigation, a footer)
    if wanted not in months:
        return f"the calendar shows {', '.join(sorted(months))}, not the month of this run's {name} ({wanted})"
    if years and year not in years:
        return f"the calendar shows {wanted} of {', '.join(sorted(years))}, not of this run's {name} ({year})"
    return None
