"""Recorded values become placeholders (:mod:`~webtask_core.replay.templates`): exact, or declined.

A value equal to two parameters is bound by the label of the field it went into (``Price`` ->
``price``), or not at all; a weak value (a boolean, a one-digit number) equal to one parameter
needs that label too, since a constant the model typed or ticked may equal it by chance. An item
of a list parameter typed on its own is ``{{param:tags[1]}}``; the list typed in one field is
``{{param:tags|join:, }}``. A typed text that shares its words with a parameter in no format
(a shortened title, a rewritten description), or a long text no parameter explains, cannot be
bound: the step is the model's (``Binding.problem`` says why), and replay never types it.

A short word a page shows (``New``) may be this run's value or one of the site's own words
("New: Product page" with condition "New"): in a line a page shows it is bound strictly only where
it stands as a value (the whole line, or after a label's colon), and elsewhere as
``{{param:condition|or:New}}``, which a later page may show with either.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from webtask_core.replay.folding import label_words, names_agree
from webtask_core.replay.numbers import NUMBER, NumberStyle, as_number, readings, weak_number
from webtask_core.replay.templates import PLACEHOLDER, SLUG, fold, page_values

__all__ = ["Binding", "template_value", "template_text", "count_placeholders", "report_template", "completed",
           "LONG_TEXT_CHARS", "JOINS"]

_SPACE = re.compile(r"\s+")
_RUNS = re.compile(r"\s+|\S+")
_NOT_ONE_SPACE = re.compile(r"\s{2,}|[^\S ]")  # whitespace that folds to one space: a run, or a tab, a line break
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_MIN_TEXT_CHARS = 3  # a shorter value is only ever matched whole, never inside other text
# A typed literal longer than this was composed, not chosen: bound to a parameter, or the model's.
LONG_TEXT_CHARS = 80
# How a list is written in one field ("red, blue, green"), tried in this order.
JOINS = (", ", ",", "; ", ";", "\n", " ")
_URL = re.compile(r"https?://[^\s\"'<>)\]]+")
# A short word that may be the site's own: in a shown line, strict only where it stands as a value.
_PLAIN_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@dataclass
class Binding:
    """Binds the values found in recorded text to this run's parameters.

    ``label``: the words of the field the text went into (or of the line it is shown on): with two
    parameters of the same value, the one named like the label is taken. ``strict``: a weak value
    equal to one parameter without the label agreeing is refused (for typed values: a guess would
    type the wrong thing) rather than kept as a literal (for shown values: a literal that differs
    next time only hands over). ``files``: names of this run's uploaded files. ``shown``: the text
    is a line a page shows (a one-word value inside a sentence may be the site's own word).
    """

    params: Mapping[str, Any]
    label: set[str]
    strict: bool = True
    files: Sequence[str] = ()
    counts: bool = False  # a number equal to a list parameter's length is {{count:NAME}} ("2 photos")
    shown: bool = False
    problem: str | None = None  # set when a value cannot be bound without a guess

    def choose(self, value_text: str, names: list[str], weak: bool) -> str | None:
        """The one parameter ``value_text`` stands for among ``names`` (all equal to it), else None
        (and ``problem`` says why when it is a guess, not a literal)."""
        if not names:
            return None
        named = [name for name in names if names_agree(name, self.label)]
        if len(names) > 1:
            if len(named) == 1:
                return named[0]
            self.problem = (f"the value {value_text!r} fits {', '.join(sorted(names))} and the label does not say "
                            "which one it is")
            return None
        if weak and not named:
            if self.strict:
                self.problem = (f"the value {value_text!r} equals {names[0]} but the label does not name it: "
                                "a constant and this run's value cannot be told apart")
            return None
        return names[0]


def template_value(value: Any, binding: Binding, *, page_url: str = "") -> Any:
    """A recorded input value with placeholders (a dict's and a list's items one by one)."""
    params = binding.params
    if isinstance(value, dict):
        return {key: template_value(item, binding, page_url=page_url) for key, item in value.items()}
    if isinstance(value, list):
        names = [name for name, param in params.items() if isinstance(param, list) and _same_list(value, param)]
        if names:
            chosen = binding.choose(json.dumps(value), names, weak=False)
            return "{{param:" + chosen + "}}" if chosen else value
        return [template_value(item, binding, page_url=page_url) for item in value]
    if isinstance(value, bool):
        names = [name for name, param in params.items() if isinstance(param, bool) and param is value]
        chosen = binding.choose(str(value).lower(), names, weak=True)
        return "{{param:" + chosen + "}}" if chosen else value
    if isinstance(value, (int, float)):
        text = template_text(str(value), binding, page_url=page_url)
        return value if text == str(value) else text
    if not isinstance(value, str) or not value:
        return value
    return template_text(value, binding, page_url=page_url)


def _same_list(value: list[Any], param: list[Any]) -> bool:
    return [fold(str(item)) for item in value] == [fold(str(item)) for item in param]


def _only_secrets(value: str) -> bool:
    return bool(re.fullmatch(r"(\{\{secret:[^}]+\}\})+", value))


def template_text(text: str, binding: Binding, *, page_url: str = "") -> str:
    """``text`` with every value of the parameters in it as a placeholder (formatted as it was
    written). Parts no parameter explains stay as they are."""
    pages = page_values(page_url)
    for key in ("url", "path_url", "origin"):
        if key in pages and text == pages[key]:
            return "{{page:" + key + "}}"
    origin = pages.get("origin")
    if origin and text.startswith(origin + "/"):  # the rest may hold this run's values (/products/red-shoe/)
        return "{{page:origin}}" + template_text(text[len(origin):], binding)
    whole = _whole(text, binding)
    if whole is not None:
        return whole
    pieces: list[tuple[int, int, str]] = []  # (start, end, placeholder), not overlapping
    for start, end, placeholder in _text_matches(text, binding) + _number_matches(text, binding):
        if all(end <= other_start or start >= other_end for other_start, other_end, _ in pieces):
            pieces.append((start, end, placeholder))
    out, at = [], 0
    for start, end, placeholder in sorted(pieces):
        out.append(text[at:start])
        out.append(placeholder)
        at = end
    out.append(text[at:])
    result = "".join(out)
    if binding.strict and binding.problem is None:
        binding.problem = _derived_problem(PLACEHOLDER.sub(" ", result), binding)
    return result


def _derived_problem(literal: str, binding: Binding) -> str | None:
    """A typed literal derived from a parameter in a way no format repeats (part of a title, a
    rewritten description, one tag among other words), or a long text no parameter explains: replay
    would type the recording's words."""
    words = {word for word in _WORD.findall(fold(literal)) if len(word) >= 4}
    for name, param in binding.params.items():
        if isinstance(param, list):
            items = {fold(str(item)) for item in param if len(str(item)) >= 4}
            if any(re.search(rf"(?<!\w){re.escape(item)}(?!\w)", fold(literal)) for item in items):
                return f"{literal.strip()[:60]!r} holds an item of {name} among other words, which replay cannot repeat"
            continue
        if not isinstance(param, str) or _only_secrets(param) or not words:
            continue
        theirs = set(_WORD.findall(fold(param)))
        shared = words & theirs
        # A long parameter shares common words with anything: half the literal's words, or more.
        if shared and (len(param) <= LONG_TEXT_CHARS or len(shared) * 2 >= len(words)):
            return f"{literal.strip()[:60]!r} was written from {name} in a way replay cannot repeat"
    if len(fold(literal)) > LONG_TEXT_CHARS:
        return (f"a text of {len(fold(literal))} characters ({literal.strip()[:40]!r}…) that no parameter explains: "
                "a composed text is never replayed as a literal")
    return None


def _whole(text: str, binding: Binding) -> str | None:
    """The placeholder for a text that is one parameter's value, an item of a list parameter, or a
    list written in one field, whole (any length)."""
    folded = fold(text)
    if not folded:
        return None
    names = [name for name, param in binding.params.items()
             if not isinstance(param, (list, dict, bool)) and param is not None and fold(str(param)) == folded]
    if not names and binding.shown and folded.endswith("…"):  # a long value the tree cut: the one it begins
        cut = completed(folded[:-1], binding.params)
        names = [cut] if cut is not None else []
    values = {name: str(binding.params[name]) for name in names}
    if not names:
        for name, param in binding.params.items():
            if not isinstance(param, list):
                continue
            for index, item in enumerate(param):
                if fold(str(item)) == folded:
                    names.append(f"{name}[{index}]")
                    values[f"{name}[{index}]"] = str(item)
            joins = [sep for sep in JOINS if len(param) > 1 and _joined_exactly(text, sep, param)]
            # the separator exactly as written ("red, blue"), else the one it splits at ("red ,blue")
            join = next((sep for sep in joins if sep.join(str(item) for item in param) == text.strip()),
                        joins[0] if joins else None)
            if join is not None:
                names.append(f"{name}|join:{join}")
                values[f"{name}|join:{join}"] = text
    if not names:
        return None
    number = as_number(text)
    weak = weak_number(number) if number is not None else len(folded) < _MIN_TEXT_CHARS
    chosen = binding.choose(text, names, weak=weak)
    if chosen is None:
        return text if binding.problem is None else None
    return "{{param:" + chosen + _case(text, values[chosen], binding) + "}}"


def completed(start: str, params: Mapping[str, Any]) -> str | None:
    """The one text parameter whose value begins with ``start`` (40 characters or more: a long
    value the tree cut with "…")."""
    folded = fold(start)
    found = [name for name, value in params.items()
             if isinstance(value, str) and len(folded) >= 40 and fold(value).startswith(folded)]
    return found[0] if len(found) == 1 else None


def _joined_exactly(text: str, sep: str, items: list[Any]) -> bool:
    return [piece.strip() for piece in text.split(sep.strip() or sep)] == [str(item).strip() for item in items]


def _case(written: str, value: str, binding: Binding) -> str:
    """The format that writes ``value`` as ``written`` was: as it is, upper, lower or title case.
    Another case is a value the model rewrote its own way: for typed text a problem."""
    if fold(written) == fold(value) and _SPACE.sub(" ", written).strip() == _SPACE.sub(" ", value).strip():
        return ""
    if fold(written) != fold(value):
        return ""
    for name, transform in (("upper", str.upper), ("lower", str.lower), ("title", str.title)):
        if written == transform(value):
            return "|" + name
    if binding.strict:
        binding.problem = f"{written!r} is {value!r} written in a case of the model's own"
    return ""


def _spaced(text: str) -> tuple[str, list[int]]:
    """``text`` casefolded with every run of whitespace as one space, and where each of its
    characters came from (a description typed with line breaks holds a value written with spaces)."""
    out: list[str] = []
    where: list[int] = []
    folded_text = text.casefold()
    if len(folded_text) == len(text):  # one character for one: only the spaces that are not one " " to do
        done = 0
        for match in _NOT_ONE_SPACE.finditer(text):
            out.extend((folded_text[done:match.start()], " "))
            where.extend(range(done, match.start() + 1))
            done = match.end()
        out.append(folded_text[done:])
        where.extend(range(done, len(text) + 1))
        return "".join(out), where
    # Run by run, not character by character (a page's text is thousands: ~4 ms a call that way).
    for match in _RUNS.finditer(text):
        run, start = match.group(0), match.start()
        if run[0].isspace():
            out.append(" ")
            where.append(start)
            continue
        folded = run.casefold()
        if len(folded) == len(run):  # one character for one
            out.append(folded)
            where.extend(range(start, start + len(run)))
            continue
        for offset, char in enumerate(run):  # "ß" folds to "ss": both come from its place
            piece = char.casefold()
            out.append(piece)
            where.extend([start + offset] * len(piece))
    where.append(len(text))
    return "".join(out), where


def _text_matches(text: str, binding: Binding) -> list[tuple[int, int, str]]:
    """Where string parameters (and uploaded file names) occur in ``text``: longest values first."""
    found: list[tuple[int, int, str]] = []
    folded, where = _spaced(text)
    candidates: list[tuple[str, str, str]] = []  # (needle, placeholder, original)
    for name, param in binding.params.items():
        if isinstance(param, (list, dict, bool)) or param is None or as_number(param) is not None:
            continue
        value = _SPACE.sub(" ", str(param)).strip()
        if len(value) >= _MIN_TEXT_CHARS:
            candidates.append((value.casefold(), name, value))
            slug = SLUG.sub("-", value.casefold()).strip("-")
            if slug != value.casefold() and len(slug) >= _MIN_TEXT_CHARS:
                candidates.append((slug, name + "|slug", value))
    for file_name in binding.files:
        if len(file_name) >= _MIN_TEXT_CHARS:
            candidates.append((file_name.casefold(), "", file_name))
    # Equal values under two names: bind by the label, or leave the text as it is.
    by_needle: dict[str, list[tuple[str, str]]] = {}
    for needle, name, original in candidates:
        by_needle.setdefault(needle, []).append((name, original))
    for needle in sorted(by_needle, key=len, reverse=True):
        entries = by_needle[needle]
        start = _find_word(folded, needle, 0)
        while start >= 0:
            end = start + len(needle)
            begin, finish = where[start], where[end - 1] + 1
            if any(name == "" for name, _ in entries):
                placeholder = "{{file}}"
            else:
                names = [name for name, _ in entries]
                base = {name.split("|")[0]: name for name in names}
                chosen = binding.choose(text[begin:finish], list(base), weak=False)
                if chosen is None:
                    start = _find_word(folded, needle, end)
                    continue
                full = base[chosen]
                written = text[begin:finish]
                suffix = "|slug" if full.endswith("|slug") else _case(written, entries[0][1], binding)
                if binding.shown and suffix != "|slug" and _maybe_the_sites_word(written, folded, start, end):
                    suffix = "|or:" + written  # shown lines compare case aside
                placeholder = "{{param:" + chosen + suffix + "}}"
            found.append((begin, finish, placeholder))
            start = _find_word(folded, needle, end)
    return found


def _maybe_the_sites_word(written: str, line: str, start: int, end: int) -> bool:
    """Whether a value found in a shown line may be one of the site's own words: one plain word,
    inside a sentence rather than standing as a value after a label's colon ("Condition: New")."""
    if not _PLAIN_WORD.fullmatch(written.strip()):
        return False
    before, after = line[:start].rstrip(), line[end:].lstrip()
    as_value = before.endswith(":") and (not after or after[0] in ",;|)·/")
    return not as_value


def _find_word(text: str, needle: str, at: int) -> int:
    """Where ``needle`` occurs in ``text`` from ``at`` as whole words ("demo" not in "demonstrate")."""
    while True:
        start = text.find(needle, at)
        if start < 0:
            return -1
        end = start + len(needle)
        inside = (needle[:1].isalnum() and start > 0 and text[start - 1].isalnum()) or (
            needle[-1:].isalnum() and end < len(text) and text[end].isalnum())
        if not inside:
            return start
        at = start + 1


def _number_matches(text: str, binding: Binding) -> list[tuple[int, int, str]]:
    """Numbers in ``text`` equal to a numeric parameter, with the way they are written (and, with
    ``counts``, equal to the length of a list parameter)."""
    found: list[tuple[int, int, str]] = []
    numeric = {name: number for name, param in binding.params.items() if (number := as_number(param)) is not None}
    lengths: dict[int, list[str]] = {}
    if binding.counts:
        for name, param in binding.params.items():
            if isinstance(param, list) and param:
                lengths.setdefault(len(param), []).append(name)
    if not numeric and not lengths:
        return found
    for match in NUMBER.finditer(text):
        token = match.group(0)
        placeholder = None
        for number, style in readings(token):
            names = [name for name, value in numeric.items() if value == number]
            if not names:
                continue
            chosen = binding.choose(token, names, weak=weak_number(number))
            if chosen is None:
                break
            param = str(binding.params[chosen]).strip()
            if token == param:
                placeholder = "{{param:" + chosen + "}}"
            else:
                # Fewer decimals than the value was given with: written without trailing zeros.
                shorter = style.decimals is not None and style.decimals < len(param.partition(".")[2])
                written = NumberStyle(None, style.comma, style.group) if shorter else style
                placeholder = "{{param:" + chosen + "|" + written.spec + "}}"
            break
        counted = lengths.get(int(token), []) if token.isdigit() else []
        # A count only where its words name the list ("2 photos", "Photos: 2"): a quantity of 1 is
        # not the number of photos because one was uploaded, and would read as changed with two.
        if placeholder is None and len(counted) == 1 and names_agree(counted[0], binding.label):
            placeholder = "{{count:" + counted[0] + "}}"
        if placeholder is not None:
            found.append((match.start(), match.end(), placeholder))
    return found


def count_placeholders(text: str, params: Mapping[str, Any]) -> str:
    """``text`` with numbers equal to the length of one list parameter as ``{{count:NAME}}``."""
    lengths: dict[int, list[str]] = {}
    for name, value in params.items():
        if isinstance(value, list) and value:
            lengths.setdefault(len(value), []).append(name)

    def count(match: re.Match[str]) -> str:
        names = lengths.get(int(match.group(0)), [])
        # "2 photos", "photos: 2" — not "Step 1 of 3" because one photo was uploaded.
        beside = _WORD_BEFORE.findall(text[:match.start()])[-1:] + _WORD_AFTER.findall(text[match.end():])[:1]
        named = len(names) == 1 and names_agree(names[0], label_words(*beside))
        return "{{count:" + names[0] + "}}" if named else match.group(0)

    return re.sub(r"(?<![\w.,])\d+(?![\w.,]\d)", count, text)


_WORD_BEFORE = re.compile(r"([^\W\d_]+)\W{0,2}$")
_WORD_AFTER = re.compile(r"^\s*([^\W\d_]+)")


def report_template(text: str, binding: Binding, *, page_url: str,
                    links: Mapping[str, str] | None = None) -> tuple[str, str | None, list[str]]:
    """What the model reported (``complete``'s feedback) as a template, why it cannot be replayed,
    and the links it names. A URL is this run's page (``{{page:url}}`` inside the text), a link of
    that page (``links``: absolute URL -> element id; ``{{link:N}}``, the N-th id returned), or made
    of this run's values; an id is one of the page URL's segments (``{{page:segment:2}}``). Any
    other URL holding an id is the recorded run's own, never this run's: the step is the model's."""
    pages = page_values(page_url)
    urls = [(pages[key], key) for key in ("url", "path_url") if key in pages]
    segments = {value: key for key, value in pages.items() if key.startswith("segment:") and value.isdigit()}
    pieces: list[str] = []
    used: list[str] = []
    at = 0
    problem = None

    def words(part: str) -> str:  # text between URLs: values as placeholders, ids as this page's
        templated = template_text(part, binding)
        return "".join(piece if piece.startswith("{{") else re.sub(
            r"(?<![\w.,/])\d+(?![\w.,]\d)", lambda match: "{{page:" + segments[match.group(0)] + "}}"
            if match.group(0) in segments else match.group(0), piece) for piece in re.split(r"(\{\{[^}]*\}\})", templated))

    for match in _URL.finditer(text):
        url = match.group(0).rstrip(".,;:!?")
        pieces.append(words(text[at:match.start()]))
        at = match.start() + len(url)
        key = next((key for value, key in urls if url == value), None)
        if key is not None:
            pieces.append("{{page:" + key + "}}")
        elif links and url in links:
            used.append(links[url])
            pieces.append("{{link:" + str(len(used) - 1) + "}}")
        else:
            bound = template_text(url, Binding(binding.params, set(), strict=False, files=binding.files),
                                  page_url=page_url)
            pieces.append(bound)
            path = PLACEHOLDER.sub("", bound).split("//", 1)[-1].partition("/")[2]
            if any(char.isdigit() for char in path):
                problem = f"the report names {url!r}, a page of the recorded run, not of this one"
    pieces.append(words(text[at:]))
    return "".join(pieces), problem, used
