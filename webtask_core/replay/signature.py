"""Recognising a page and an element again on a later run, the way a model would, without the
per-observation ids.

An **element fingerprint** is what a model picks a control by: its line in the tree (tag, role,
input type, ``name``, its text or label, placeholder, a select's option texts) and, for a field,
the text beside it (``Price`` before an unlabelled input, ``Show in search`` after a checkbox).
Finding it again takes the one element of the new page that is the same in all of that; where
several are, the lines around it (its form, its group's heading) and its frame must tell them
apart, or it is no match: two controls a model cannot tell apart are never a guess.

A **page signature** is the URL as a pattern, the title, the controls the page offers (a multiset:
a second "Submit" is a difference) and the page's words (every text line, heading, status and
alert: a warning that appears is a difference). A list of records (rows, list items, articles and
repeated cards, each with a link or button and nothing to type into; see
:mod:`~webtask_core.replay.reading`) may grow or change from run to run: that is content, not a
site change. New content that shows this run's item (the search for this SKU now finds it) is this
item's state: the model takes over, and the script stays as it is.

Texts are compared normalised: whitespace and case folded, digits as ``#``, month and day names
as ``@``, uploaded file names as ``{file}`` and the identifying parameters' values (a SKU, a title)
as ``{name}``. What the model chose by (the radio labelled with this run's condition) folds every
parameter's value; what the page offers (all its radio buttons) does not, since its options are
the same on every run.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from webtask_core.replay.calendar import other_month
from webtask_core.replay.commit import is_commit
from webtask_core.replay.folding import (
    Normaliser,
    agree,
    decide_marks,
    label_words,
    narrowings,
    url_pattern,
)
from webtask_core.replay.growth import (
    grown_links,
    is_data_link,
    is_paging,
    options_moved,
    saved_item_chrome,
    saved_item_key,
    without_empty_state,
)
from webtask_core.replay.keys import control_key, options_of
from webtask_core.replay.reading import (
    PageReading,
    ReadControl,
    is_field,
    is_saving_status,
    is_value_display,
    read_page,
    shows_saving,
)

if TYPE_CHECKING:
    from webtask_core.browser.models import ElementInfo, Observation

__all__ = ["ElementFingerprint", "PageSignature", "PageView", "Difference", "control_key", "options_of"]

# Attributes that tell an element's kind or name, not its state (value, checked, selected change).
NAMING_ATTRIBUTES = ("placeholder", "aria-label", "title", "alt", "accept")
_DAY_MARK = re.compile(r"\{([\w-]+)\.day\}")
# What makes a control another one of the same name: a calendar's day of the month before or after.
STATE_ATTRIBUTES = ("outside-month",)
# Attributes that tell apart elements of the same name (where they lead, what they look like).
TELLING_ATTRIBUTES = ("href", "hint", "_action")


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=5).hexdigest()


# ---- elements ----


class ElementFingerprint(BaseModel):
    model_config = ConfigDict(frozen=True)

    tag: str
    role: str | None = None
    type: str | None = None
    name: str | None = None
    text: str = ""  # its name or label, folded (a value display's text is its value: left out)
    attributes: dict[str, str] = {}  # naming and telling attributes, folded
    before: str = ""  # the text beside a field
    after: str = ""
    options: str = ""  # a select's options, folded
    context: tuple[str, ...] = ()  # the nearest enclosing tree lines
    frame: str = ""
    section: str = ""  # the heading it comes under, or its named fieldset or group
    # The texts above with only the identifying values folded, where that differs: a word this run's
    # value happened to equal ("New" in "Add new page") may be the site's own.
    plain: dict[str, str] = {}
    # It lies in a record of a list that shows the run's own item (the row of the file it uploaded):
    # among records alike, the one of this run's item is the one.
    of_item: bool = False

    @classmethod
    def of(cls, element: ElementInfo, normalise: Normaliser, beside: ReadControl | None = None) -> ElementFingerprint:
        attributes = {}
        for key in (*NAMING_ATTRIBUTES, *TELLING_ATTRIBUTES, *STATE_ATTRIBUTES, "value"):
            value = element.attributes.get(key)
            if value and not (key == "value" and element.tag != "button"):  # a field's value is its state
                attributes[key] = (url_pattern(value, normalise, plainly=True) if key in ("href", "_action")
                                   else normalise(value))
        raw = {"text": "" if is_value_display(element) else element.text,
               "before": beside.before if beside is not None else "", "after": beside.after if beside is not None else "",
               "section": beside.section if beside is not None else ""}
        chosen = {key: normalise.told(value) if key == "section" else normalise(value) for key, value in raw.items()}
        plain = {key: normalise.offer(value) for key, value in raw.items() if normalise.offer(value) != chosen[key]}
        return cls(
            tag=element.tag, role=element.role, type=(element.type or "").casefold() or None, name=element.name,
            text=chosen["text"], attributes=attributes, before=chosen["before"], after=chosen["after"],
            options=normalise.options(options_of(element)) if element.tag == "select" else "",
            context=tuple(normalise(line) for line in element.context), frame=element.frame_path,
            section=chosen["section"], plain=plain,
        )

    def describe(self) -> str:
        """``input "price" (type=text, name=field2)``: how a message names what was looked for."""
        details = [f"{key}={value}" for key, value in (("type", self.type), ("role", self.role), ("name", self.name))
                   if value]
        shown = self.text or self.before or self.after or self.attributes.get("hint", "")
        text = f' "{shown[:40]}"' if shown else ""
        return f"{self.tag}{text}" + (f" ({', '.join(details)})" if details else "")

    def same_control(self, other: ElementFingerprint, *, plainly: bool = False) -> bool:
        """Whether a model would take ``other`` for this control: the same line, the same text beside
        it, under the same heading. Where it leads and how it looks matter only for an element with
        no name. ``plainly``: a text where this run's value stood may read as the site's own words."""
        if (self.tag, self.role, self.type, self.name, self.options) != (
                other.tag, other.role, other.type, other.name, other.options):
            return False
        # A box or radio chosen by this run's value: the words beside it are its group's (a caption
        # before the first, a help after the last), wherever this run's choice stands among them.
        chosen = bool(self.name) and self.type in ("checkbox", "radio") and bool(_WHOLE_MARK.fullmatch(self.text))
        for key in ("text", "before", "after") if not chosen else ("text",):
            mine, theirs = getattr(self, key), getattr(other, key)
            if agree(mine, theirs):
                continue
            # As plain words, unless the recorded text was the value itself (a radio "New").
            if not (plainly and not _WHOLE_MARK.fullmatch(mine)
                    and self.plain.get(key, mine) == other.plain.get(key, theirs)):
                return False
        # a button's value is on its line ("draft" is another button); a day of another month is another day
        for key in (*NAMING_ATTRIBUTES, *STATE_ATTRIBUTES, "value"):
            if not agree(self.attributes.get(key, ""), other.attributes.get(key, "")):
                return False
        if not (self.text or self.before or self.after or any(key in self.attributes for key in NAMING_ATTRIBUTES)):
            # Nameless: where it leads, and its look (classes a focus may add to: a subset will do).
            mine, theirs = set(self.attributes.get("hint", "").split()), set(other.attributes.get("hint", "").split())
            return self.attributes.get("href") == other.attributes.get("href") and (mine <= theirs or theirs <= mine)
        return True

    def tells(self, other: ElementFingerprint) -> int:
        """How many of the telling details (enclosing lines, frame, href, value, form) ``other``
        shares with this one: what tells apart two controls of the same line."""
        shared = sum(1 for line in self.context if line in other.context)
        for key in TELLING_ATTRIBUTES:
            if key in self.attributes or key in other.attributes:
                shared += 1 if self.attributes.get(key) == other.attributes.get(key) else -1
        return shared + (self.frame == other.frame)


# ---- pages ----


@dataclass(frozen=True)
class Difference:
    """How a page differs from the recording: ``site`` (the site changed: the model takes over and
    a repaired script is kept) or ``item`` (this item's state, e.g. it is listed already)."""

    kind: Literal["site", "item"]
    message: str


@dataclass
class PageView:
    """The current page, read once per decision: its controls' fingerprints and keys, its text lines,
    and which of them are records of a list."""

    observation: Observation
    reading: PageReading
    normalise: Normaliser

    def __post_init__(self) -> None:
        self.fingerprints: dict[str, ElementFingerprint] = {}
        self.keys: dict[str, str] = {}
        for element_id, element in self.observation.elements.items():
            read = self.reading.controls.get(element_id)
            self.fingerprints[element_id] = ElementFingerprint.of(element, self.normalise, read)
            self.keys[element_id] = control_key(element, read, self.normalise)
        self.unit_mentions = [self.normalise.mentions(text) for text in self.reading.unit_texts]
        owned = {unit for unit, text in enumerate(self.reading.unit_texts) if self.normalise.owns(text)}
        for element_id, fingerprint in self.fingerprints.items():
            if self.unit_of(element_id) in owned:
                self.fingerprints[element_id] = fingerprint.model_copy(update={"of_item": True})

    @classmethod
    def of(cls, observation: Observation, normalise: Normaliser) -> PageView:
        return cls(observation, read_page(observation), normalise)

    def unit_of(self, element_id: str) -> int | None:
        read = self.reading.controls.get(element_id)
        return read.unit if read is not None else None

    def resolve(self, fingerprint: ElementFingerprint) -> tuple[str | None, str]:
        """The id of the one element a model would take for ``fingerprint``, else None and why."""
        same = [element_id for element_id, other in self.fingerprints.items() if fingerprint.same_control(other)]
        if not same:  # a word the recording's value happened to equal: read as the site's own
            same = [element_id for element_id, other in self.fingerprints.items()
                    if fingerprint.same_control(other, plainly=True)]
        moved = [element_id for element_id in same if self._moved(fingerprint, self.fingerprints[element_id])]
        if moved and len(moved) == len(same):
            now = self.fingerprints[moved[0]].section
            return None, (f"{fingerprint.describe()} is now under {now!r}, no longer under {fingerprint.section!r} "
                          "(which heads other controls): its meaning changed")
        same = [element_id for element_id in same if element_id not in moved]
        if not same:
            return None, f"no element like {fingerprint.describe()} on the page"
        other_month = self._other_month(fingerprint)
        if other_month is not None:
            return None, other_month
        if len(same) > 1 and fingerprint.of_item:  # the record of this run's item, among records alike
            same = [element_id for element_id in same if self.fingerprints[element_id].of_item] or same
        if len(same) == 1:
            return same[0], ""
        scored = sorted(((fingerprint.tells(self.fingerprints[element_id]), element_id) for element_id in same),
                        reverse=True)
        if scored[0][0] > scored[1][0]:
            return scored[0][1], ""
        return None, (f"{len(same)} elements like {fingerprint.describe()} ({scored[0][1]}, {scored[1][1]}) and "
                      "nothing tells them apart: not acting on a guess")


    def _other_month(self, fingerprint: ElementFingerprint) -> str | None:
        """A day of a date (``{release_date.day}``) is this run's only in a calendar showing this run's
        month and year: one that opened before the date was typed may still show another."""
        elements = self.observation.elements.values()
        texts = [*(line.text for line in self.reading.texts), *(element.text for element in elements),
                 *(element.attributes.get("value", "") for element in elements)]
        for name in _DAY_MARK.findall(fingerprint.text):
            why = other_month(self.normalise.params, name, texts)
            if why is not None:
                return why
        return None

    def _moved(self, fingerprint: ElementFingerprint, other: ElementFingerprint) -> bool:
        """Whether ``other``, a field, stands under another heading than the recorded one while the
        recorded heading still heads controls of this page (the fieldsets swapped: what is typed
        there means something else). A heading gone or regrouped by the layout, or a button moved to
        a toolbar, is no reason."""
        mine, theirs = fingerprint.section, other.section
        if not mine or not theirs or agree(mine, theirs) or not _holds_a_value(other) or (
                fingerprint.plain.get("section", mine) == other.plain.get("section", theirs)):
            return False
        return any(agree(mine, seen.section) for seen in self.fingerprints.values() if seen.section)


_WHOLE_MARK = re.compile(r"\{[^{}]+\}")
_WARNS = re.compile(r"\b(warn\w*|error\w*|delet\w*|remov\w*|fail\w*|invalid|suspend\w*|block\w*)\b|!")


def _holds_a_value(fingerprint: ElementFingerprint) -> bool:
    """A field (a text, a choice, a box), not a button or a link: where it stands says what it sets."""
    return (fingerprint.tag in ("input", "select", "textarea") and fingerprint.type not in (
        "submit", "button", "reset", "image")) or fingerprint.role in ("textbox", "combobox", "checkbox", "radio",
                                                                      "switch", "spinbutton", "slider")


def _saving(view: PageView, element_id: str) -> bool:
    """A control that only reports saving (an autosave's "Saving…" button): no change of the site."""
    return is_saving_status(view.observation.elements[element_id].text)


class PageSignature(BaseModel):
    model_config = ConfigDict(frozen=True)

    url: str
    url_plain: str = ""  # the URL with only the identifying values folded, where that differs
    title: str
    title_plain: str = ""  # the title with only the identifying values folded, where that differs
    controls: tuple[str, ...] = ()  # keys of the controls outside lists of records, sorted (a multiset)
    texts: tuple[str, ...] = ()  # digests of the text lines (as offered, as chosen)
    listed: tuple[str, ...] = ()  # digests of the keys of the controls in lists of records
    records: bool = False  # the page showed a list of records (not one still empty)
    keyed: bool = True  # the page showed the run's identifying values (a search for this SKU)
    # A record of a list showed the run's own item (a chooser's files after the run's upload): its
    # record there is the run's own doing, not a sign it existed before.
    item_listed: bool = False
    # The page showed it had saved itself (an autosave's "Saved"): what the saved item brings (its
    # history link, its breadcrumb, its actions) was there, and a replay that looks sooner lacks it.
    saved: bool = False

    @classmethod
    def of(cls, view: PageView) -> PageSignature:
        observation, normalise = view.observation, view.normalise
        keyed = normalise.mentions(f"{observation.url}\n{observation.title}\n{observation.tree}")
        controls = sorted(view.keys[element_id] for element_id in view.keys
                          if view.unit_of(element_id) is None and not _saving(view, element_id))
        listed = {_digest(view.keys[element_id]) for element_id in view.keys if view.unit_of(element_id) is not None}
        texts = set()
        for line in view.reading.texts:
            texts.add(_digest(normalise.offer(line.text)))
            texts.update(_digest(form) for form in narrowings(normalise.told(line.text)))
        # A value two parameters shared in the URL (/products/create/shoes/): its words decide which.
        url = decide_marks(url_pattern(observation.url, normalise), label_words(urlsplit(observation.url).path))
        title, plain = normalise.told(observation.title), normalise.offer(observation.title)
        url_plain = url_pattern(observation.url, normalise, plainly=True)
        return cls(url=url, url_plain=url_plain if url_plain != url else "", title=title,
                   title_plain=plain if plain != title else "",
                   controls=tuple(controls), texts=tuple(sorted(texts)), listed=tuple(sorted(listed)),
                   records=bool(view.reading.unit_texts), keyed=keyed, item_listed=any(view.unit_mentions),
                   saved=shows_saving(observation, view.reading))

    def _list_forms(self, view: PageView) -> set[int]:
        """The forms a list's records came into, where the recording saw the list empty: what they
        bring along there (bulk actions, "select all", a "Bulk Actions:" label) is the list's."""
        reading = view.reading
        forms = {form for form in reading.unit_forms if form is not None}
        if not self.records or not forms:
            return forms
        # other lists were recorded (an admin's sidebar of models): the forms none of whose records were
        new_units = self._new_units(view)
        return {form for form in forms if all(unit in new_units for unit, at in enumerate(reading.unit_forms) if at == form)}

    def _new_units(self, view: PageView) -> set[int]:
        """The records none of whose controls the recording listed."""
        reading, listed = view.reading, set(self.listed)
        new_units = set(range(len(reading.unit_texts)))
        for element_id, read in reading.controls.items():
            if read.unit is not None and _digest(view.keys[element_id]) in listed:
                new_units.discard(read.unit)
        return new_units

    def _panel_chrome(self, view: PageView) -> set[str]:
        """Links and toggles beside a list that gained records (a "Your most recent edits" panel that
        came with the seller's first edit: its title link, "Toggle section"). Never a field, nor a
        button that submits or deletes."""
        reading = view.reading
        new_lists = {reading.unit_lists[unit] for unit in self._new_units(view)}  # lists that gained records
        elements = view.observation.elements
        return {element_id for element_id, read in reading.controls.items()
                if read.unit is None and read.panel in new_lists and element_id in elements
                and not is_field(elements[element_id]) and not is_commit("click", {}, elements[element_id])}

    def _list_chrome(self, view: PageView) -> set[str]:
        """Controls a list brings along once it has records, in the same form as the records."""
        forms = self._list_forms(view)
        return {element_id for element_id, read in view.reading.controls.items()
                if read.unit is None and read.form is not None and read.form in forms}

    def difference(self, view: PageView, *, same_document: bool = False) -> Difference | None:
        """None when ``view`` is this page as a model would see it again; else how it differs.
        ``same_document``: no page load since the last replayed step, so a URL and a title the page's
        own script changed (an autosave's create URL become an edit URL) are no other page."""
        observation, normalise = view.observation, view.normalise
        url = url_pattern(observation.url, normalise)
        plain_url = bool(self.url_plain) and self.url_plain == url_pattern(observation.url, normalise, plainly=True)
        if not agree(self.url, url) and not plain_url and not same_document:
            return Difference("site", f"the page is {url}, the recording was on {self.url}")
        title = normalise.told(observation.title)
        # "New: Product page" recorded with condition New is the same title for condition Used
        plainly = bool(self.title_plain) and self.title_plain == normalise.offer(observation.title)
        if not agree(self.title, title) and not plainly and not same_document:
            return Difference("site", f"the page's title is {title!r}, the recording's was {self.title!r}")
        recorded = Counter(self.controls)
        unexplained_units: set[int] = set()
        added: list[str] = []
        fields_added = False
        chrome = self._list_chrome(view) | self._panel_chrome(view) | grown_links(view)
        if same_document:
            chrome |= saved_item_chrome(view)
        for element_id, key in view.keys.items():  # controls outside lists first take the recorded ones
            if view.unit_of(element_id) is None and not _saving(view, element_id):
                if recorded[key] > 0:
                    recorded[key] -= 1
                elif element_id not in chrome and not is_data_link(key):
                    added.append(key)
                    fields_added |= is_field(view.observation.elements[element_id])
        listed = set(self.listed)
        for element_id, key in view.keys.items():
            unit = view.unit_of(element_id)
            if unit is not None:
                if recorded[key] > 0:
                    recorded[key] -= 1
                elif _digest(key) not in listed:
                    unexplained_units.add(unit)
        missing = sorted(key for key, count in recorded.items() for _ in range(count))
        missing, first_records = without_empty_state(view, unexplained_units, missing, self.controls)
        added = [key for key in added if key not in first_records]
        if same_document and self.saved and not shows_saving(observation, view.reading, done=True):
            # Recorded once the page had saved itself, read now before it has (a replay runs faster than
            # the recording; an autosave comes 0.5 s after the last change), or while it is ("Saving…"):
            # what the save brings is to come.
            missing = [key for key in missing if not saved_item_key(key)]
        added, missing = options_moved(added, missing)
        words: list[str] = []
        list_forms = self._list_forms(view)
        for line in view.reading.texts:
            if _digest(normalise.offer(line.text)) in self.texts or _digest(normalise.told(line.text)) in self.texts:
                continue
            if line.unit is not None:
                unexplained_units.add(line.unit)
            elif is_paging(normalise.offer(line.text)):
                continue  # a list's paging and count ("Page 1 of 1", "3 images"): it grew
            elif line.heads_list and not _WARNS.search(line.text.casefold()):
                continue  # a panel's own title came with its records ("Your most recent edits")
            elif line.form in list_forms and line.form is not None and not line.says_something:
                continue  # a label the list brought along with its first record ("Bulk Actions:")
            elif line.says_something or line.about_a_field:
                # a warning or a notice appeared, or any line of the form changed ("Prices excl.
                # VAT"): a new short label elsewhere is layout
                words.append(line.text)
        if not (added or missing or words):
            # On a page about this item when recorded (a search for its SKU), a record that now shows
            # it is its state (listed already); elsewhere lists grow, and a same-titled record of
            # another item is no reason to stop.
            if self.keyed and not self.item_listed and any(view.unit_mentions[unit] for unit in unexplained_units):
                return Difference("item", "a list on the page now shows this item")
            return None  # lists of records grew or changed: content, not the site
        parts = []
        if added:
            parts.append(f"has {len(added)} control(s) the recording did not ({'; '.join(added[:3])})")
        if missing:
            parts.append(f"lacks {len(missing)} it had ({'; '.join(missing[:3])})")
        if words:
            parts.append(f"says what it did not ({'; '.join(repr(word[:80]) for word in words[:3])})")
        message = "the page " + " and ".join(parts)
        this_item = any(normalise.mentions(word) for word in words) or any(
            normalise.shows_item(key) for key in added) or (not self.item_listed and any(
                view.unit_mentions[unit] for unit in unexplained_units))
        if self.keyed and not missing and not fields_added and this_item:
            return Difference("item", message)  # the search for this SKU now finds it
        return Difference("site", message)
