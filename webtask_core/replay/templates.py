"""Placeholders of a replay script, and this run's values written where they stand.

- ``{{param:NAME}}``: a parameter's value as it is (standing alone, a list stays a list and a
  boolean a boolean); ``{{param:NAME|FORMAT}}`` written the way the recording showed it: ``upper``,
  ``lower``, ``title``, ``slug`` (``blue-suede-shoes``), ``num`` (a number without trailing zeros:
  ``45`` for ``45.00``) or ``num:D`` (``D`` decimals: ``24.50`` for ``24.5``), each number format
  with ``:comma`` for a decimal comma and ``:group`` for thousands separators (``1,200.00``);
  ``join:SEP`` for a list written in one field (``red, blue``). A number is never rounded: a value
  the format cannot show exactly (``19.999`` as ``num:2``) is a :class:`MissingValue`, and replay
  hands that step to the model.
- ``{{param:NAME[I]}}``: item ``I`` of a list parameter (a tag typed on its own); in a step repeated
  over the list, ``{{param:NAME[#]}}`` is the item of this repetition.
- ``{{page:url}}`` / ``{{page:path_url}}`` / ``{{page:origin}}``: the page's URL, without its query,
  its scheme and host; ``{{page:segment:N}}``: the URL path's segment ``N`` (an id).
- ``{{link:N}}``: the URL of a link on this run's page (the action's ``links[N]``, found again).
- ``{{count:NAME}} noun``: how many items a list parameter has, with the noun's plural following.
- ``{{file}}``: in text a page shows, the name of one of this run's uploaded files.
- ``{{secret:NAME}}`` stays as the model wrote it: scripts never hold a secret.

How recorded values become placeholders is :mod:`~webtask_core.replay.binding`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from webtask_core.replay.numbers import NumberStyle, as_number, bare_number

__all__ = ["MissingValue", "ELEMENT", "PLACEHOLDER", "render", "shown_matches", "page_values", "fold", "param_name",
           "typed_params", "SLUG", "FILE_MARK"]

ELEMENT = "{{element}}"
PLACEHOLDER = re.compile(r"\{\{(param|page|link|count|file|secret)(?::([^}|]+))?(?:\|([^}]+))?\}\}( [A-Za-z]+)?")
_SPACE = re.compile(r"\s+")
SLUG = re.compile(r"[^a-z0-9]+")
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
    values = {"url": page_url, "path_url": origin + parts.path, "origin": origin}
    for number, segment in enumerate(parts.path.split("/")):
        if segment:
            values[f"segment:{number}"] = segment
    return values


_INDEXED = re.compile(r"^(?P<name>[^\[\]]+)\[(?P<index>\d+)\]$")


def typed_params(tool: str, arguments: Any) -> set[str]:
    """The parameters a ``fill`` or ``type`` writes into a field (their values are this item's
    content wherever the page lists them afterwards)."""
    if tool not in ("fill", "type") or not isinstance(arguments, dict):
        return set()
    return {param_name(match.group(2)) for value in arguments.values() if isinstance(value, str)
            for match in PLACEHOLDER.finditer(value) if match.group(1) == "param" and match.group(2)}


def param_name(name: str) -> str:
    """The parameter a placeholder's name refers to (``tags`` for ``tags[2]`` and ``tags[#]``)."""
    return name.split("[", 1)[0]


# ---- writing this run's values ----


def render(value: Any, params: Mapping[str, Any], *, page_url: str = "", element_id: str | None = None,
           files: Sequence[str] = (), links: Sequence[str] = ()) -> Any:
    """``value`` with its placeholders replaced by this run's values; :class:`MissingValue` when a
    parameter is not given or cannot be written the recorded way. A placeholder standing alone
    takes the parameter's value as it is (a list stays a list). ``links``: the URLs of the links
    the action names (``{{link:N}}``), found on this run's page."""
    if isinstance(value, dict):
        return {key: render(item, params, page_url=page_url, element_id=element_id, files=files, links=links)
                for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, params, page_url=page_url, element_id=element_id, files=files, links=links)
                for item in value]
    if not isinstance(value, str):
        return value
    if value == ELEMENT:
        return element_id
    whole = PLACEHOLDER.fullmatch(value)
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
        if kind == "link":
            if name is None or not name.isdigit() or int(name) >= len(links):
                raise MissingValue(f"the link {name} the recording named is not on this page")
            return links[int(name)] + noun
        if kind == "count":
            items = _param(name, params)
            number = len(items) if isinstance(items, list) else 1
            if number == 1 and noun.endswith("s") and len(noun) > 3:
                noun = noun[:-1]
            elif number != 1 and noun and not noun.endswith("s"):
                noun += "s"
            return f"{number}{noun}"
        if kind == "param" and spec and spec.startswith("join:"):
            items = _param(name, params)
            if not isinstance(items, list):
                raise MissingValue(f"{name} is not a list, and the recording wrote a list there")
            return spec[len("join:"):].join(str(item) for item in items) + noun
        return _formatted(_param(name, params), spec) + noun

    return PLACEHOLDER.sub(one, value)


def _formatted(value: Any, spec: str | None) -> str:
    if not spec:
        return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (list, dict)) \
            else str(value).lower() if isinstance(value, bool) else str(value)
    if spec.startswith("or:"):  # a shown word that may be the site's own: this run's value where it is written
        return _formatted(value, None)
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
        return SLUG.sub("-", text.casefold()).strip("-")
    raise MissingValue(f"the script writes a value as {spec!r}, which this version does not know")


def _param(name: str | None, params: Mapping[str, Any]) -> Any:
    indexed = _INDEXED.match(name or "")
    if indexed is not None:  # one item of a list parameter
        items = _param(indexed["name"], params)
        index = int(indexed["index"])
        if not isinstance(items, list) or index >= len(items):
            raise MissingValue(f"the script needs item {index + 1} of {indexed['name']}, which this run does not have")
        return items[index]
    if name is None or name not in params:
        raise MissingValue(f"the script needs the parameter {name!r}, which this run does not have")
    return params[name]


# ---- checking what a page shows ----


_EITHER = re.compile(r"\{\{param:([^}|]+)\|or:([^}]*)\}\}")


def shown_matches(template: str, shown: str, params: Mapping[str, Any], *, files: Sequence[str] = (),
                  page_url: str = "") -> bool:
    """Whether ``shown`` (a text line or a field's value, as the tree shows it: whitespace folded,
    cut with "…" past its limit) is ``template`` with this run's values, case aside. A number the
    page reformatted (``45`` typed shows as ``45.00``, or ``$45.00``) compares by its value. A word
    that may be the site's own (``{{param:condition|or:New}}``) matches as this run's value or as
    that word."""
    return any(_shown_as(variant, shown, params, files, page_url) for variant in _either_ways(template))


def _either_ways(template: str) -> list[str]:
    """``template`` with each ``|or:`` placeholder as this run's value and as the recorded word."""
    variants = [template]
    for match in list(_EITHER.finditer(template))[:4]:
        strict, word = "{{param:" + match.group(1) + "}}", match.group(2)
        variants = [variant.replace(match.group(0), choice, 1) for variant in variants for choice in (strict, word)]
    return [_EITHER.sub(lambda match: "{{param:" + match.group(1) + "}}", variant) for variant in variants]


def _shown_as(template: str, shown: str, params: Mapping[str, Any], files: Sequence[str], page_url: str) -> bool:
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


