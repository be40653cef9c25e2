"""What grows on a page with the user's own work and is content, not a change of the site (issue 25 §4).

A list none of whose records were there when recorded (a chooser's images where it was still empty)
takes its empty state with it; a list's paging and count grow with it; a page that saved itself
without a load (an autosave) shows the saved item's own links and menus. A field's suggestions of
the values earlier items entered (a keyword field's "+trail" links) grow with them, and so does a
navigation by the records' dates ("March 2026", with its "‹ All dates" back to the whole list).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from webtask_core.replay.commit import is_commit, names_a_commit
from webtask_core.replay.keys import options_moved
from webtask_core.replay.reading import is_field, shows_saving

if TYPE_CHECKING:
    from webtask_core.replay.signature import PageView

__all__ = ["is_paging", "is_data_link", "options_moved", "saved_item_chrome", "saved_item_key", "without_empty_state",
           "grown_links"]

# "There is 1 match" / "There are 3 matches" (a count's plural folded off: "matche"), never of errors
_PAGING = re.compile(r"(page # of #|showing #\s*(?:-|to)\s*# of #( \w+)?|# \w+ (found|in total)|# of # selected"
                     r"|there (is|are) # (?!(error|warning|problem|issue|conflict|failure)e?s?\b)\w+)\.?")
# A link named only by a date or a number (a changelist's date drill-down "March 2025", a page "2"):
# the data's, not the site's.
_DATA_LINK = re.compile(r"a link [‹›«»<>@#\s]+ -> .*")
_ITEM_PATH = re.compile(r"/\d+(/|$)")
_ACTING_TAGS = ("input", "select", "textarea", "button")  # controls whose loss matters whatever grew
_VALUE_WORDS = 4  # a suggested value is a few words ("summer sale"), not a sentence


def is_paging(folded: str) -> bool:
    """A list's paging or count, folded ("page # of #", "showing # to # of # results", "there is # match")."""
    return _PAGING.fullmatch(folded) is not None


def is_data_link(key: str) -> bool:
    """A link's control key whose text is only a date or a number (``a link @ # -> /?year=…``)."""
    return _DATA_LINK.fullmatch(key) is not None


def without_empty_state(view: PageView, unexplained_units: Iterable[int], missing: list[str],
                        recorded: Iterable[str]) -> tuple[list[str], set[str]]:
    """``missing`` (the keys of recorded controls not found) without what comes and goes with the
    user's work: the links and boxes of a list's empty state ("Why not upload one now?") when a list
    none of whose records were recorded now has records, or a link to an item the recording did not
    show stands there (a list of one, drawn without its list); and one or more fewer of a helper the
    page still shows (an "Add comment" button per field in view). A field or a submit gone is still
    a change. Also the keys of those item links when they took the place of an empty state the
    recording showed (a chooser's "Why not upload one now?" become its first image): the list's
    first record, not a control the site added."""
    new = set(unexplained_units)
    lists = view.reading.unit_lists
    grown = {lists[unit] for unit in new if unit < len(lists)}
    known = set(recorded)
    elements = view.observation.elements
    item_links = {view.keys[element_id] for element_id, element in elements.items() if element.tag == "a"
                  and _ITEM_PATH.search(urlsplit(element.attributes.get("href", "")).path)
                  and view.keys[element_id] not in known}
    emptied = bool(item_links) or any(all(unit in new for unit, at in enumerate(lists) if at == one) for one in grown)
    shown = {key: element_id for element_id, key in view.keys.items()}
    kept, empty_state = [], False
    for key in missing:
        if key in shown:  # fewer of a control the page still shows: a helper shown per field in view
            element = elements[shown[key]]
            if not is_field(element) and not is_commit("click", {}, element):
                continue
        if is_data_link(key):
            continue
        if emptied and key.split(" ", 1)[0] not in _ACTING_TAGS:
            empty_state = True
            continue
        kept.append(key)
    return kept, item_links if empty_state else set()


def saved_item_chrome(view: PageView) -> set[str]:
    """On a page that saved itself without a load (an autosave: "Saved"), the links and menus the
    saved item brought (its history, its actions, a breadcrumb to it): never a field, nor a button
    that submits or deletes. Empty when the page shows no saving status."""
    elements = view.observation.elements
    if not shows_saving(view.observation, view.reading):
        return set()
    return {element_id for element_id, element in elements.items()
            if not is_field(element) and not is_commit("click", {}, element)}


def saved_item_key(key: str) -> bool:
    """A recorded control a page's own save may bring (the saved item's history link, a breadcrumb to
    it, its actions menu): a link, or a plain button whose words submit nothing."""
    return key.startswith("a ") or (key.startswith("button button ") and not names_a_commit(key))


def grown_links(view: PageView) -> set[str]:
    """The links on the page that come and go with the records the user made, never a field nor a
    button: a field's suggested values (links that lead nowhere, each a value of a few words, right
    after a text field among its siblings: Mezzanine's "+trail" per keyword a product saved, a tag
    cloud under a tag field) and the way back of a navigation by the records' dates or numbers (a
    same-page link beside date links: "‹ All dates" above "March 2026")."""
    elements, controls = view.observation.elements, view.reading.controls
    by_container: dict[int, list[tuple[int, str]]] = {}
    for element_id, read in controls.items():
        if element_id in elements and read.unit is None:
            by_container.setdefault(read.container, []).append((read.place, element_id))
    grown: set[str] = set()
    for siblings in by_container.values():
        ordered = [element_id for _, element_id in sorted(siblings)]
        grown.update(_suggestions(view, ordered))
        data = [element_id for element_id in ordered if is_data_link(view.keys[element_id])]
        if data:
            grown.update(element_id for element_id in ordered if element_id not in data
                         and _leads_here(elements[element_id].attributes.get("href")))
    return grown


def _suggestions(view: PageView, ordered: list[str]) -> list[str]:
    """The value links right after a text field among ``ordered`` siblings (see ReadControl.after_field)."""
    elements, controls = view.observation.elements, view.reading.controls
    return [element_id for element_id in ordered if controls[element_id].after_field
            and 0 < len(elements[element_id].text.split()) <= _VALUE_WORDS
            and not is_commit("click", {}, elements[element_id])]


def _leads_here(href: str | None) -> bool:
    """A link to this same page with another query (``?``, ``?o=2``): a list's own filter or reset."""
    return href is not None and href.startswith("?")
