"""Folding a page's texts so that runs with other values read alike, and reading which parameter a
text or a label names.

Folding: whitespace and case, digits as ``#`` (a count's noun without its plural), month and day
names as ``@``, uploaded file names as ``{file}``, and this run's values as ``{name}``. A value two
parameters share reads ``{a|b}``: the words around it decide which (:func:`decide_marks`), and
:func:`agree` compares a recording's text with a later run's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["Normaliser", "agree", "decide_marks", "narrowings", "url_pattern", "label_words", "names_agree"]

_DIGITS = re.compile(r"\d+")
_COUNTED = re.compile(r"# (\w{2,}?)s\b")
_SPACE = re.compile(r"\s+")
_DATE_WORDS = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:rs(?:day)?)?|"
    r"fri(?:day)?|sat(?:urday)?|sun(?:day)?|today|yesterday|tomorrow|[ap]\.?m\.?)\b")
_MIN_PARAM_CHARS = 3  # a shorter value is folded only where it is the whole text


def label_words(*texts: str | None) -> set[str]:
    """The words of what names a control — its label, the text beside it, its ``name`` attribute
    (``stockrecords-0-num_in_stock``), the hints of the list around it — for :class:`Binding`'s
    label test."""
    return {word for text in texts if text for word in _split_words(text)}


def _split_words(text: str) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", unicodedata.normalize("NFKD", text))
    return {word for word in re.split(r"[\W\d_]+", spaced.casefold()) if len(word) >= 3}


def _same_word(one: str, other: str) -> bool:
    """``price`` and ``prices``, ``category`` and ``categories``; not ``product`` and ``productcategory``."""
    if one == other:
        return True
    short, long = sorted((one, other), key=len)
    if len(short) < 4 or len(long) - len(short) > 3:
        return False
    return long.startswith(short[: max(4, len(short) - 2)])


def names_agree(name: str, words: set[str]) -> bool:
    """Whether a parameter's name (``product_type``, ``numInStock``) is named by the label ``words``."""
    return any(_same_word(mine, word) for mine in _split_words(name) for word in words)


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
        self._whole = _marks(_values(params, any_length=True) + _lines(params) + _days(params))
        # A list written in one line ("brass, desk, vintage"): the list, however many items this run has.
        joins = [(sep.join(_SPACE.sub(" ", str(item)).strip().casefold() for item in value), name)
                 for name, value in params.items() if isinstance(value, list) and len(value) > 1
                 for sep in (", ", ",", "; ", " · ", " | ")]
        self._joins = _pattern(sorted(joins, key=lambda pair: -len(pair[0])))
        self._join_names = dict(joins)
        slugs = [(_SPACE.sub(" ", re.sub(r"[^\w]+", " ", re.sub(r"['’]", "", text))).strip(), name)
                 for text, name in _values(params, any_length=True)]
        self._slugs = _marks(slugs)
        self._identifying_slugs = _marks([pair for pair in slugs if chosen is None or pair[1] in chosen])
        self._identifying = _pattern([pair for pair in values if chosen is None or pair[1] in chosen])
        self._identifying_marks = tuple("{" + name + "}" for name in params if chosen is None or name in chosen)
        self._files = _pattern([(name.casefold(), "file") for name in files if len(name) >= _MIN_PARAM_CHARS])
        self._file_names = {name.casefold() for name in files if name}
        self.params = params
        # The parameters this run typed into a field (a photo's caption): an option of a select that
        # is one of their values whole lists this item's own content (the caption among the images).
        self.typed: set[str] = set()

    def __call__(self, text: str | None) -> str:
        return self.choice(text)

    def choice(self, text: str | None) -> str:
        """What a model chose by: every parameter's value as ``{name}`` (a radio labelled with this
        run's condition is the one to check)."""
        folded = _SPACE.sub(" ", text or "").strip().casefold()
        whole = self._whole.get(folded)
        if whole is None and folded.endswith("…") and len(folded) > 40:  # a long value the tree cut
            starts = {names for value, names in self._whole.items() if value.startswith(folded[:-1])}
            whole = starts.pop() if len(starts) == 1 else None
        if whole is not None:
            return "{" + whole + "}"
        if self._joins is not None:
            folded = self._joins.sub(lambda match: "{" + self._join_names[match.group(0)] + "}", folded)
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

    def options(self, text: str | None) -> str:
        """A select's options (``a | b``) as offered (:meth:`offer`), except that an option which is
        wholly a value this run typed reads ``{name}``: the caption typed for this item's photo,
        listed by the image select, is this item's, while a condition "New" chosen among the site's
        fixed options stays the site's word."""
        found = [self._typed_name(option) for option in (text or "").split(" | ")] if self.typed else []
        if not any(found):
            return self.offer(text)
        return " | ".join("{" + name + "}" if name else self.offer(option)
                          for option, name in zip((text or "").split(" | "), found))

    def _typed_name(self, option: str) -> str | None:
        names = self._whole.get(_SPACE.sub(" ", option).strip().casefold(), "").split("|")
        typed = sorted(name for name in names if name in self.typed)
        return "|".join(typed) if typed else None

    def _finish(self, folded: str) -> str:
        if self._files is not None:
            folded = self._files.sub("{file}", folded)
        # "1 photo ready" and "2 photos ready" read alike: counts change with the item, not the site
        return _COUNTED.sub(r"# \1", _DIGITS.sub("#", _DATE_WORDS.sub("@", folded)))

    def segment(self, segment: str, *, plainly: bool = False) -> str:
        """A URL path segment: ``{name}`` when it is a parameter's value or its slug (``plainly``:
        only an identifying one's — ``/listings/new`` is the site's, whatever this run's condition)."""
        if unquote(segment).casefold() in self._file_names:  # a file this run uploaded (/media/…/shoe.jpg)
            return "{file}"
        stem, dot, extension = segment.rpartition(".")
        if dot and stem and extension.isalnum() and len(extension) <= 5:  # a file named by the item: {sku}.jpg
            named = self.segment(stem, plainly=True)
            if named != stem:
                return f"{named}.{extension}"
        folded = unquote(segment).replace("-", " ").replace("_", " ").casefold()
        names = (self._identifying_slugs if plainly else self._slugs).get(_SPACE.sub(" ", folded).strip())
        return "{" + names + "}" if names else segment

    def mentions(self, text: str) -> bool:
        """True when ``text`` shows one of the identifying parameters' values (this run's SKU, title)."""
        return self._identifying is not None and self._identifying.search(_SPACE.sub(" ", text).casefold()) is not None

    def owns(self, text: str) -> bool:
        """True when ``text`` shows this run's item: an identifying value, or a file this run uploaded."""
        return self.mentions(text) or (self._files is not None and self._files.search(text.casefold()) is not None)

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


_ISO_DATE = re.compile(r"\d{4}-\d{2}-(\d{2})")


def _days(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A date's day of the month as ``{name.day}``, where it is a text's whole: the calendar cell a
    model clicks to pick or confirm ``2025-03-14`` is the one that says "14", on every run its own."""
    return [(str(int(match.group(1))), f"{name}.day") for name, value in params.items()
            if isinstance(value, str) and (match := _ISO_DATE.fullmatch(value.strip()))]


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


def narrowings(text: str) -> set[str]:
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


def url_pattern(url: str, normalise: Normaliser | None = None, *, plainly: bool = False) -> str:
    """``/listings/drafts/*?sku`` for ``https://shop/listings/drafts/a1b2?sku=X``: path segments
    holding a digit (ids) become ``*``, with ``normalise`` a segment that is a parameter's value (or
    its slug: ``/products/create/bags/``) becomes ``{name}`` (``plainly``: an identifying one's only),
    query keys stay sorted and their values go."""
    parts = urlsplit(url)
    if parts.scheme in ("about", "data", "chrome"):
        return f"{parts.scheme}:{parts.path}"
    segments = [_segment(segment, normalise, plainly) for segment in parts.path.split("/")]
    path = "/".join(segments).rstrip("/") or "/"
    keys = sorted({key for key, _ in parse_qsl(parts.query, keep_blank_values=True)})
    return path + ("?" + "&".join(keys) if keys else "")


def _segment(segment: str, normalise: Normaliser | None, plainly: bool) -> str:
    """A parameter's value first (a title's slug may hold digits: ``paperback-atlas-dr-1``), then an id."""
    folded = normalise.segment(segment, plainly=plainly) if normalise is not None and segment else segment
    if folded != segment:
        return folded
    return "*" if any(char.isdigit() for char in segment) else segment
