"""Map Playwright's exceptions onto webtask's two error families.

A dead browser or page is infrastructure (:class:`BrowserCrashedError`, the caller relaunches); a
timeout or a refused action is the model's problem (:class:`ActionError`, with a short reason).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from webtask_core.errors import ActionError, BrowserCrashedError

__all__ = ["is_closed_error", "first_line", "translate_errors"]

_API_PREFIX = re.compile(r"^[A-Z][A-Za-z]*\.[A-Za-z_]+: ")
_CLOSED_MARKERS = (
    "target page, context or browser has been closed",
    "browser has been closed",
    "target closed",
    "target crashed",
    "page crashed",
    "browser has disconnected",
    "connection closed",
    "playwright connection closed",
    "has been closed",
    "failed to find context with id",  # Chromium going away (Ctrl+C reached it too) dropped the context first
)


def is_closed_error(error: BaseException) -> bool:
    """True when the error means the browser, its context or the page is gone."""
    if type(error).__name__ == "TargetClosedError":
        return True
    if not isinstance(error, PlaywrightError):
        return False
    message = (error.message or "").lower()
    return any(marker in message for marker in _CLOSED_MARKERS)


def first_line(error: BaseException) -> str:
    """Playwright messages carry a call log after the first line; the model needs only the first."""
    message = getattr(error, "message", None) or str(error)
    line = message.strip().splitlines()[0] if message.strip() else type(error).__name__
    # "Page.goto: net::ERR_…" -> "net::ERR_…": the API method name means nothing to the model.
    return _API_PREFIX.sub("", line.removeprefix("Error: ")).strip()


@asynccontextmanager
async def translate_errors(what: str, timeout_s: float) -> AsyncIterator[None]:
    """Run a browser operation; re-raise Playwright failures as ActionError / BrowserCrashedError.

    `what` names the operation for the message, e.g. ``"click button-3"``.
    """
    try:
        yield
    except PlaywrightTimeoutError as error:
        if is_closed_error(error):
            raise BrowserCrashedError(f"{what}: the browser or page closed ({first_line(error)})") from error
        raise ActionError(f"{what}: timed out after {timeout_s:g} s ({first_line(error)})") from error
    except PlaywrightError as error:
        if is_closed_error(error):
            raise BrowserCrashedError(f"{what}: the browser or page closed ({first_line(error)})") from error
        raise ActionError(f"{what}: {first_line(error)}") from error
