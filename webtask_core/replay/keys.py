"""What a control is, as the page offers it, in one line: how replay counts a page's controls and
finds a form's controls again (:class:`~webtask_core.replay.signature.PageSignature`, commit checks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from webtask_core.replay.folding import Normaliser, url_pattern
from webtask_core.replay.reading import ReadControl, is_field, is_value_display

if TYPE_CHECKING:
    from webtask_core.browser.models import ElementInfo

__all__ = ["control_key", "options_of"]


def options_of(element: ElementInfo) -> str:
    """A select's option texts, all of them where observe.js listed them (``_options``)."""
    return element.attributes.get("_options") or element.attributes.get("options") or ""


def control_key(element: ElementInfo, read: ReadControl | None, normalise: Normaliser) -> str:
    """What a control is, as the page offers it: kind, name attribute, label, text beside, options."""
    text = "" if is_value_display(element) else normalise.offer(element.text)
    parts = [element.tag, element.type or "", element.role or "", element.name or "", text]
    href = element.attributes.get("href")
    if href:  # the item's own row links to this item's slug; "/listings/new" stays the site's
        parts.append("-> " + url_pattern(href, normalise, plainly=True))
    placeholder = element.attributes.get("placeholder")
    if placeholder:
        parts.append("placeholder " + normalise.offer(placeholder))
    if element.tag == "button" and element.attributes.get("value"):
        parts.append("value " + normalise.offer(element.attributes["value"]))
    if read is not None and is_field(element) and (read.before or read.after):
        parts.append(f"beside {normalise.offer(read.before)!r} {normalise.offer(read.after)!r}")
    if element.tag == "select":
        parts.append("options " + normalise.offer(options_of(element)))
    return " ".join(part for part in parts if part)
