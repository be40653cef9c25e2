"""The in-page scripts shipped as .js files next to this module, read once and cached."""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["MARK_ATTRIBUTE", "FRAME_ATTRIBUTE", "load_script"]

# The attribute an observation stamps on every interactive element; actions find elements by it.
MARK_ATTRIBUTE = "data-wt-id"
# The attribute stamped on an <iframe> so its parent's pass knows which Playwright Frame goes there.
FRAME_ATTRIBUTE = "data-wt-frame"

_SCRIPTS = ("observe.js", "probe.js", "marks.js", "listeners.js")


@cache
def load_script(name: str) -> str:
    """The text of one bundled script (``observe.js`` ...)."""
    if name not in _SCRIPTS:
        raise ValueError(f"unknown browser script {name!r}; expected one of {_SCRIPTS}")
    return resources.files("webtask_core.browser").joinpath(name).read_text(encoding="utf-8")
