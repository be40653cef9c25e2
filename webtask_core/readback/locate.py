"""Finding the listing's own page: the URL given or reported; else from the page the run ended on —
the one link there that leads to the listing (a list of listings), or that page itself when it names
the listing; else the site's search for it. A link leads to the listing when it sits in a result (a
row, an item, a card) naming it and is that result's only link or is named as the listing is."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

from webtask_core.browser.tree_lines import marked_line
from webtask_core.readback.compare import fold_text
from webtask_core.readback.page import page_lines
from webtask_core.readback.spec import ReadBack

__all__ = ["reported_url", "names_listing", "listing_links", "links_from_final_page"]

_LINE = re.compile(r"^(?P<indent> *)- (?P<rest>.*)$")
_LINK = re.compile(r'^a-\d+\b.*?\bhref="(?P<href>[^"]+)"')
# A link whose words are its URL shows no href (links.py): the words are the href.
_URL_LINK = re.compile(r'^a-\d+(?: \([^"]*\))? "(?P<href>(?:https?://|/)[^"\s]+)"$')


def _link(rest: str) -> re.Match[str] | None:
    return _LINK.match(rest) or _URL_LINK.match(rest)
_UNITS = re.compile(r"^(row|item|article|group)\b")
# A button that goes on with a listing (publish it, save it, go to the next step): a page offering
# one is a form or a review of what is to be listed, not the listing as the site stores it.
_GOES_ON = re.compile(r'^(?:button-\d+\b.*"(?P<text>[^"]*)"\s*$|input-\d+ \(type="submit".*?value="(?P<value>[^"]*)")')
_GOING_ON_WORDS = re.compile(r"\b(publish\w*|submit\w*|confirm\w*|save\w*|continue|next|post|send|create|"
                             r"list (?:it|item|now)|go live|place order|pay)\b", re.IGNORECASE)


def _http(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip().startswith(("http://", "https://")) else None


_URL_IN_TEXT = re.compile(r"https?://[^\s<>\"')\]]+")


def reported_url(spec: ReadBack, output: Any, feedback: str = "") -> str | None:
    """The listing's URL: the one given, else the one the run reported in its output, else the one
    URL its feedback names ("it is live at https://..."; two or more say nothing of which is the listing's)."""
    if spec.url:
        return spec.url
    if hasattr(output, "model_dump"):
        output = output.model_dump()
    if isinstance(output, Mapping):
        for name in spec.url_fields:
            found = _http(output.get(name))
            if found:
                return found
    named = list(dict.fromkeys(url.rstrip(".,;:!?") for url in _URL_IN_TEXT.findall(feedback)))
    return named[0] if len(named) == 1 else None


def _identifying(spec: ReadBack) -> list[str]:
    return [fold_text(str(spec.fields[name])) for name in spec.identifying
            if isinstance(spec.fields.get(name), (str, int)) and str(spec.fields[name]).strip()]


def _says(text: str, value: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(value) + r"(?![\w-])", fold_text(text)) is not None


def names_listing(spec: ReadBack, tree: str) -> bool:
    """Whether a page is the listing's own: it names it (an identifying field — a SKU, a title — as
    a line's words) and offers no button to go on with it (a form, or a review before Publish, names
    it too)."""
    values = _identifying(spec)
    return any(_says(line.text, value) for line in page_lines(tree) for value in values) and not _goes_on(tree)


def links_from_final_page(spec: ReadBack, tree: str, page_url: str) -> list[str]:
    """The links to the listing on the page a run ended on: none when that page offers to go on with
    the listing (a review before Publish, a form step) — its links are the steps' ("Start over",
    "Back to edit"), never the listing's, which is not published yet."""
    return [] if _goes_on(tree) else listing_links(spec, tree, page_url)


def _goes_on(tree: str) -> bool:
    for raw in tree.splitlines():
        match = _GOES_ON.match(raw.strip().removeprefix("- "))
        if match and _GOING_ON_WORDS.search(match.group("text") or match.group("value") or ""):
            return True
    return False


def listing_links(spec: ReadBack, tree: str, page_url: str) -> list[str]:
    """The links of a search page that lead to the listing: in a result (row, item, card) whose text
    names it, else a link whose words are its title."""
    values = _identifying(spec)
    rows: list[tuple[int, list[str], list[tuple[str, str]], list[bool]]] = []  # (indent, texts, links, claimed)
    found: list[str] = []

    title = fold_text(str(spec.fields.get("title", "")))

    def close(indent: int) -> None:
        while rows and rows[-1][0] >= indent:
            _, texts, hrefs, claimed = rows.pop()
            if claimed[0] or not hrefs or not any(_says(" ".join(texts), value) for value in values):
                continue
            # A result's link: its only one, or the one named as the listing (not "Edit", "Back").
            named = [href for href, text in hrefs if title and title in fold_text(text)]
            found.extend(named or ([hrefs[0][0]] if len(hrefs) == 1 else []))
            for row in rows:  # the innermost result names it: not the page section around it
                row[3][0] = True

    for raw in tree.splitlines():
        match = _LINE.match(marked_line(raw))  # a text line as `- text: "..."`: a result's words
        if match is None:
            continue
        indent, rest = len(match.group("indent")), match.group("rest")
        close(indent)
        if _UNITS.match(rest):
            rows.append((indent, [], [], [False]))
            continue
        link = _link(rest)
        for _, texts, hrefs, _claimed in rows:
            texts.append(rest)
            if link:
                hrefs.append((link.group("href"), rest))
    close(-1)
    if not found:
        found = [match.group("href") for raw in tree.splitlines()
                 if (match := _link(raw.strip().removeprefix("- "))) and title and title in fold_text(raw)]
    unique = list(dict.fromkeys(urljoin(page_url, href) for href in found))
    return unique
