"""Limits on what the model may ask of the browser, defined once: the browser session enforces them,
and the tools' schemas and descriptions state them (this module imports nothing, so the tools can
use it without loading Playwright)."""

from __future__ import annotations

__all__ = ["WAIT_FOR_MAX_S", "WAIT_FOR_DEFAULT_S", "SCROLL_MAX", "SETTLED_QUIET_S", "PRESS_TIMES_MAX"]

WAIT_FOR_MAX_S = 15.0  # the longest one wait_for call may wait
WAIT_FOR_DEFAULT_S = 5.0
# The most one scroll call may move, in heights of what scrolls: viewport heights for the page, the
# box's own visible height for a scroll box.
SCROLL_MAX = 10.0
# wait_for with neither text nor element: the page counts as settled once it is loaded, no request is
# running and its content has not changed for this long.
SETTLED_QUIET_S = 0.5
# The most times one press_key call may press its key (moving through a list, nudging a slider).
PRESS_TIMES_MAX = 50
