"""Setting a slider that is not a native <input type=range> (noUiSlider's handle, a role="slider"
div): with the keyboard, as a person would, until its aria-valuenow is the value asked for.

Arrow keys move it one step, PageUp/PageDown several when the way is long; the value is read back
after each key, so the result says where the slider really is, and a slider that does not move with
the keyboard is an error that says to drag it instead.
"""

from __future__ import annotations

import re
import time

from webtask_core.browser.actions import Target, quote_for_model
from webtask_core.errors import ActionError

__all__ = ["is_slider", "set_slider"]

_READ = """(el) => [el.getAttribute('aria-valuenow'), el.getAttribute('aria-valuetext')]"""
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_MAX_KEYS = 400  # far more than any slider needs with PageUp/PageDown; a bound against one that lies


def is_slider(target: Target) -> bool:
    """A role=slider (or spinbutton) widget that is not a native input."""
    return target.info.get("range") is not None


def _number(text: str | None, what: str) -> float:
    match = _NUMBER.search((text or "").replace(",", ""))
    if match is None:
        raise ActionError(f"{what} is not a number: {quote_for_model(text or '')}")
    return float(match.group())


async def _read(target: Target) -> tuple[float, str]:
    now, text = await target.evaluate(_READ)
    if now is None:
        raise ActionError(f"{target.element_id} no longer says its value (aria-valuenow is gone)")
    return float(now), text or now


async def set_slider(target: Target, text: str, timeout_s: float) -> str:
    """Move the slider to the number in `text` with the keyboard; ActionError when it cannot get there."""
    target.require_enabled()
    target.require_visible()
    element_id, info = target.element_id, target.info["range"]
    if info["now"] is None or info["min"] is None or info["max"] is None:
        raise ActionError(f"{element_id} does not say its value and range (aria-valuenow/min/max); drag it instead")
    wanted = _number(text, f"the value for {element_id}")
    low, high = float(info["min"]), float(info["max"])
    if not low <= wanted <= high:
        raise ActionError(f"{element_id} goes from {low:g} to {high:g}; {wanted:g} is out of its range")
    up, down = ("ArrowUp", "ArrowDown") if info["vertical"] else ("ArrowRight", "ArrowLeft")
    await target.locator.focus(timeout=timeout_s * 1000)
    now, shown = await _read(target)
    step = 0.0  # how far one arrow key moves it, learnt from the first one
    pages = True  # PageUp/PageDown move it further (until one is seen not to)
    deadline = time.monotonic() + timeout_s
    stepped_over = False
    for _ in range(_MAX_KEYS):
        if abs(now - wanted) < 1e-9 or time.monotonic() > deadline:
            break
        rising = wanted > now
        far = pages and step > 0 and abs(wanted - now) > step * 10
        key = ("PageUp" if rising else "PageDown") if far else (up if rising else down)
        await target.locator.press(key, timeout=timeout_s * 1000)
        before = now
        now, shown = await _read(target)
        if far:
            pages = now != before
            continue
        if now == before:
            raise ActionError(
                f"{element_id} did not move when {key} was pressed (it shows {quote_for_model(shown)}); "
                "drag its handle with drag and offset_x instead"
            )
        step = step or abs(now - before)
        if (now - wanted) * (before - wanted) < 0:  # stepped over it: the closer of the two is as near as it goes
            if abs(before - wanted) < abs(now - wanted):
                await target.locator.press(down if rising else up, timeout=timeout_s * 1000)
                now, shown = await _read(target)
            stepped_over = True
            break
    if abs(now - wanted) < 1e-9:
        return f"set {element_id} to {quote_for_model(shown)}"
    if stepped_over:
        return (f"moved {element_id} as near to {wanted:g} as its steps allow: it now shows {quote_for_model(shown)} "
                f"(aria-valuenow {now:g})")
    raise ActionError(f"{element_id} did not reach {wanted:g} in time: it now shows {quote_for_model(shown)} "
                      f"(aria-valuenow {now:g}); call fill again to go on, or drag its handle")
