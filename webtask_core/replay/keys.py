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
        parts.append("options " + normalise.options(options_of(element)))
    return " ".join(part for part in parts if part)


def options_moved(added: list[str], missing: list[str]) -> tuple[list[str], list[str]]:
    """``added`` and ``missing`` without the selects whose options only moved between them: the two
    lists of a chooser ("Available" and "Chosen" categories) hold this run's choice, their options
    together the same as when recorded. Another select that differs (a list that really changed)
    stays, and does not keep the chooser's two lists from being recognised."""
    def selects(keys: list[str]) -> dict[str, list[tuple[str, set[str]]]]:
        found: dict[str, list[tuple[str, set[str]]]] = {}
        for key in keys:
            if key.startswith("select ") and " options " in key:
                head, options = key.split(" options ", 1)
                found.setdefault(head, []).append((key, {option.strip() for option in options.split("|")}))
        return found

    def union(pairs: list[tuple[str, set[str]]]) -> set[str]:
        return set().union(*(options for _, options in pairs))

    now, then = selects(added), selects(missing)
    heads = sorted(head for head in set(now) & set(then) if len(now[head]) == len(then[head]))
    # Every select that differs together, else each pair of them (a chooser has two lists).
    groups = [heads] if set(now) == set(then) == set(heads) else []
    groups += [[one, other] for index, one in enumerate(heads) for other in heads[index + 1:]]
    for group in groups:
        mine = [pair for head in group for pair in now[head]]
        recorded = [pair for head in group for pair in then[head]]
        if mine and union(mine) == union(recorded):
            moved = {key for key, _ in [*mine, *recorded]}
            return [key for key in added if key not in moved], [key for key in missing if key not in moved]
    return added, missing
