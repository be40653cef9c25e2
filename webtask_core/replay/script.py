"""A replay script: what a completed run did, step by step, with this run's values taken out.

Each step keeps the page it acted on (a :class:`PageSignature`) and its tool calls, each call's
element as an :class:`ElementFingerprint` (never the per-observation id) and its input with the
task's parameters as placeholders:

- ``{{param:NAME}}``: a value of the task's parameters (a string equal to one, after folding
  whitespace and case, or equal as a number: ``45`` and ``45.00``; a list equal to one, like the
  photos' resource names);
- ``{{page:url}}`` / ``{{page:path_url}}`` / ``{{page:origin}}``: the page's URL, the URL without its
  query, its scheme and host (a run on another host or port reads the same);
- ``{{secret:NAME}}`` placeholders stay as the model wrote them: scripts never hold a secret;
- ``{{element}}``: where the element's id goes once the fingerprint found it;
- ``{{count:NAME}}``: in the text a ``wait_for`` waits for only, a number equal to how many items a
  list parameter has ("2 photos ready" for two photos): a wait is harmless when the guess is wrong
  (it times out and the model takes over), a typed value is not, so nothing else is counted.

A value the model produced that is none of these is kept as a literal, except in ``set_output``:
a literal output (an order number read off the page) would report the recording's data on every
run, so such a step is marked ``needs_model`` and replay hands it to the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from webtask_core.replay.signature import ElementFingerprint, PageSignature

__all__ = [
    "ScriptAction",
    "ScriptStep",
    "ReplayScript",
    "SCRIPT_SCHEMA_VERSION",
    "ELEMENT",
    "parameterise",
    "fill_in",
    "MissingValue",
    "count_placeholders",
]

SCRIPT_SCHEMA_VERSION = 1
ELEMENT = "{{element}}"
_PARAM = re.compile(r"\{\{param:([A-Za-z0-9_.\-\[\]]+)\}\}")
_PAGE = re.compile(r"\{\{page:(url|path_url|origin)\}\}")
_COUNT = re.compile(r"\{\{count:([A-Za-z0-9_.\-]+)\}\}( [A-Za-z]+)?")
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")
_SPACE = re.compile(r"\s+")
_MIN_SUBSTITUTED_CHARS = 3  # in free text (feedback), shorter values would hit unrelated words


class MissingValue(LookupError):
    """The script names a parameter this run does not have."""


class ScriptAction(BaseModel):
    tool: str
    input: dict[str, Any] = Field(default_factory=dict)
    element: ElementFingerprint | None = None


class ScriptStep(BaseModel):
    page: PageSignature  # the page before the step: replay checks it before acting
    text: str = ""  # what the model said (shown in the conversation when the model takes over)
    actions: list[ScriptAction]
    needs_model: str | None = None  # why this step cannot be replayed (an output read off the page)


class ReplayScript(BaseModel):
    schema_version: int = SCRIPT_SCHEMA_VERSION
    key: str
    revision: int = 1  # 1 when first recorded; +1 each time a run repaired it
    params: list[str] = Field(default_factory=list)  # the parameter names the recording had
    steps: list[ScriptStep]
    recorded_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    source: str = ""  # what recorded it (a flow run id, "agent")

    @property
    def replayable_steps(self) -> int:
        return sum(1 for step in self.steps if step.needs_model is None)


# ---- recording: literal values -> placeholders ----


def _fold(value: Any) -> str:
    return _SPACE.sub(" ", str(value)).strip().casefold()


def _same(value: Any, param: Any) -> bool:
    if isinstance(value, list) or isinstance(param, list):
        return isinstance(value, list) and isinstance(param, list) and [_fold(v) for v in value] == [_fold(p) for p in param]
    if _fold(value) == _fold(param) and _fold(value):
        return True
    try:
        return Decimal(str(value).strip()) == Decimal(str(param).strip())
    except (InvalidOperation, ValueError):
        return False


def _page_values(page_url: str) -> dict[str, str]:
    parts = urlsplit(page_url)
    if parts.scheme not in ("http", "https"):
        return {}
    origin = f"{parts.scheme}://{parts.netloc}"
    return {"url": page_url, "path_url": origin + parts.path, "origin": origin}


def parameterise(value: Any, params: Mapping[str, Any], *, page_url: str = "", prefer: str | None = None,
                 free_text: bool = False) -> tuple[Any, bool]:
    """``value`` with this run's values as placeholders, and whether any literal was left.

    ``prefer``: the parameter to pick when several have this value (the field's own name).
    ``free_text``: replace values inside longer text too (for feedback), not only whole values.
    """
    if isinstance(value, dict):
        out, literal = {}, False
        for key, item in value.items():
            out[key], left = parameterise(item, params, page_url=page_url, prefer=prefer, free_text=free_text)
            literal |= left
        return out, literal
    if isinstance(value, list) and not any(_same(value, param) for param in params.values()):
        items = [parameterise(item, params, page_url=page_url, free_text=free_text) for item in value]
        return [item for item, _ in items], any(left for _, left in items)
    if not isinstance(value, (str, list)) or value == "":
        return value, False
    names = [name for name, param in params.items() if _same(value, param)]
    if names:
        return "{{param:" + (prefer if prefer in names else names[0]) + "}}", False
    if isinstance(value, list):
        return value, True
    for key, page_value in _page_values(page_url).items():
        if value == page_value:
            return "{{page:" + key + "}}", False
    origin = _page_values(page_url).get("origin")
    if origin and value.startswith(origin + "/"):
        return "{{page:origin}}" + value[len(origin):], False
    if not free_text:
        return value, not _is_placeholder_only(value)
    return _substitute_inside(value, params, page_url), False


def _is_placeholder_only(value: str) -> bool:
    return bool(re.fullmatch(r"(\{\{secret:[^}]+\}\})+", value))


def _substitute_inside(text: str, params: Mapping[str, Any], page_url: str) -> str:
    replacements = [(page_value, "{{page:" + key + "}}") for key, page_value in _page_values(page_url).items()]
    for name, param in params.items():
        if not isinstance(param, list) and len(str(param).strip()) >= _MIN_SUBSTITUTED_CHARS:
            replacements.append((str(param).strip(), "{{param:" + name + "}}"))
    for old, new in sorted(replacements, key=lambda pair: -len(pair[0])):
        text = text.replace(old, new)
    return text


def count_placeholders(text: str, params: Mapping[str, Any]) -> str:
    """``text`` with numbers equal to the length of one list parameter as ``{{count:NAME}}``."""
    lengths = {len(value): name for name, value in params.items() if isinstance(value, list) and value}
    return _NUMBER.sub(lambda match: "{{count:" + lengths[int(match.group(0))] + "}}"
                       if int(match.group(0)) in lengths else match.group(0), text)


# ---- replaying: placeholders -> this run's values ----


def fill_in(value: Any, params: Mapping[str, Any], *, page_url: str, element_id: str | None = None) -> Any:
    """``value`` with its placeholders replaced by this run's values; :class:`MissingValue` when a
    parameter is not given. A placeholder standing alone takes the parameter's value as it is (a list
    stays a list); inside text it is written as text."""
    if isinstance(value, dict):
        return {key: fill_in(item, params, page_url=page_url, element_id=element_id) for key, item in value.items()}
    if isinstance(value, list):
        return [fill_in(item, params, page_url=page_url, element_id=element_id) for item in value]
    if not isinstance(value, str):
        return value
    if value == ELEMENT:
        return element_id
    whole = _PARAM.fullmatch(value)
    if whole:
        return _param(whole.group(1), params)
    pages = _page_values(page_url)

    def page(match: re.Match[str]) -> str:
        if match.group(1) not in pages:
            raise MissingValue(f"the page at {page_url!r} has no {match.group(1)}")
        return pages[match.group(1)]

    def count(match: re.Match[str]) -> str:
        value = _param(match.group(1), params)
        number = len(value) if isinstance(value, list) else 1
        noun = match.group(2) or ""  # "2 photos" recorded, "1 photo" now (English; a miss only times out)
        if number == 1 and noun.endswith("s") and len(noun) > 3:
            noun = noun[:-1]
        elif number != 1 and noun and not noun.endswith("s"):
            noun += "s"
        return f"{number}{noun}"

    text = _COUNT.sub(count, _PAGE.sub(page, value))
    return _PARAM.sub(lambda match: _as_text(_param(match.group(1), params)), text)


def _param(name: str, params: Mapping[str, Any]) -> Any:
    if name not in params:
        raise MissingValue(f"the script needs the parameter {name!r}, which this run does not have")
    return params[name]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (list, dict)) else str(value)
