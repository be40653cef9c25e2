"""Recognising a page and an element again on a later run, without the per-observation ids.

An **element fingerprint** keeps what stays the same from one render to the next: tag, role, input
type, the ``name`` attribute, the visible text or label, stable attributes (placeholder, aria-label,
title, hint, href as a pattern), the nearest enclosing tree lines (``label "Price"``, ``form``) and
the frame. Finding it again scores every element of the new observation and accepts the best only
when it is good enough and clearly better than the next: an ambiguous match is no match.

A **page signature** is the URL as a pattern (path segments holding digits become ``*``, query
values dropped), the title, and the set of kinds of interactive elements on the page (a link's kind
is its href pattern, not its text). Two pages match when all three agree, so a search that now finds
a result, a form that gained or lost a field, or another step in the flow are all differences — the
run hands over to the model rather than acting blind. One allowance: a page that showed none of the
run's values when it was recorded (a "my listings" page, not the search for this SKU) may have
gained links — lists of records grow — though not buttons or fields, and must have lost nothing.

Texts are compared normalised: whitespace folded, case folded, digits as ``#``; in fingerprints and
titles also every value of the task's parameters as ``{name}`` (the recording's SKU and this run's
read the same, and the radio button labelled with this run's condition is the one to check). The
kinds of controls a page offers are compared without that: its options are the same on every run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from webtask_core.browser.models import ElementInfo, Observation

__all__ = ["ElementFingerprint", "PageSignature", "Normaliser", "page_fingerprints", "resolve_element", "url_pattern"]

# Attributes that describe what an element is, not its state (value, checked, selected change).
STABLE_ATTRIBUTES = ("placeholder", "aria-label", "title", "hint", "href", "accept", "alt")
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
_MIN_PARAM_CHARS = 3  # shorter values ("a", "10") would be replaced inside unrelated words
# A match must score at least this, and this much more than the next best element.
_MIN_SCORE = 4
_MIN_MARGIN = 2


class Normaliser:
    """Folds the texts of a page so runs with other parameter values compare equal.

    ``identifying``: the parameters that tell one item from another (a SKU, a title) — a page showing
    one of them is about this item (see PageSignature.keyed); default: all of them."""

    def __init__(self, params: Mapping[str, Any] | None = None, *, identifying: Iterable[str] | None = None):
        values = _values(params or {})
        self._pattern = _pattern(values)
        self._names = dict(values)
        chosen = set(identifying) if identifying is not None else None
        self._identifying = _pattern([pair for pair in values if chosen is None or pair[1] in chosen])

    def __call__(self, text: str | None) -> str:
        folded = _SPACE.sub(" ", text or "").strip().casefold()
        if self._pattern is not None:
            folded = self._pattern.sub(lambda match: "{" + self._names[match.group(0)] + "}", folded)
        return _DIGITS.sub("#", folded)

    def mentions(self, text: str) -> bool:
        """True when ``text`` shows one of the parameters' values (this run's SKU, title, ...)."""
        return self._identifying is not None and self._identifying.search(_SPACE.sub(" ", text).casefold()) is not None

    @staticmethod
    def plain(text: str | None) -> str:
        """Folded without the parameters: for what a page offers (its options are the same on every
        run, whichever one this run picks)."""
        return _DIGITS.sub("#", _SPACE.sub(" ", text or "").strip().casefold())


def _values(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(folded value, parameter name), longest first: a title containing the SKU goes whole."""
    values = []
    for name, value in params.items():
        for item in value if isinstance(value, list) else [value]:
            text = _SPACE.sub(" ", str(item)).strip().casefold()
            if len(text) >= _MIN_PARAM_CHARS:
                values.append((text, name))
    return sorted(values, key=lambda pair: -len(pair[0]))


def _pattern(values: list[tuple[str, str]]) -> re.Pattern[str] | None:
    return re.compile("|".join(re.escape(text) for text, _ in values)) if values else None


def url_pattern(url: str, normalise: Normaliser | None = None) -> str:
    """``/listings/drafts/*?sku`` for ``https://shop/listings/drafts/a1b2?sku=X``: path segments
    holding a digit (ids) become ``*``, query keys stay sorted and their values go."""
    parts = urlsplit(url)
    segments = ["*" if any(char.isdigit() for char in segment) else segment for segment in parts.path.split("/")]
    path = "/".join(segments).rstrip("/") or "/"
    keys = sorted({key for key, _ in parse_qsl(parts.query, keep_blank_values=True)})
    if parts.scheme in ("about", "data", "chrome"):
        return f"{parts.scheme}:{parts.path}"
    return path + ("?" + "&".join(keys) if keys else "")


class ElementFingerprint(BaseModel):
    model_config = ConfigDict(frozen=True)

    tag: str
    role: str | None = None
    type: str | None = None
    name: str | None = None
    text: str = ""
    attributes: dict[str, str] = {}
    context: tuple[str, ...] = ()
    frame: str = ""

    @classmethod
    def of(cls, element: ElementInfo, normalise: Normaliser) -> ElementFingerprint:
        attributes = {}
        for key in STABLE_ATTRIBUTES:
            value = element.attributes.get(key)
            if value:
                attributes[key] = url_pattern(value) if key == "href" else normalise(value)
        return cls(
            tag=element.tag, role=element.role, type=(element.type or "").casefold() or None, name=element.name,
            text=normalise(element.text), attributes=attributes,
            context=tuple(normalise(line) for line in element.context), frame=element.frame_path,
        )

    def describe(self) -> str:
        """``button "publish" (name=...)``: how a message names what was looked for."""
        details = [f"{key}={value}" for key, value in (("type", self.type), ("name", self.name)) if value]
        text = f' "{self.text[:40]}"' if self.text else ""
        return f"{self.tag}{text}" + (f" ({', '.join(details)})" if details else "")

    def score(self, other: ElementFingerprint) -> int:
        """How alike two fingerprints are; below zero when they cannot be the same control."""
        if other.tag != self.tag or (self.type or "") != (other.type or ""):
            return -100
        score = 0
        if self.name or other.name:
            score += 3 if self.name == other.name else -3
        if self.text or other.text:
            score += 3 if self.text == other.text else (-1 if self.text and other.text else 0)
        if self.role == other.role:
            score += 1
        for key in set(self.attributes) | set(other.attributes):
            score += 1 if self.attributes.get(key) == other.attributes.get(key) else -1
        score += sum(1 for line in self.context if line in other.context)
        if self.frame == other.frame:
            score += 1
        return score


def page_fingerprints(observation: Observation, normalise: Normaliser) -> list[tuple[str, ElementFingerprint]]:
    """(id, fingerprint) of every element of ``observation``: computed once per page, matched per call."""
    return [(element.id, ElementFingerprint.of(element, normalise)) for element in observation.elements.values()]


def resolve_element(fingerprint: ElementFingerprint, observation: Observation, normalise: Normaliser, *,
                    candidates: list[tuple[str, ElementFingerprint]] | None = None) -> tuple[str | None, str]:
    """The id of the one element of ``observation`` that matches, else None and why. ``candidates``:
    the page's fingerprints when already computed (:func:`page_fingerprints`)."""
    if candidates is None:
        candidates = page_fingerprints(observation, normalise)
    scored = sorted(((fingerprint.score(other), element_id) for element_id, other in candidates), reverse=True)
    if not scored or scored[0][0] < _MIN_SCORE:
        return None, f"no element like {fingerprint.describe()} on the page"
    if len(scored) > 1 and scored[0][0] - scored[1][0] < _MIN_MARGIN:
        return None, (f"more than one element like {fingerprint.describe()} "
                      f"({scored[0][1]}, {scored[1][1]}): not acting on a guess")
    return scored[0][1], ""


class PageSignature(BaseModel):
    model_config = ConfigDict(frozen=True)

    url: str
    title: str
    kinds: tuple[str, ...]
    # The page showed the run's values (a search for this SKU, a filled form): nothing may differ.
    keyed: bool = True

    @classmethod
    def of(cls, observation: Observation, normalise: Normaliser) -> PageSignature:
        keyed = normalise.mentions(f"{observation.url}\n{observation.title}\n{observation.tree}")
        return cls(url=url_pattern(observation.url), title=normalise(observation.title),
                   kinds=tuple(sorted({_kind(element, normalise) for element in observation.elements.values()})),
                   keyed=keyed)

    def difference(self, other: PageSignature) -> str | None:
        """None when ``other`` is the same page; else what differs, in words."""
        if self.url != other.url:
            return f"the page is {other.url}, the recording was on {self.url}"
        if self.title != other.title:
            return f"the page's title is {other.title!r}, the recording's was {self.title!r}"
        mine, theirs = set(self.kinds), set(other.kinds)
        added, missing = sorted(theirs - mine), sorted(mine - theirs)
        if not self.keyed:  # grown lists: new links are content, new buttons or fields are not
            added = [kind for kind in added if not _is_link(kind)]
        if added or missing:
            parts = []
            if added:
                parts.append(f"has {len(added)} kind(s) of control the recording did not ({'; '.join(added[:3])})")
            if missing:
                parts.append(f"lacks {len(missing)} it had ({'; '.join(missing[:3])})")
            return "the page " + " and ".join(parts)
        return None

    def only_grew(self, other: PageSignature) -> bool:
        """True when ``other`` is this page about this run's item with more links — a search that
        now finds it, a record that exists already: what the item's state is, not a site change."""
        mine, theirs = set(self.kinds), set(other.kinds)
        return (self.url == other.url and self.title == other.title and self.keyed and mine < theirs
                and all(_is_link(kind) for kind in theirs - mine))


_LINK = " -> "


def _is_link(kind: str) -> bool:
    return _LINK in kind


def _kind(element: ElementInfo, normalise: Normaliser) -> str:
    href = element.attributes.get("href")
    if href:  # a link is where it goes; its text is content (lists of records grow and change)
        return f"{element.tag}{_LINK}{url_pattern(href)}"
    label = "" if element.tag == "select" else normalise.plain(element.text)
    parts = [element.tag, element.type or "", element.name or "", label]
    return " ".join(part for part in parts if part)
