"""Viewport screenshots with numbered boxes over the interactive ids, passwords always masked."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Locator, Page

from webtask_core.browser.failures import is_closed_error
from webtask_core.browser.scripts import MARK_ATTRIBUTE, load_script
from webtask_core.errors import ConfigError

__all__ = ["capture_screenshot"]

ImageFormat = Literal["jpeg", "png"]


async def _draw_marks(frames: Iterable[Frame], show: bool) -> None:
    script = load_script("marks.js")
    outcomes = await asyncio.gather(
        *(frame.evaluate(script, {"mark": MARK_ATTRIBUTE, "show": show}) for frame in frames if not frame.is_detached()),
        return_exceptions=True,
    )
    for outcome in outcomes:
        # A frame navigating away just loses its boxes; a dead browser is reported by the caller.
        if isinstance(outcome, BaseException) and not isinstance(outcome, PlaywrightError):
            raise outcome
        if isinstance(outcome, PlaywrightError) and is_closed_error(outcome):
            raise outcome


async def capture_screenshot(
    page: Page,
    *,
    marks: bool,
    image_format: ImageFormat,
    quality: int,
    masks: list[Locator],
    timeout_s: float,
) -> bytes:
    """The viewport as JPEG/PNG bytes; overlays drawn in every frame and removed afterwards."""
    if image_format not in ("jpeg", "png"):
        raise ConfigError("format", f"must be 'jpeg' or 'png', got {image_format!r}")
    if not 1 <= quality <= 100:
        raise ConfigError("quality", f"must be between 1 and 100, got {quality}")
    frames = [frame for frame in page.frames if not frame.is_detached()]
    # Every frame: a password field inside an iframe is just as secret.
    password_masks = [frame.locator("input[type=password]") for frame in frames]
    if marks:
        await _draw_marks(frames, show=True)
    try:
        return await page.screenshot(
            type=image_format,
            quality=quality if image_format == "jpeg" else None,
            mask=password_masks + masks,
            caret="hide",
            timeout=timeout_s * 1000,
        )
    finally:
        if marks and not page.is_closed():
            await _draw_marks(frames, show=False)
