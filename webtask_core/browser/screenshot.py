"""Viewport screenshots with numbered boxes over the interactive ids, passwords always masked.

One marks.js pass per frame draws the boxes and the masks and hides the caret; one CDP
``Page.captureScreenshot`` takes the picture, scaled by Chromium when asked (far cheaper than
re-encoding in Python); a second pass removes the overlay. Playwright's own screenshot would add
several round trips per frame (preparing every frame, one per mask, cleaning up) for the same result.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal
from weakref import WeakKeyDictionary

from playwright.async_api import BrowserContext, CDPSession, Frame, Page
from playwright.async_api import Error as PlaywrightError

from webtask_core.browser.bounded import within
from webtask_core.browser.failures import is_closed_error
from webtask_core.browser.scripts import MARK_ATTRIBUTE, load_script
from webtask_core.errors import ActionError, ConfigError

__all__ = ["CdpScreenshots", "capture_screenshot", "wait_repainted", "ImageFormat", "MIN_SCALE"]

ImageFormat = Literal["jpeg", "png"]
MIN_SCALE = 0.25  # below this nothing in the picture is legible
_CLEANUP_TIMEOUT_S = 2.0

logger = logging.getLogger(__name__)

# Two animation frames (bounded): by then the compositor has drawn the page without the overlay and
# its hit-testing, which routes mouse events into cross-process iframes, follows the page again.
_REPAINTED = """() => new Promise((done) => {
  requestAnimationFrame(() => requestAnimationFrame(() => done()));
  setTimeout(done, 200);
})"""


async def _overlay(
    frames: Iterable[Frame], *, show: bool, marks: bool, masks: Mapping[Frame, Sequence[str]], label_scale: float
) -> dict[Frame, Any]:
    """Run marks.js in every frame; each frame's answer (None where the frame went away meanwhile)."""
    frames = [frame for frame in frames if not frame.is_detached()]
    script = load_script("marks.js")
    outcomes = await asyncio.gather(
        *(
            frame.evaluate(script, {
                "mark": MARK_ATTRIBUTE, "show": show, "marks": marks,
                "masks": list(masks.get(frame, ())), "labelScale": label_scale,
            })
            for frame in frames
        ),
        return_exceptions=True,
    )
    answers: dict[Frame, Any] = {}
    for frame, outcome in zip(frames, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            # A frame navigating away just loses its boxes; a dead browser is reported by the caller.
            if not isinstance(outcome, PlaywrightError) or is_closed_error(outcome):
                raise outcome
            answers[frame] = None
        else:
            answers[frame] = outcome
    return answers


def _check_masked(answers: dict[Frame, Any], masks: Mapping[Frame, Sequence[str]]) -> None:
    """ActionError if an element asked to be masked is gone: better no picture than a secret."""
    for frame, ids in masks.items():
        if not ids:
            continue
        answer = answers.get(frame)
        missing = list(ids) if answer is None else answer["missing"]
        if missing:
            raise ActionError(f"cannot mask {', '.join(missing)}: the element is gone since the page was observed")


async def _layout_viewport(cdp: CDPSession) -> dict[str, float]:
    """The viewport from Chromium itself, for when the main frame could not answer (it is navigating)."""
    metrics = (await cdp.send("Page.getLayoutMetrics"))["cssVisualViewport"]
    return {"x": metrics["pageX"], "y": metrics["pageY"], "width": metrics["clientWidth"], "height": metrics["clientHeight"]}


class CdpScreenshots:
    """Screenshots of a context's pages, each over a CDP session of its own, opened on its first picture
    and kept while the page lives."""

    def __init__(self, context: BrowserContext) -> None:
        self._context = context
        self._sessions: WeakKeyDictionary[Page, CDPSession] = WeakKeyDictionary()

    async def capture(self, page: Page, **options: Any) -> bytes:
        """:func:`capture_screenshot` of ``page`` with ``options``."""
        cdp = self._sessions.get(page)
        if cdp is None:
            cdp = self._sessions[page] = await self._context.new_cdp_session(page)
        return await capture_screenshot(page, cdp, **options)


async def capture_screenshot(
    page: Page,
    cdp: CDPSession,
    *,
    marks: bool,
    image_format: ImageFormat,
    quality: int,
    masks: Mapping[Frame, Sequence[str]],
    scale: float = 1.0,
) -> bytes:
    """The viewport as JPEG/PNG bytes, `scale` times its CSS size; overlays drawn in every frame
    (through `cdp`, a CDP session of `page`) and removed afterwards."""
    if image_format not in ("jpeg", "png"):
        raise ConfigError("format", f"must be 'jpeg' or 'png', got {image_format!r}")
    if not 1 <= quality <= 100:
        raise ConfigError("quality", f"must be between 1 and 100, got {quality}")
    if not MIN_SCALE <= scale <= 1:
        raise ConfigError("scale", f"must be between {MIN_SCALE} and 1, got {scale}")
    frames = [frame for frame in page.frames if not frame.is_detached()]
    # Labels at least ~10 px tall in the picture, however small it is.
    label_scale = max(1.0, 0.9 / scale)
    try:
        answers = await _overlay(frames, show=True, marks=marks, masks=masks, label_scale=label_scale)
        _check_masked(answers, masks)
        params: dict[str, Any] = {"format": image_format}
        if image_format == "jpeg":
            params["quality"] = quality
        if scale != 1:
            viewport = answers.get(page.main_frame) or await _layout_viewport(cdp)
            params["clip"] = {
                "x": viewport["x"], "y": viewport["y"], "width": viewport["width"], "height": viewport["height"],
                "scale": scale,
            }
        shot = await cdp.send("Page.captureScreenshot", params)
        return base64.b64decode(shot["data"])
    finally:
        if not page.is_closed():
            try:
                # Bounded even when the capture was cancelled for a stuck page; the next pass removes
                # whatever this one could not.
                await within(_overlay(frames, show=False, marks=False, masks={}, label_scale=1.0), _CLEANUP_TIMEOUT_S)
            except TimeoutError:
                logger.warning("the screenshot overlay of %s could not be removed in time", page.url)


async def wait_repainted(page: Page) -> None:
    """Until `page` has drawn two frames since the overlay went away. A click sent sooner can land in
    a cross-process iframe the mouse was last in (seen: the main page's input never got the press)."""
    try:
        await page.evaluate(_REPAINTED)
    except PlaywrightError:
        return  # closed or navigating: the next action finds out for itself
