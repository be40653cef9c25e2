"""The in-page scripts shipped as .js files next to this module, read once and cached.

A script may pull in a part of itself kept in another file with a line ``// @include NAME.js``
(observe.js is one function, split by responsibility; its parts share the function's scope)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = ["MARK_ATTRIBUTE", "FRAME_ATTRIBUTE", "MARK_ENGINE", "load_script", "marked", "KeptScript", "kept_script"]

# The attribute an observation stamps on every interactive element; actions find elements by it.
MARK_ATTRIBUTE = "data-wt-id"
# The Playwright selector engine that finds a marked element among those the last observation stamped
# (mark_engine.js): it reaches into closed shadow roots, where no CSS selector goes.
MARK_ENGINE = "webtask-mark"
# The attribute stamped on an <iframe> so its parent's pass knows which Playwright Frame goes there.
FRAME_ATTRIBUTE = "data-wt-frame"

_SCRIPTS = ("observe.js", "probe.js", "marks.js", "listeners.js", "drop.js", "listbox.js", "editor.js", "mark_engine.js")
_PARTS = ("observe_names.js", "observe_widgets.js")  # only ever included into a script above
_INCLUDE = re.compile(r"^[ \t]*// @include ([\w.]+)[ \t]*$", re.MULTILINE)


@cache
def load_script(name: str) -> str:
    """The text of one bundled script (``observe.js`` ...)."""
    if name not in _SCRIPTS:
        raise ValueError(f"unknown browser script {name!r}; expected one of {_SCRIPTS}")
    return _INCLUDE.sub(lambda match: _read_part(match.group(1)), _read(name))


def _read(name: str) -> str:
    return resources.files("webtask_core.browser").joinpath(name).read_text(encoding="utf-8")


def _read_part(name: str) -> str:
    if name not in _PARTS:
        raise ValueError(f"unknown script part {name!r}; expected one of {_PARTS}")
    return _read(name)


def marked(element_id: str) -> str:
    """The Playwright selector of the element the last observation gave this id."""
    return f"{MARK_ENGINE}={element_id}"


@dataclass(frozen=True)
class KeptScript:
    """A one-argument script kept in each document under a key naming its version, so a call sends a
    few bytes instead of its whole text (probe.js: 11 KB a probe). ``init``: the line of a context's
    init script that puts it in every new document; ``call``: ``[key, argument]`` -> its answer, or
    null where the document has none (made before the init script, or the page replaced it);
    ``install``: the same, keeping it first (the fallback after a null)."""

    key: str
    init: str
    call: str
    install: str


@cache
def kept_script(name: str) -> KeptScript:
    source = load_script(name)
    key = f"webtask.{name.removesuffix('.js')}." + hashlib.sha1(source.encode()).hexdigest()[:12]
    return KeptScript(
        key=key,
        init=f"window[Symbol.for({json.dumps(key)})] = {source};",
        call="([key, arg]) => { const kept = window[Symbol.for(key)]; return kept ? kept(arg) : null; }",
        install=f"([key, arg]) => (window[Symbol.for(key)] = {source})(arg)",
    )
