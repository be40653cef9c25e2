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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from pydantic import BaseModel, ConfigDict

from webtask_core.replay.reading import PageReading, ReadControl, is_field, is_value_display, read_page
from webtask_core.replay.templates import label_words, names_agree

if TYPE_CHECKING:
    from webtask_core.browser.models import ElementInfo, Observation

__all__ = ["ElementFingerprint", "PageSignature", "PageView", "Normaliser", "Difference", "url_pattern"]

# Attributes that tell an element's kind or name, not its state (value, checked, selected change).
NAMING_ATTRIBUTES = ("placeholder", "aria-label", "title", "alt", "accept")
# Attributes that tell apart elements of the same name (where they lead, what they look like).
TELLING_ATTRIBUTES = ("href", "hint", "_action")
_DIGITS = re.compile(r"\d+")
_COUNTED = re.compile(r"# (\w{2,}?)s\b")
_SPACE = re.compile(r"\s+")
_DATE_WORDS = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:rs(?:day)?)?|"
    r"fri(?:day)?|sat(?:urday)?|sun(?:day)?|today|yesterday|tomorrow|[ap]\.?m\.?)\b")
_MIN_PARAM_CHARS = 3  # a shorter value is folded only where it is the whole text


class Normaliser:
    """Folds a page's texts so runs with other values compare equal.

    ``identifying``: the parameters that tell one item from another (a SKU, a title; default all);
    ``files``: this run's uploaded file names (pages show them)."""

    def __init__(self, params: Mapping[str, Any] | None = None, *, identifying: Iterable[str] | None = None,
                 files: Sequence[str] = ()):
        params = dict(params or {})
        chosen = set(identifying) if identifying is not None else None
        values = _values(params)
        self._every = _pattern(values)
        self._names = _marks(values)  # a value two parameters share reads {a|b}: which, the label decides
        # A text that is one value whole, or one line of a value of several lines (an editor shows each
        # paragraph of a description as a line of its own).
        self._whole = _marks(_values(params, any_length=True) + _lines(params))
        self._slugs = _marks([(_SPACE.sub(" ", re.sub(r"[^\w]+", " ", re.sub(r"['’]", "", text))).strip(), name)
                              for text, name in _values(params, any_length=True)])
        self._identifying = _pattern([pair for pair in values if chosen is None or pair[1] in chosen])
        self._identifying_marks = tuple("{" + name + "}" for name in params if chosen is None or name in chosen)
        self._files = _pattern([(name.casefold(), "file") for name in files if len(name) >= _MIN_PARAM_CHARS])

    def __call__(self, text: str | None) -> str:
        return self.choice(text)

    def choice(self, text: str | None) -> str:
        """What a model chose by: every parameter's value as ``{name}`` (a radio labelled with this
        run's condition is the one to check)."""
        folded = _SPACE.sub(" ", text or "").strip().casefold()
        whole = self._whole.get(folded)
        if whole is not None:
            return "{" + whole + "}"
        if self._every is not None:
            folded = self._every.sub(lambda match: "{" + self._names[match.group(0)] + "}", folded)
        return self._finish(folded)

    def told(self, text: str | None) -> str:
        """``choice``, with a value two parameters share narrowed by the text's own words ("Create new
        Shoes product": the product type, not the category)."""
        folded = self.choice(text)
        return decide_marks(folded, label_words(text)) if "|" in folded else folded

    def offer(self, text: str | None) -> str:
        """What a page offers: only the identifying values folded (its options are the same on every
        run, whichever one this run picks)."""
        folded = _SPACE.sub(" ", text or "").strip().casefold()
        if self._identifying is not None:
            folded = self._identifying.sub(lambda match: "{" + self._names[match.group(0)] + "}", folded)
        return self._finish(folded)

    def _finish(self, folded: str) -> str:
        if self._files is not None:
            folded = self._files.sub("{file}", folded)
        # "1 photo ready" and "2 photos ready" read alike: counts change with the item, not the site
        return _COUNTED.sub(r"# \1", _DIGITS.sub("#", _DATE_WORDS.sub("@", folded)))

    def segment(self, segment: str) -> str:
        """A URL path segment: ``{name}`` when it is a parameter's value or its slug."""
        folded = unquote(segment).replace("-", " ").replace("_", " ").casefold()
        names = self._slugs.get(_SPACE.sub(" ", folded).strip())
        return "{" + names + "}" if names else segment

    def mentions(self, text: str) -> bool:
        """True when ``text`` shows one of the identifying parameters' values (this run's SKU, title)."""
        return self._identifying is not None and self._identifying.search(_SPACE.sub(" ", text).casefold()) is not None

    def shows_item(self, folded: str) -> bool:
        """True when a folded text (a control's key) holds an identifying value's ``{name}``."""
        return any(mark in folded for mark in self._identifying_marks)

    @staticmethod
    def plain(text: str | None) -> str:
        return _DIGITS.sub("#", _SPACE.sub(" ", text or "").strip().casefold())


def _values(params: Mapping[str, Any], *, any_length: bool = False) -> list[tuple[str, str]]:
    """(folded value, parameter name), longest first: a title containing the SKU goes whole."""
    values = []
    for name, value in params.items():
        if isinstance(value, (bool, dict)) or value is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            text = _SPACE.sub(" ", str(item)).strip().casefold()
            if text and (any_length or len(text) >= _MIN_PARAM_CHARS):
                values.append((text, name))
    return sorted(values, key=lambda pair: -len(pair[0]))


def _lines(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(_SPACE.sub(" ", line).strip().casefold(), name) for name, value in params.items()
            if isinstance(value, str) and "\n" in value for line in value.splitlines() if len(line.strip()) >= 8]


def _marks(values: list[tuple[str, str]]) -> dict[str, str]:
    names: dict[str, set[str]] = {}
    for text, name in values:
        names.setdefault(text, set()).add(name)
    return {text: "|".join(sorted(found)) for text, found in names.items()}


_MARK = re.compile(r"\{([A-Za-z0-9_.\-|]+)\}")


def agree(recorded: str, current: str) -> bool:
    """Whether a text folded on the recording reads the same as one folded now, where ``{a|b}`` is a
    value two parameters shared: the recording's ``{price}`` is this run's ``{price|quantity}`` (now
    equal), but the recording's undecided ``{price|quantity}`` is not this run's ``{price}``."""
    if recorded == current:
        return True
    if "{" not in recorded or "{" not in current:
        return False
    parts, now = _MARK.split(recorded), _MARK.split(current)
    if len(parts) != len(now):
        return False
    for index, (mine, theirs) in enumerate(zip(parts, now)):
        if index % 2 == 0:
            if mine != theirs:
                return False
        elif not set(mine.split("|")) <= set(theirs.split("|")):
            return False
    return True


def _narrowings(text: str) -> set[str]:
    """``text`` and, for each ``{a|b}`` in it, the text with that mark as ``{a}`` and as ``{b}``: a
    recording where two values were equal is explained by either on a later run."""
    forms = {text}
    for match in _MARK.finditer(text):
        names = match.group(1).split("|")
        if len(names) > 1:
            forms |= {form.replace(match.group(0), "{" + name + "}", 1) for form in list(forms) for name in names}
    return forms


def decide_marks(text: str, words: set[str]) -> str:
    """``text`` with each ``{a|b}`` narrowed to the one parameter the label ``words`` name, where they
    name exactly one (see templates.label_words); undecided marks stay."""
    def narrow(match: re.Match[str]) -> str:
        names = match.group(1).split("|")
        if len(names) == 1:
            return match.group(0)
        named = [name for name in names if names_agree(name, words)]
        return "{" + named[0] + "}" if len(named) == 1 else match.group(0)

    return _MARK.sub(narrow, text)


def _pattern(values: list[tuple[str, str]]) -> re.Pattern[str] | None:
    """One pattern for all ``values``, each matched as whole words ("demo" not inside "demonstrate")."""
    return re.compile("|".join(_bounded(text) for text, _ in values)) if values else None


def _bounded(text: str) -> str:
    return (r"(?<!\w)" if text[:1].isalnum() else "") + re.escape(text) + (r"(?!\w)" if text[-1:].isalnum() else "")


def url_pattern(url: str, normalise: Normaliser | None = None) -> str:
    """``/listings/drafts/*?sku`` for ``https://shop/listings/drafts/a1b2?sku=X``: path segments
    holding a digit (ids) become ``*``, with ``normalise`` a segment that is a parameter's value (or
    its slug: ``/products/create/bags/``) becomes ``{name}``, query keys stay sorted and their values go."""
    parts = urlsplit(url)
    if parts.scheme in ("about", "data", "chrome"):
        return f"{parts.scheme}:{parts.path}"
    segments = ["*" if any(char.isdigit() for char in segment) else
                (normalise.segment(segment) if normalise is not None else segment) for segment in parts.path.split("/")]
    path = "/".join(segments).rstrip("/") or "/"
    keys = sorted({key for key, _ in parse_qsl(parts.query, keep_blank_values=True)})
    return path + ("?" + "&".join(keys) if keys else "")


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=5).hexdigest()


def options_of(element: ElementInfo) -> str:
    """A select's option texts, all of them where observe.js listed them (``_options``)."""
    return element.attributes.get("_options") or element.attributes.get("options") or ""


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

    @classmethod
    def of(cls, element: ElementInfo, normalise: Normaliser, beside: ReadControl | None = None) -> ElementFingerprint:
        attributes = {}
        for key in (*NAMING_ATTRIBUTES, *TELLING_ATTRIBUTES, "value"):
            value = element.attributes.get(key)
            if value and not (key == "value" and element.tag != "button"):  # a field's value is its state
                attributes[key] = url_pattern(value) if key == "href" else normalise(value)
        text = "" if is_value_display(element) else normalise(element.text)
        return cls(
            tag=element.tag, role=element.role, type=(element.type or "").casefold() or None, name=element.name,
            text=text, attributes=attributes,
            before=normalise(beside.before) if beside is not None else "",
            after=normalise(beside.after) if beside is not None else "",
            options=normalise.offer(options_of(element)) if element.tag == "select" else "",
            context=tuple(normalise(line) for line in element.context), frame=element.frame_path,
        )

    def describe(self) -> str:
        """``input "price" (type=text, name=field2)``: how a message names what was looked for."""
        details = [f"{key}={value}" for key, value in (("type", self.type), ("role", self.role), ("name", self.name))
                   if value]
        shown = self.text or self.before or self.after or self.attributes.get("hint", "")
        text = f' "{shown[:40]}"' if shown else ""
        return f"{self.tag}{text}" + (f" ({', '.join(details)})" if details else "")

    def same_control(self, other: ElementFingerprint) -> bool:
        """Whether a model would take ``other`` for this control: the same line and the same text
        beside it. Where it leads and how it looks matter only for an element with no name."""
        if (self.tag, self.role, self.type, self.name, self.options) != (
                other.tag, other.role, other.type, other.name, other.options):
            return False
        if not (agree(self.text, other.text) and agree(self.before, other.before) and agree(self.after, other.after)):
            return False
        for key in (*NAMING_ATTRIBUTES, "value"):  # a button's value is on its line: "draft" is another button
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

    @classmethod
    def of(cls, observation: Observation, normalise: Normaliser) -> PageView:
        return cls(observation, read_page(observation), normalise)

    def unit_of(self, element_id: str) -> int | None:
        read = self.reading.controls.get(element_id)
        return read.unit if read is not None else None

    def resolve(self, fingerprint: ElementFingerprint) -> tuple[str | None, str]:
        """The id of the one element a model would take for ``fingerprint``, else None and why."""
        same = [element_id for element_id, other in self.fingerprints.items() if fingerprint.same_control(other)]
        if not same:
            return None, f"no element like {fingerprint.describe()} on the page"
        if len(same) == 1:
            return same[0], ""
        scored = sorted(((fingerprint.tells(self.fingerprints[element_id]), element_id) for element_id in same),
                        reverse=True)
        if scored[0][0] > scored[1][0]:
            return scored[0][1], ""
        return None, (f"{len(same)} elements like {fingerprint.describe()} ({scored[0][1]}, {scored[1][1]}) and "
                      "nothing tells them apart: not acting on a guess")


def control_key(element: ElementInfo, read: ReadControl | None, normalise: Normaliser) -> str:
    """What a control is, as the page offers it: kind, name attribute, label, text beside, options."""
    text = "" if is_value_display(element) else normalise.offer(element.text)
    parts = [element.tag, element.type or "", element.role or "", element.name or "", text]
    href = element.attributes.get("href")
    if href:
        parts.append("-> " + url_pattern(href))
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


class PageSignature(BaseModel):
    model_config = ConfigDict(frozen=True)

    url: str
    title: str
    controls: tuple[str, ...] = ()  # keys of the controls outside lists of records, sorted (a multiset)
    texts: tuple[str, ...] = ()  # digests of the text lines (as offered, as chosen)
    listed: tuple[str, ...] = ()  # digests of the keys of the controls in lists of records
    records: bool = False  # the page showed a list of records (not one still empty)
    keyed: bool = True  # the page showed the run's identifying values (a search for this SKU)

    @classmethod
    def of(cls, view: PageView) -> PageSignature:
        observation, normalise = view.observation, view.normalise
        keyed = normalise.mentions(f"{observation.url}\n{observation.title}\n{observation.tree}")
        controls = sorted(view.keys[element_id] for element_id in view.keys if view.unit_of(element_id) is None)
        listed = {_digest(view.keys[element_id]) for element_id in view.keys if view.unit_of(element_id) is not None}
        texts = set()
        for line in view.reading.texts:
            texts.add(_digest(normalise.offer(line.text)))
            texts.update(_digest(form) for form in _narrowings(normalise.told(line.text)))
        # A value two parameters shared in the URL (/products/create/shoes/): its words decide which.
        url = decide_marks(url_pattern(observation.url, normalise), label_words(urlsplit(observation.url).path))
        return cls(url=url, title=normalise.told(observation.title),
                   controls=tuple(controls), texts=tuple(sorted(texts)), listed=tuple(sorted(listed)),
                   records=bool(view.reading.unit_texts), keyed=keyed)

    def _list_chrome(self, view: PageView) -> set[str]:
        """Controls a list brings along once it has records (bulk actions, "select all"), where the
        recording saw it empty: those in the same form as the records."""
        reading = view.reading
        if self.records or not reading.unit_texts:
            return set()
        forms = {form for form in reading.unit_forms if form is not None}
        return {element_id for element_id, read in reading.controls.items()
                if read.unit is None and read.form is not None and read.form in forms}

    def difference(self, view: PageView) -> Difference | None:
        """None when ``view`` is this page as a model would see it again; else how it differs."""
        observation, normalise = view.observation, view.normalise
        url = url_pattern(observation.url, normalise)
        if not agree(self.url, url):
            return Difference("site", f"the page is {url}, the recording was on {self.url}")
        title = normalise.told(observation.title)
        if not agree(self.title, title):
            return Difference("site", f"the page's title is {title!r}, the recording's was {self.title!r}")
        recorded = Counter(self.controls)
        unexplained_units: set[int] = set()
        added: list[str] = []
        fields_added = False
        chrome = self._list_chrome(view)
        for element_id, key in view.keys.items():  # controls outside lists first take the recorded ones
            if view.unit_of(element_id) is None:
                if recorded[key] > 0:
                    recorded[key] -= 1
                elif element_id not in chrome:
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
        words: list[str] = []
        for line in view.reading.texts:
            if _digest(normalise.offer(line.text)) in self.texts or _digest(normalise.told(line.text)) in self.texts:
                continue
            if line.unit is not None:
                unexplained_units.add(line.unit)
            elif line.says_something:  # a warning or a notice appeared (a new short label is layout)
                words.append(line.text)
        if not (added or missing or words):
            # On a page about this item when recorded (a search for its SKU), a record that now shows
            # it is its state (listed already); elsewhere lists grow, and a same-titled record of
            # another item is no reason to stop.
            if self.keyed and any(view.unit_mentions[unit] for unit in unexplained_units):
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
            normalise.shows_item(key) for key in added) or any(view.unit_mentions[unit] for unit in unexplained_units)
        if self.keyed and not missing and not fields_added and this_item:
            return Difference("item", message)  # the search for this SKU now finds it
        return Difference("site", message)
