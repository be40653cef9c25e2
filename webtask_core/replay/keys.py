"""What a control is, as the page offers it, in one line: how replay counts a page's controls and
finds a form's controls again (:class:`~webtask_core.replay.signature.PageSignature`, commit checks);
and the selects of a two-list chooser whose options only moved between them with this run's choice."""

from __future__ import annotations

from typing import TYPE_CHECKING

from webtask_core.replay.folding import Normaliser, url_pattern
from webtask_core.replay.reading import ReadControl, is_field, is_value_display

if TYPE_CHECKING:
    from webtask_core.browser.models import ElementInfo

__all__ = ["control_key", "options_of", "options_moved"]


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


def options_moved(added: list[str], missing: list[str]) -> tuple[list[str], list[str]]:
    """``added`` and ``missing`` without the selects whose options only moved between them: the two
    lists of a chooser ("Available" and "Chosen" categories) hold this run's choice, their options
    together the same as when recorded."""
    def selects(keys: list[str]) -> dict[str, list[tuple[str, set[str]]]]:
        found: dict[str, list[tuple[str, set[str]]]] = {}
        for key in keys:
            if key.startswith("select ") and " options " in key:
                head, options = key.split(" options ", 1)
                found.setdefault(head, []).append((key, {option.strip() for option in options.split("|")}))
        return found

    now, then = selects(added), selects(missing)
    if not now or set(now) != set(then):
        return added, missing
    union_now = set().union(*(options for pairs in now.values() for _, options in pairs))
    union_then = set().union(*(options for pairs in then.values() for _, options in pairs))
    if union_now != union_then or any(len(now[head]) != len(then[head]) for head in now):
        return added, missing
    moved = {key for pairs in [*now.values(), *then.values()] for key, _ in pairs}
    return [key for key in added if key not in moved], [key for key in missing if key not in moved]
