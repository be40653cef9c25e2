"""Acting on one element of the last observation, found by its mark in the right frame.

Each function probes the element first (one round trip: present? visible? enabled? covered?) so
the model gets a precise reason quickly instead of a generic timeout, then lets Playwright act; a
click in the main frame is done with the mouse directly (see _click_in_main_frame).
Every function returns a short sentence saying what it did; settling and navigation reporting are
the session's job.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from functools import cache
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Locator, Page, Position

from webtask_core.browser.failures import is_closed_error
from webtask_core.browser.focus import DEEP_ACTIVE, focused_frame
from webtask_core.browser.motion import STILL_ARGS, settle_motion, still_first
from webtask_core.browser.scripts import MARK_ATTRIBUTE, kept_script, marked
from webtask_core.errors import ActionError

__all__ = [
    "ELEMENT_ID",
    "Target",
    "probe",
    "click",
    "hover",
    "fill",
    "type_into",
    "set_checked",
    "press_on",
    "scroll_element",
    "quote_for_model",
]

ELEMENT_ID = re.compile(r"^[a-z][a-z0-9]*-\d+$")

# Scrolls the element if it scrolls, else the nearest box around it that does, by `dy` of that box's
# visible heights. Returns null when nothing around it scrolls, else [the box is the element itself,
# the box's mark (or tag), scrollTop before, scrollTop after, scrollHeight, clientHeight].
_SCROLL_ELEMENT = """(el, [dy, mark]) => {
  const scrolls = (n) => /^(auto|scroll)$/.test(getComputedStyle(n).overflowY) && n.scrollHeight > n.clientHeight + 1;
  let box = el;
  while (box && box !== document.body && box !== document.documentElement && !scrolls(box)) {
    box = box.assignedSlot || box.parentElement || (box.parentNode && box.parentNode.host) || null;
  }
  if (!box || box === document.body || box === document.documentElement) return null;
  const before = box.scrollTop;
  box.scrollBy({top: dy * box.clientHeight, behavior: 'instant'});
  return [box === el, box.getAttribute(mark) || box.tagName.toLowerCase(), before,
          box.scrollTop, box.scrollHeight, box.clientHeight];
}"""
# Whether the click made this document start leaving: the navigation probe.js noted (not a
# same-document one, not one the page cancelled) or, when that is still to come, a form submitted
# (not cancelled by the page's own handler) into this frame; and whether it opened a new tab: a
# window.open, or a link or form (not cancelled) aimed at a new browsing context (`_blank`, or a name
# no frame of this document has). Cleared for the next click.
_TAKE_NAVIGATION = """() => {
  const NOTE = Symbol.for('webtask.navigation');
  const note = window[NOTE];
  window[NOTE] = null;
  if (!note) return [false, false];
  const base = document.querySelector('base[target]');
  const aimed = (target) => (target || (base ? base.target : '')).toLowerCase();
  const elsewhere = (target) => target === '_blank' || (target !== '' && !['_self', '_top', '_parent'].includes(target)
    && !document.querySelector(`iframe[name="${CSS.escape(target)}"], frame[name="${CSS.escape(target)}"]`));
  const click = note.click, link = click && !click.defaultPrevented && click.target instanceof Element
    ? click.target.closest('a[href], area[href]') : null;
  const submit = note.submit && !note.submit.defaultPrevented && note.submit.target instanceof HTMLFormElement
    ? note.submit : null;
  const form = submit && submit.target, by = submit && submit.submitter;
  const method = form ? (by && by.hasAttribute('formmethod') ? by.formMethod : form.method).toLowerCase() : '';
  const formTarget = form ? aimed((by && by.getAttribute('formtarget')) || form.getAttribute('target')) : '';
  const opens = note.opened || (!!link && !link.hasAttribute('download') && elsewhere(aimed(link.getAttribute('target'))))
    || (!!form && method !== 'dialog' && elsewhere(formTarget));
  if (note.navigate) return [!note.navigate.defaultPrevented && !note.navigate.destination.sameDocument, opens];
  return [!!form && method !== 'dialog' && ['', '_self', '_top', '_parent'].includes(formTarget), opens];
}"""
_SET_VALUE = """(el, value) => {
  el.value = value;
  el.dispatchEvent(new Event('input', {bubbles: true}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return el.value;
}"""


@cache
def _on_marked(script: str) -> str:
    """``script`` run on the element stamped with an id (found as mark_engine.js finds it)."""
    return ("([mark, id, argument]) => { const el = (window[Symbol.for('webtask.marks')] || []).find("
            f"(one) => one.isConnected && one.getAttribute(mark) === id); return el ? [true, ({script})(el, argument)] "
            ": [false, null]; }")


def quote_for_model(text: str, limit: int = 60) -> str:
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    return '"' + shown.replace('"', '\\"') + '"'


@dataclass
class Target:
    """An element of the last observation, probed just now."""

    element_id: str
    frame: Frame
    info: dict[str, Any]
    # Set by a click made with the mouse when it started a navigation of the page, which the
    # session's settle then waits for (Playwright's own click waits for it itself); and when it
    # opened a new tab, whose arrival (or its navigation blocked) the action waits for.
    navigating: bool = False
    opens_tab: bool = False

    @property
    def locator(self) -> Locator:
        return self.frame.locator(marked(self.element_id)).first

    async def evaluate(self, script: str, argument: Any = None) -> Any:
        """``script`` (a function of the element and ``argument``) run on the element in one round trip;
        a locator's evaluate takes three (find a handle, evaluate on it, release it)."""
        found, value = await self.frame.evaluate(_on_marked(script), [MARK_ATTRIBUTE, self.element_id, argument])
        if not found:
            raise ActionError(f"{self.element_id} is stale: the page changed since it was observed and the element is gone")
        return value

    @property
    def position(self) -> Position | None:
        point = self.info.get("point")
        return {"x": point[0], "y": point[1]} if point else None

    def require_rendered(self) -> None:
        if not self.info["visible"]:
            raise ActionError(f"{self.element_id} is hidden (not visible on the page)")

    def require_visible(self) -> None:
        self.require_rendered()
        if self.info["offscreen"]:
            clipper = self.info.get("clipper")
            where = f"out of view inside {clipper}" if clipper else "outside the visible area"
            raise ActionError(f"{self.element_id} is {where} and could not be scrolled into view")

    def require_enabled(self) -> None:
        if self.info["disabled"]:
            raise ActionError(f"{self.element_id} is disabled")

    def require_point(self, when: str = "") -> Position:
        """Where to click it; ActionError saying what is in the way when no point of it takes the mouse.
        `when` qualifies the message (the probe taken once the mouse is on the element)."""
        self.require_visible()
        position = self.position
        if position is None:
            raise ActionError(self.unreachable(when))
        return position

    def unreachable(self, when: str = "") -> str:
        info, element_id = self.info, self.element_id
        if info.get("through"):
            if info.get("pointerEvents") == "none":
                return (f"{element_id} ignores the mouse (pointer-events: none){when}: a click there reaches "
                        f"{info['through']}; click that instead, or a control near it")
            return f"{element_id} does not take the mouse at its place{when}: a click there reaches {info['through']}"
        cover = info.get("cover") or "another element"
        return f"{element_id} is covered by {cover}{when}; close or move what covers it first"


async def probe(
    frame: Frame, element_id: str, *, scroll: bool, next_frame: bool = False, watch_navigation: bool = False,
    hold_still: bool = False,
) -> Target:
    """Find `element_id` by its mark in `frame`; ActionError if the page no longer has it.
    With `next_frame`, measure on the next frame when something on the page is animating; with
    `watch_navigation`, note the next navigation the document starts (see _navigation_started); with
    `hold_still`, first wait until the page holds still (settle_motion), in `frame` in the same round trip."""
    options = {
        "mark": MARK_ATTRIBUTE, "id": element_id, "scroll": scroll, "nextFrame": next_frame,
        "watchNavigation": watch_navigation,
    }
    kept = kept_script("probe.js")  # in every document from the context's init script: a call sends its key
    if hold_still:
        probed = frame.evaluate(still_first(kept.call), [STILL_ARGS, [kept.key, options]])
        info, _ = await asyncio.gather(probed, settle_motion(frame.page, besides=frame))
    else:
        info = await frame.evaluate(kept.call, [kept.key, options])
    if info is None:  # a document without it (made before the init script ran): kept there now
        info = await frame.evaluate(kept.install, [kept.key, options])
    if not info["found"]:
        raise ActionError(
            f"{element_id} is stale: the page changed since it was observed and the element is gone; "
            "use the ids of the current page state"
        )
    return Target(element_id=element_id, frame=frame, info=info)


def _ms(timeout_s: float) -> float:
    return timeout_s * 1000


def _clicks_directly(target: Target) -> bool:
    """Whether the mouse can click `target` itself (see _click_in_main_frame)."""
    return target.frame.parent_frame is None and bool(target.info.get("client")) and bool(target.info.get("navigationApi"))


async def click(target: Target, timeout_s: float) -> str:
    target.require_enabled()
    position = target.require_point()
    if _clicks_directly(target):
        await _click_in_main_frame(target, timeout_s)
    else:
        # In a child frame the probe's viewport point is not the page's, and without the Navigation
        # API a navigating click cannot be told apart: Playwright's click finds the point and waits.
        # Like a person: move onto the element first (menus open on hover), then click the same point.
        await target.locator.hover(position=position, timeout=_ms(timeout_s))
        await target.locator.click(position=position, timeout=_ms(timeout_s))
    return f"clicked {target.element_id}"


async def _click_in_main_frame(target: Target, timeout_s: float) -> None:
    """Move onto the probed point, make sure the element is still there and still the one hit at
    that point (hover effects can move or cover it), then press and release the button there, and
    note whether that started a navigation of the page (for the settle to wait for, as Playwright's
    click would).

    What Playwright's click would check first (visible, enabled, scrolled into view, not covered,
    not moving) the probe has checked, so this costs four round trips instead of Playwright's
    script injection into every new document, stability frames and hit-target interception."""
    page = target.frame.page
    deadline = time.monotonic() + timeout_s
    current = target
    while True:
        x, y = current.info["client"]
        await page.mouse.move(x, y)
        again = await probe(target.frame, target.element_id, scroll=False, next_frame=True, watch_navigation=True)
        if not again.info["visible"] or again.info["client"] is None:
            again.require_point(" once the mouse is on it")
        if again.info["rect"] == current.info["rect"] and again.info["client"] == current.info["client"]:
            break  # where it was before the mouse came: not moving
        if time.monotonic() > deadline:
            raise ActionError(f"{target.element_id} keeps moving (an animation?); wait for it to stop, then click")
        current = again
    # Press and release in one round trip: Playwright's click moves to where the mouse already is (at
    # most one more mousemove on the same point) and sends the press and the release back to back.
    await page.mouse.click(x, y)
    target.navigating, target.opens_tab = await _navigation_started(page)


async def _navigation_started(page: Page) -> tuple[bool, bool]:
    """Whether the click made the page start navigating to another document, and whether it opened a new tab."""
    try:
        navigates, opens = await page.main_frame.evaluate(_TAKE_NAVIGATION)
    except PlaywrightError as error:
        if is_closed_error(error):
            raise
        return True, False  # the document went away under the question: it navigated
    return bool(navigates), bool(opens)


async def hover(target: Target, timeout_s: float) -> str:
    position = target.require_point()
    await target.locator.hover(position=position, timeout=_ms(timeout_s))
    return f"hovering over {target.element_id}"


def _require_editable(target: Target) -> None:
    info, element_id = target.info, target.element_id
    if info["options"] is not None:
        raise ActionError(f"{element_id} is a <select>; use select_option to choose one of its options")
    if info["checkable"]:
        raise ActionError(f"{element_id} is a {info['type'] or 'checkbox'}; use check to tick or untick it")
    if info["type"] == "file":
        raise ActionError(f"{element_id} is a file input; use upload to attach files")
    if not info["editable"]:
        raise ActionError(f"{element_id} is a <{info['tag']}> and does not take text")
    target.require_enabled()
    if info["readonly"]:
        raise ActionError(f"{element_id} is read-only")


def _shown_text(target: Target, text: str) -> str:
    if target.info["type"] == "password":
        return f"a password ({len(text)} characters)"  # secrets never go back to the model
    return quote_for_model(text)


async def fill(target: Target, text: str, timeout_s: float) -> str:
    _require_editable(target)
    target.require_visible()
    if target.info["type"] in ("range", "color"):
        # Playwright cannot type into these; set the value the way a widget would and fire events.
        value = await target.evaluate(_SET_VALUE, text)
        return f"set {target.element_id} to {quote_for_model(str(value))}"
    await target.locator.fill(text, timeout=_ms(timeout_s))
    return f"filled {target.element_id} with {_shown_text(target, text)}"


# A secret typed into a field that is not a password field is drawn as dots, as a password is, so no
# picture of the page shows it: the Playwright trace's film strip is recorded frame by frame while the
# page runs and cannot be masked afterwards (the model's screenshots are masked when taken).
# A password field gets it too: a "show password" button turns it into a text field.
CONCEAL = "e => { if (e && e.style) e.style.setProperty('-webkit-text-security', 'disc', 'important'); }"


async def conceal(target: Target, timeout_s: float) -> None:
    await target.evaluate(CONCEAL)


# The focused field, in the frame that has the focus: drawn as dots when asked; whether it is a password field.
_PREPARE_FOCUSED = "(conceal) => { " + DEEP_ACTIVE + " if (conceal) (" + CONCEAL + ")(a); return !!a && a.type === 'password'; }"


async def type_with_keyboard(page: Page, text: str, *, conceal: bool) -> str:
    """Type ``text`` into whatever has the keyboard focus; ``conceal``: it holds a secret."""
    password = await (await focused_frame(page)).evaluate(_PREPARE_FOCUSED, conceal)
    await page.keyboard.type(text)
    shown = f"a password ({len(text)} characters)" if password else quote_for_model(text)
    return f"typed {shown} with the keyboard"


async def type_into(target: Target, text: str, timeout_s: float) -> str:
    _require_editable(target)
    target.require_visible()
    await target.locator.press_sequentially(text, timeout=_ms(timeout_s))
    return f"typed {_shown_text(target, text)} into {target.element_id}"


async def set_checked(target: Target, checked: bool, timeout_s: float) -> str:
    info, element_id = target.info, target.element_id
    if not info["checkable"]:
        raise ActionError(f"{element_id} is not a checkbox, radio button or switch; use click")
    target.require_enabled()
    state = "checked" if checked else "unchecked"
    if bool(info["checked"]) == checked:
        return f"{element_id} was already {state}"
    if not checked and info["type"] == "radio":
        raise ActionError(f"{element_id} is a radio button and cannot be unchecked; check another option instead")
    position = target.require_point()
    if not _clicks_directly(target):
        await target.locator.set_checked(checked, position=position, timeout=_ms(timeout_s))
        return f"{state} {element_id}"
    # A click, then a look at the result, as Playwright's set_checked does, without its injected
    # helper script (~50 ms on each new document).
    await _click_in_main_frame(target, timeout_s)
    if target.navigating:
        return f"clicked {element_id} to make it {state}"
    after = await probe(target.frame, element_id, scroll=False)
    if bool(after.info["checked"]) != checked:
        raise ActionError(f"clicking {element_id} did not make it {state}; the page handles it another way (try its label)")
    return f"{state} {element_id}"


async def press_on(target: Target, key: str, timeout_s: float, times: int = 1) -> str:
    target.require_visible()
    await target.locator.press(key, timeout=_ms(timeout_s))
    for _ in range(times - 1):  # the element has the focus now: the keyboard goes on from there
        await target.frame.page.keyboard.press(key)
    return f"pressed {key} on {target.element_id}" + (f" {times} times" if times > 1 else "")


def _shown_range(top: float, height: float, visible: float) -> str:
    """The part of a scroll box's content that shows, as the tree's scrollable="0-40%" says it."""
    start = round(100 * top / height)
    return f"{start}-{min(100, round(100 * (top + visible) / height))}%"


async def scroll_element(target: Target, direction: str, amount: float) -> str:
    """Scroll the element by `amount` of its own visible heights; one that does not scroll itself
    scrolls the nearest box around it that does. It may lie out of its box's view: that is why one scrolls."""
    target.require_rendered()
    sign = 1 if direction == "down" else -1
    element_id = target.element_id
    moved = await target.evaluate(_SCROLL_ELEMENT, [sign * amount, MARK_ATTRIBUTE])
    if moved is None:
        raise ActionError(
            f"{element_id} does not scroll, nor does any box around it; leave out element_id to scroll the page"
        )
    itself, box, before, after, height, visible = moved
    what = element_id if itself else f"the box around {element_id} ({box})"
    shows = _shown_range(after, height, visible)
    if abs(after - before) < 1:
        return f"{what} is already scrolled to the {'bottom' if sign > 0 else 'top'}; nothing moved (it shows {shows})"
    return f"scrolled {what} {direction} {amount:g} of its heights; it now shows {shows} of its content"
