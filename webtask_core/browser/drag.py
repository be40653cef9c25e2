"""Dragging an element with the mouse: onto another element, or by an offset.

A real press, moves in small steps and a release, so libraries that follow the mouse (SortableJS's
fallback, sliders) and native HTML5 drag and drop (Playwright lets Chromium's drag run through its
mouse) both see a person's drag. The result says where the dragged element ended up.
"""

from __future__ import annotations

import asyncio

from playwright.async_api import FloatRect

from webtask_core.browser.actions import Target
from webtask_core.errors import ActionError

__all__ = ["drag"]

_STEPS = 12  # mouse moves on the way: drag libraries look at the pointer between press and release
_START_PX = 6  # a first small move: most libraries start a drag only past a few pixels
_PAUSE_S = 0.05  # over the target before the release, for dragover/hover handlers to rearrange


async def _box(target: Target) -> FloatRect:
    """The element's box in the page's coordinates (a child frame's offset included)."""
    box = await target.locator.bounding_box()
    if box is None:
        raise ActionError(f"{target.element_id} is hidden (not visible on the page)")
    return box


def _point(target: Target, box: FloatRect) -> tuple[float, float]:
    """The probed visible point of the element, in page coordinates."""
    position = target.require_point()
    return box["x"] + position["x"], box["y"] + position["y"]


async def drag(source: Target, onto: Target | None, offset_x: float, offset_y: float) -> str:
    """Drag `source` onto the visible centre of `onto` (moved by the offsets), or by the offsets alone.
    Both must show on the screen together (see `tab.drag`, which scrolls them into view)."""
    source.require_enabled()
    page = source.frame.page
    start_box = await _box(source)
    x0, y0 = _point(source, start_box)
    if onto is not None:
        onto_box = await _box(onto)
        x1, y1 = _point(onto, onto_box)
        x1, y1 = x1 + offset_x, y1 + offset_y
        where = f"onto {onto.element_id}" + (f" (moved by {offset_x:g}, {offset_y:g} px)" if offset_x or offset_y else "")
    else:
        if not offset_x and not offset_y:
            raise ActionError("drag: give to_element_id, or offset_x / offset_y in pixels to drag by")
        x1, y1 = x0 + offset_x, y0 + offset_y
        where = f"by {offset_x:g}, {offset_y:g} px"
    await page.mouse.move(x0, y0)
    await page.mouse.down()
    try:
        # The first move goes a few pixels towards the target, to start the drag.
        distance = max(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5, 1.0)
        nudge = min(_START_PX, distance) / distance
        await page.mouse.move(x0 + (x1 - x0) * nudge, y0 + (y1 - y0) * nudge, steps=2)
        await page.mouse.move(x1, y1, steps=_STEPS)
        await asyncio.sleep(_PAUSE_S)
        await page.mouse.move(x1, y1 + 1)  # one more event over the target: HTML5 dragover settles there
    finally:
        await page.mouse.up()
    return f"dragged {source.element_id} {where}; {await _moved(source, start_box)}"


async def _moved(source: Target, before: FloatRect) -> str:
    box = await source.locator.bounding_box() if await source.locator.count() else None
    if box is None:
        return "it is no longer on the page where it was (the page replaced or removed it)"
    dx, dy = box["x"] - before["x"], box["y"] - before["y"]
    if abs(dx) < 1 and abs(dy) < 1:
        return "it is where it was (the page did not move it)"
    return f"it moved by {dx:.0f}, {dy:.0f} px"
