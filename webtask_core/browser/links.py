"""How a link's href is shown in the tree: only the part of the URL that says something.

The model clicks links by id; the href tells it where one goes. What repeats on every link says
nothing, so the shown href (the element's attributes keep the page's own) is:

- an absolute URL on the main page's own origin: its path, query and fragment (``/docs/os.html``;
  the path stays absolute: readers match paths such as ``/admin/pages/3/`` as they are);
- a query parameter that two or more links carry, every one with the same value (``?lang=en``,
  a tracking tag): left out; one whose value differs between links (``?page=2``) stays;
- a same-site href whose words all stand in the link's text, once the words of the page's own path
  and of file endings (html, php) are set aside (``builtins.html#object`` on a link
  "builtins.object", ``tarfile.html#TarError`` "TarError" on tarfile's page): left out, unless
  a word of it holds a digit (a record's id: "Lamp 2" at ``/listings/2`` keeps its href).
- an in-page anchor whose words all stand in the link's text (``#ArgumentParser`` on a link
  "ArgumentParser", a table of contents): left out; one that says more (``#usage`` on "Read
  more") is shown as it is. On a link to another page such a fragment goes and the page stays
  (``builtins.html#Exception`` on "Exception" shows ``builtins.html``: the page is where it goes);
- an href the link's text spells out (the text is the URL, or its path of a ``file:`` URL: a
  source link, a bare URL in a list of references): left out, the text says it.
A link with no text keeps its href (that is all the model knows of it).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["LinkShortener"]

_WORD = re.compile(r"[^\W_]+")
_SAYS_NOTHING = frozenset({"html", "htm", "php", "asp", "aspx", "jsp", "index", "www"})


def _words(text: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(unquote(text))}


def _hrefs(items: list[Any], frames: dict[str, Any], seen: set[str], out: list[str]) -> None:
    for item in items:
        if type(item) is list:
            pairs = item[1]
            if pairs:
                for index in range(0, len(pairs), 2):
                    if pairs[index] == "href":
                        out.append(pairs[index + 1])
            if len(item) > 4 and item[4]:
                _hrefs(item[4], frames, seen, out)
        elif type(item) is dict:
            key = item.get("k") if item["t"] == "iframe" else None
            if key and key not in seen and key in frames:
                seen.add(key)
                _hrefs(frames[key].items, frames, seen, out)
            elif item.get("c"):
                _hrefs(item["c"], frames, seen, out)


def _query_pairs(href: str) -> list[str]:
    query = href.split("#", 1)[0].partition("?")[2]
    return [pair for pair in query.split("&") if pair] if query else []


def _spelled_out(href: str, text: str) -> bool:
    """Whether the link's text is its URL (a trailing slash aside), or the path of its file: URL."""
    text = text.strip().rstrip("/")
    href = href.rstrip("/")
    if not text:
        return False
    if href == text:
        return True
    if href.startswith("file:"):
        return href.removeprefix("file:").removeprefix("//") == text
    return False


class LinkShortener:
    """Built once per observation from every frame's items; `show(href, has_text, main_frame)`."""

    def __init__(self, frames: dict[str, Any], page_url: str | None):
        parts = urlsplit(page_url) if page_url else None
        self.origin = f"{parts.scheme}://{parts.netloc}" if parts and parts.scheme in ("http", "https") else None
        self.own_words = _words(parts.path if parts else "") | _SAYS_NOTHING
        hrefs: list[str] = []
        main = frames.get("")
        if main is not None:
            _hrefs(main.items, frames, {""}, hrefs)
        carried: Counter[str] = Counter()  # links carrying each parameter name
        values: dict[str, set[str]] = {}
        for href in hrefs:
            for pair in set(_query_pairs(href)):
                name, _, value = pair.partition("=")
                carried[name] += 1
                values.setdefault(name, set()).add(value)
        self.repeated = frozenset(name for name, count in carried.items() if count >= 2 and len(values[name]) == 1)
        self.cache: dict[tuple[str, str, bool], str | None] = {}

    def show(self, href: str, text: str, main_frame: bool) -> str | None:
        """The href as the tree shows it, or None to leave the attribute out."""
        key = (href, text, main_frame)
        if key not in self.cache:
            self.cache[key] = self._shorten(href, text, main_frame)
        return self.cache[key]

    def _shorten(self, href: str, text: str, main_frame: bool) -> str | None:
        if text and _spelled_out(href, text):
            return None
        same_site = not urlsplit(href).scheme and not href.startswith("//")
        if main_frame and self.origin and href.startswith(self.origin):
            rest = href[len(self.origin):]
            if not rest or rest[0] in "/?#":
                href, same_site = rest or "/", True
        if self.repeated and "?" in href:
            path, _, query = href.partition("?")
            query, hash_mark, fragment = query.partition("#")
            kept = [pair for pair in query.split("&") if pair and pair.partition("=")[0] not in self.repeated]
            href = path + ("?" + "&".join(kept) if kept else "") + hash_mark + fragment
        if text and href.startswith("#"):
            said = _words(href)  # a bare "#" (a script's link) stays: it says the link goes nowhere
            return None if said and said <= _words(text) else href
        if text and "#" in href:  # another page's anchor the text names: the page says where it goes
            page, _, fragment = href.partition("#")
            said = _words(fragment)
            if page and said and said <= _words(text):
                href = page
        if text and same_site and "?" not in href:
            said = _words(href) - self.own_words
            # A number in a path is a record's id: a title holding the same digits ("Lamp 2" on
            # /listings/2) does not say it, and a model reporting the record's URL needs it.
            if said <= _words(text) and not any(char.isdigit() for word in said for char in word):
                return None  # the text says all the URL does
        return href or None
