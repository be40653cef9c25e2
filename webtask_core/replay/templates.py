"""This run's values in and out of a replay script: recorded values become placeholders, and a later
run writes its own values where they stood.

Placeholders:

- ``{{param:NAME}}``: a parameter's value as it is (standing alone, a list stays a list and a
  boolean a boolean); ``{{param:NAME|FORMAT}}`` written the way the recording showed it: ``upper``,
  ``lower``, ``title``, ``slug`` (``blue-suede-shoes``), ``num`` (a number without trailing zeros:
  ``45`` for ``45.00``) or ``num:D`` (``D`` decimals: ``24.50`` for ``24.5``), each number format
  with ``:comma`` for a decimal comma and ``:group`` for thousands separators (``1,200.00``). A
  number is never rounded: a value the format cannot show exactly (``19.999`` as ``num:2``) is a
  :class:`MissingValue`, and replay hands that step to the model.
- ``{{page:url}}`` / ``{{page:path_url}}`` / ``{{page:origin}}``: the page's URL, without its query,
  its scheme and host.
- ``{{count:NAME}} noun``: how many items a list parameter has, with the noun's plural following.
- ``{{file}}``: in text a page shows, the name of one of this run's uploaded files.
- ``{{secret:NAME}}`` stays as the model wrote it: scripts never hold a secret.

Binding a recorded value to a parameter is exact or it declines (:class:`Binding`): a value equal
to two parameters is bound by the label of the field it went into (``Price`` -> ``price``), or not
at all; a weak value (a boolean, a one-digit number) equal to one parameter needs that label too,
since a constant the model typed or ticked may equal it by chance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from webtask_core.replay.folding import names_agree
from webtask_core.replay.numbers import NUMBER, NumberStyle, as_number, bare_number, readings, weak_number

__all__ = [
    "MissingValue",
    "Binding",
    "ELEMENT",
    "template_value",
    "template_text",
    "render",
    "shown_matches",
    "count_placeholders",
    "page_values",
    "fold",
]

ELEMENT = "{{element}}"
_PLACEHOLDER = re.compile(r"\{\{(param|page|count|file|secret)(?::([^}|]+))?(?:\|([^}]+))?\}\}( [A-Za-z]+)?")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_MIN_TEXT_CHARS = 3  # a shorter value is only ever matched whole, never inside other text
_SLUG = re.compile(r"[^a-z0-9]+")
FILE_MARK = "\x00"  # where a {{file}} stood, while a template is compared


class MissingValue(LookupError):
    """The script needs a value this run does not have, or cannot write it as the recording did."""


def fold(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def page_values(page_url: str) -> dict[str, str]:
    parts = urlsplit(page_url)
    if parts.scheme not in ("http", "https"):
        return {}
    origin = f"{parts.scheme}://{parts.netloc}"
    return {"url": page_url, "path_url": origin + parts.path, "origin": origin}


# ---- binding recorded values to parameters ----


@dataclass
class Binding:
    """Binds the values found in recorded text to this run's parameters.

    ``label``: the words of the field the text went into (or of the line it is shown on): with two
    parameters of the same value, the one named like the label is taken. ``strict``: a weak value
    equal to one parameter without the label agreeing is refused (for typed values: a guess would
    type the wrong thing) rather than kept as a literal (for shown values: a literal that differs
    next time only hands over). ``files``: names of this run's uploaded files.
    """

    params: Mapping[str, Any]
    label: set[str]
    strict: bool = True
    files: Sequence[str] = ()
    counts: bool = False  # a number equal to a list parameter's length is {{count:NAME}} ("2 photos")
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
    for key, page_value in page_values(page_url).items():
        if text == page_value:
            return "{{page:" + key + "}}"
    origin = page_values(page_url).get("origin")
    if origin and text.startswith(origin + "/"):
        return "{{page:origin}}" + text[len(origin):]
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
        binding.problem = _derived_problem(_PLACEHOLDER.sub(" ", result), binding)
    return result


def _derived_problem(literal: str, binding: Binding) -> str | None:
    """A typed literal sharing words with a short parameter (part of a title, say) was derived from
    it in a way no format repeats: replay would type the recording's words."""
    words = {word for word in _WORD.findall(fold(literal)) if len(word) >= 4}
    if not words:
        return None
    for name, param in binding.params.items():
        if isinstance(param, str) and len(param) <= 80 and not _only_secrets(param) \
                and words & set(_WORD.findall(fold(param))):
            return f"{literal.strip()!r} was written from {name} in a way replay cannot repeat"
    return None


def _whole(text: str, binding: Binding) -> str | None:
    """The placeholder for a text that is one parameter's value, whole (any length)."""
    folded = fold(text)
    names = [name for name, param in binding.params.items()
             if not isinstance(param, (list, dict, bool)) and param is not None and fold(str(param)) == folded and folded]
    if names:
        number = as_number(text)
        weak = weak_number(number) if number is not None else len(folded) < _MIN_TEXT_CHARS
        chosen = binding.choose(text, names, weak=weak)
        if chosen is None:
            return text if binding.problem is None else None
        return "{{param:" + chosen + _case(text, str(binding.params[chosen]), binding) + "}}"
    return None


def _case(written: str, value: str, binding: Binding) -> str:
    """The format that writes ``value`` as ``written`` was: as it is, upper, lower or title case.
    Another case is a value the model rewrote its own way: for typed text a problem."""
    if written == value or fold(written) != fold(value):
        return ""
    for name, transform in (("upper", str.upper), ("lower", str.lower), ("title", str.title)):
        if written == transform(value):
            return "|" + name
    if binding.strict:
        binding.problem = f"{written!r} is {value!r} written in a case of the model's own"
    return ""


def _text_matches(text: str, binding: Binding) -> list[tuple[int, int, str]]:
    """Where string parameters (and uploaded file names) occur in ``text``: longest values first."""
    found: list[tuple[int, int, str]] = []
    folded = text.casefold()
    candidates: list[tuple[str, str, str]] = []  # (needle, placeholder, original)
    for name, param in binding.params.items():
        if isinstance(param, (list, dict, bool)) or param is None or as_number(param) is not None:
            continue
        value = _SPACE.sub(" ", str(param)).strip()
        if len(value) >= _MIN_TEXT_CHARS:
            candidates.append((value.casefold(), name, value))
            slug = _SLUG.sub("-", value.casefold()).strip("-")
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
            if any(name == "" for name, _ in entries):
                placeholder = "{{file}}"
            else:
                names = [name for name, _ in entries]
                base = {name.split("|")[0]: name for name in names}
                chosen = binding.choose(text[start:end], list(base), weak=False)
                if chosen is None:
                    start = _find_word(folded, needle, end)
                    continue
                full = base[chosen]
                written = text[start:end]
                suffix = "|slug" if full.endswith("|slug") else _case(written, entries[0][1], binding)
                placeholder = "{{param:" + chosen + suffix + "}}"
            found.append((start, end, placeholder))
            start = _find_word(folded, needle, end)
    return found


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
        if placeholder is None and token.isdigit() and len(lengths.get(int(token), [])) == 1:
            placeholder = "{{count:" + lengths[int(token)][0] + "}}"
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
        return "{{count:" + names[0] + "}}" if len(names) == 1 else match.group(0)

    return re.sub(r"(?<![\w.,])\d+(?![\w.,]\d)", count, text)


# ---- writing this run's values ----


def render(value: Any, params: Mapping[str, Any], *, page_url: str = "", element_id: str | None = None,
           files: Sequence[str] = ()) -> Any:
    """``value`` with its placeholders replaced by this run's values; :class:`MissingValue` when a
    parameter is not given or cannot be written the recorded way. A placeholder standing alone
    takes the parameter's value as it is (a list stays a list)."""
    if isinstance(value, dict):
        return {key: render(item, params, page_url=page_url, element_id=element_id, files=files)
                for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, params, page_url=page_url, element_id=element_id, files=files) for item in value]
    if not isinstance(value, str):
        return value
    if value == ELEMENT:
        return element_id
    whole = _PLACEHOLDER.fullmatch(value)
    if whole and whole.group(1) == "param" and not whole.group(3) and not whole.group(4):
        found = _param(whole.group(2), params)
        # A list stays a list and a boolean a boolean (upload's resources, check's state); a number
        # goes where text was recorded (61.5 from a JSON manifest is typed as "61.5").
        return str(found) if isinstance(found, (int, float, Decimal)) and not isinstance(found, bool) else found
    pages = page_values(page_url)

    def one(match: re.Match[str]) -> str:
        kind, name, spec, noun = match.group(1), match.group(2), match.group(3), match.group(4) or ""
        if kind == "secret":
            return match.group(0)
        if kind == "page":
            if name not in pages:
                raise MissingValue(f"the page at {page_url!r} has no {name}")
            return pages[name] + noun
        if kind == "file":
            raise MissingValue("a file name is only ever compared, never written")
        if kind == "count":
            items = _param(name, params)
            number = len(items) if isinstance(items, list) else 1
            if number == 1 and noun.endswith("s") and len(noun) > 3:
                noun = noun[:-1]
            elif number != 1 and noun and not noun.endswith("s"):
                noun += "s"
            return f"{number}{noun}"
        return _formatted(_param(name, params), spec) + noun

    return _PLACEHOLDER.sub(one, value)


def _formatted(value: Any, spec: str | None) -> str:
    if not spec:
        return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (list, dict)) \
            else str(value).lower() if isinstance(value, bool) else str(value)
    if spec.startswith("num"):
        number = as_number(value)
        if number is None:
            raise MissingValue(f"{value!r} is not a number, and the recording wrote a number there")
        try:
            return NumberStyle.parse(spec).write(number)
        except ValueError as error:
            raise MissingValue(str(error)) from None
    text = str(value)
    if spec == "upper":
        return text.upper()
    if spec == "lower":
        return text.lower()
    if spec == "title":
        return text.title()
    if spec == "slug":
        return _SLUG.sub("-", text.casefold()).strip("-")
    raise MissingValue(f"the script writes a value as {spec!r}, which this version does not know")


def _param(name: str | None, params: Mapping[str, Any]) -> Any:
    if name is None or name not in params:
        raise MissingValue(f"the script needs the parameter {name!r}, which this run does not have")
    return params[name]


# ---- checking what a page shows ----


def shown_matches(template: str, shown: str, params: Mapping[str, Any], *, files: Sequence[str] = (),
                  page_url: str = "") -> bool:
    """Whether ``shown`` (a text line or a field's value, as the tree shows it: whitespace folded,
    cut with "…" past its limit) is ``template`` with this run's values, case aside. A number the
    page reformatted (``45`` typed shows as ``45.00``, or ``$45.00``) compares by its value."""
    try:
        expected = fold(str(render(template.replace("{{file}}", FILE_MARK), params, page_url=page_url)))
    except MissingValue:
        return False
    folded = fold(shown)
    names = [fold(name) for name in files]
    pieces = expected.split(FILE_MARK)
    if len(pieces) > 1:
        pattern = ("(?:" + "|".join(re.escape(name) for name in names) + ")") if names else "(?!)"
        if re.fullmatch(pattern.join(re.escape(piece) for piece in pieces), folded):
            return True
        candidates = [pieces[0] + name + "".join(pieces[1:]) for name in names] if len(pieces) == 2 else []
    else:
        if folded == expected:
            return True
        candidates = [expected]
    if folded.endswith("…"):  # cut by the tree: the start must agree
        return any(candidate.startswith(folded[:-1]) for candidate in candidates)
    number, wanted = bare_number(folded), bare_number(expected)
    return number is not None and wanted is not None and number == wanted


