"""A replayed call the page covered, tried once more after closing what covers it, as a model would.

Replay runs a step's calls back to back; a date picker that opened on the last field's focus, or a
menu left open, may cover the next control. A model seeing "covered by …" scrolls the control out
from under a sticky footer, or closes what covers it (Escape, a click where nothing is), and clicks
again; so does replay, once each — unless what covers it says something a model would stop at (a
warning, a question: "Are you sure…"), which stays the model's.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from webtask_core.browser.failures import translate_errors
from webtask_core.browser.motion import click_neutral_ground, scroll_to_middle, settle_motion
from webtask_core.errors import ActionError

if TYPE_CHECKING:
    from playwright.async_api import Page

    from webtask_core.llm.types import ToolCall
    from webtask_core.tools.base import ToolContext
    from webtask_core.tools.registry import CallOutcome, ToolRegistry

__all__ = ["retry_uncovered"]

_CLOSE_S = 10.0  # for one way of closing a cover, its settle included

_COVERED = re.compile(r" is covered by (?P<cover>.*?); close or move what covers it first")
# What a cover says that a model would read before closing it.
_WEIGHS = re.compile(r"\b(sure|confirm\w*|warn\w*|error\w*|delet\w*|remov\w*|discard\w*|leave|unsaved|expire\w*|"
                     r"session|cookie\w*|consent|accept|agree|terms|required|failed|denied)\b|[!?]")


async def retry_uncovered(registry: ToolRegistry, calls: list[ToolCall], outcomes: list[CallOutcome], ctx: ToolContext,
                          *, page_url: str, page_document: float = 0.0, on_call: Callable[[ToolCall], None] | None = None,
                          before_call: Callable[[ToolCall, bool], Awaitable[str | None]] | None = None,
                          after_call: Callable[[ToolCall, str], Awaitable[str]] | None = None) -> list[CallOutcome]:
    """``outcomes`` with the first call that failed because something covered its element run again
    (and the calls after it) once the cover was closed; as they were when that is not the case."""
    failed = next((index for index, outcome in enumerate(outcomes) if not outcome.ok), None)
    if failed is None:
        return outcomes
    match = _COVERED.search(outcomes[failed].message)
    page = ctx.tab.page
    if match is None or page is None or _WEIGHS.search(match["cover"].casefold()):
        return outcomes
    rest = calls[failed:]
    element_id = rest[0].input.get("element_id") if isinstance(rest[0].input, dict) else None
    for close in ("a scroll", "Escape", "a click beside the controls"):
        try:
            # Bounded as an action is: a page whose script spins answers none of it.
            closed = await ctx.tab.answer(f"closing what covers the control ({close})", _close(page, close, element_id),
                                          limit_s=_CLOSE_S)
        except ActionError:
            break
        if closed is None:
            continue
        if not closed:
            break
        again = await registry.run_calls(rest, ctx, page_url=page_url, page_document=page_document,
                                         on_call=on_call, before_call=before_call,
                                         after_call=after_call)
        if (again and again[0].ok) or not again or not _COVERED.search(again[0].message):
            note = f" (it was covered by {match['cover']}: after {close}, done again)"
            if again and again[0].ok:
                again[0] = _with_note(again[0], note)
            return outcomes[:failed] + again
    return outcomes


async def _close(page: Page, close: str, element_id: object) -> bool | None:
    """Close what covers the control one way, and let the page settle: True when done, None when
    this way does not apply (try the next), False when none will."""
    if close == "a scroll":  # a sticky footer or header over it: bring it to the middle
        if not isinstance(element_id, str) or not await scroll_to_middle(page, element_id):
            return None
    elif close == "Escape":
        async with translate_errors("press Escape", 5.0):
            await page.keyboard.press("Escape")
    elif not await click_neutral_ground(page):
        return False
    await settle_motion(page)
    return True


def _with_note(outcome: CallOutcome, note: str) -> CallOutcome:
    return replace(outcome, message=outcome.message + note)
