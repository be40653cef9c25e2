"""Choosing options in a select widget the page built itself (Tom Select, Choices.js, Select2,
Shoelace...), as a person does: open it, find the option by its text (typing to filter when the list
does not show it), click it, and look at what the widget shows.

Success is what the widget shows, never what was clicked: when the text it shows did not change, the
choice is an error (or was already made), so a model is never told an option is selected while the
widget still shows its placeholder.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from playwright.async_api import ElementHandle

from webtask_core.browser import actions
from webtask_core.browser.actions import Target, quote_for_model
from webtask_core.browser.native_select import no_such_option
from webtask_core.browser.scripts import MARK_ATTRIBUTE, load_script
from webtask_core.errors import ActionError

__all__ = ["choose"]

_OPEN_WAIT_MS = 1500  # for the list to show after the widget was clicked, or after typing
_SHOWN_WAIT_S = 1.5  # for the widget to show the choice after the option was clicked
# For its list to close after Escape: the wait ends as soon as it shows closed, and a list still
# closing when the next action comes covers the next control or answers for it (seen at load 20).
_CLOSE_WAIT_S = 2.0
_SHOWN_QUIET_S = 0.15  # what it shows must hold this long: a re-render may blank it for a moment
_CLOSED_QUIET_S = 0.3  # a list closed after typing must stay closed this long


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _match(options: list[dict[str, Any]], wanted: str) -> int | None:
    """The index of the option with this text exactly (case and spacing aside), as for a <select>:
    never a near match (the error names those, for the model to choose)."""
    folded = _fold(wanted)
    for same in (lambda text: text == wanted.strip(), lambda text: _fold(text) == folded):
        for index, option in enumerate(options):
            if same(option["text"]):
                return index
    return None


class _Widget:
    """Calls into listbox.js for one widget of the page."""

    def __init__(self, target: Target):
        self.target = target
        self.script = load_script("listbox.js")

    def arguments(self, op: str, **extra: Any) -> dict[str, Any]:
        return {"mark": MARK_ATTRIBUTE, "id": self.target.element_id, "op": op, "index": 0, "waitMs": 0, "want": "",
                "scan": False, **extra}

    async def call(self, op: str, **extra: Any) -> Any:
        answer = await self.target.frame.evaluate(self.script, self.arguments(op, **extra))
        if isinstance(answer, dict) and answer.get("gone"):
            raise ActionError(f"{self.target.element_id} is gone: the page replaced it; use the ids of the current page state")
        return answer

    async def option(self, index: int) -> ElementHandle:
        handle = await self.target.frame.evaluate_handle(self.script, self.arguments("option", index=index))
        element = handle.as_element()
        if element is None:
            raise ActionError(f"the option list of {self.target.element_id} changed before the option could be clicked")
        return element


async def choose(target: Target, labels: list[str], timeout_s: float) -> str:
    """Choose each of `labels` in the widget `target` belongs to; a sentence saying what it shows now."""
    widget = _Widget(target)
    element_id = target.element_id
    found = await widget.call("find")
    if not found["ok"]:
        raise ActionError(
            f"{element_id} is not a <select> nor a drop-down list (no combobox or listbox in or around it); "
            "click it to open it, then click the option you want"
        )
    target.require_enabled()
    if len(labels) > 1 and found["multiple"] is False:
        raise ActionError(f"{element_id} takes a single option, but {len(labels)} were given")
    keyboard = target.frame.page.keyboard
    chosen: list[str] = []
    already: list[str] = []
    expanded = found["expanded"]
    shown = found["shown"]
    for label in labels:
        if not expanded:
            await _open(widget, target, timeout_s)
        listed = first = await widget.call("options", waitMs=_OPEN_WAIT_MS)
        index = _match(listed["options"], label)
        typed = False
        if index is None and listed["typeable"]:
            # A long or searching list shows the option once its text is typed.
            await keyboard.type(label)
            typed = True
            listed = await widget.call("options", waitMs=_OPEN_WAIT_MS, want=label)
            index = _match(listed["options"], label)
        if index is None and listed["options"]:
            # A list that renders only the rows in its view (a virtual list): scroll it through.
            listed = await widget.call("options", want=label, scan=True)
            index = _match(listed["options"], label)
        if index is None:
            await _close(widget, target, force=typed)
            if not first["options"]:
                raise ActionError(
                    f"{element_id} has no option {quote_for_model(label)}; it shows no list of options when "
                    "clicked (if it opened a menu, click the item you want instead)"
                )
            raise ActionError(_missing(element_id, label, first, listed))
        option = listed["options"][index]
        if option["disabled"]:
            await _close(widget, target)
            raise ActionError(f"option {quote_for_model(option['text'])} of {element_id} is disabled")
        if option["selected"] and (found["multiple"] or len(labels) > 1) and _fold(option["text"]) in _fold(shown):
            # Marked selected (not merely highlighted: the widget shows it): a click would take it away.
            already.append(option["text"])
            continue
        element = await widget.option(index)
        try:
            await element.click(timeout=timeout_s * 1000)  # Playwright waits until it can be clicked
        finally:
            await element.dispose()
        now = await _shown_after(widget, shown)
        expanded = now["expanded"]
        if now["shown"] != shown:
            if _fold(option["text"]) not in _fold(now["shown"]):
                raise ActionError(
                    f"clicked option {quote_for_model(option['text'])} of {element_id}, but the widget now shows "
                    f"{quote_for_model(now['shown'], 100)}, not that option"
                )
            chosen.append(option["text"])
        elif _fold(option["text"]) in _fold(shown):
            already.append(option["text"])
        else:
            await _close(widget, target)
            raise ActionError(
                f"clicked option {quote_for_model(option['text'])} of {element_id}, but the widget did not take it: "
                f"it still shows {quote_for_model(shown, 100) if shown else 'nothing'}"
            )
        shown = now["shown"]
    if expanded:
        await _close(widget, target)
    parts = []
    if chosen:
        parts.append(f"selected {', '.join(quote_for_model(text, 40) for text in chosen)} in {element_id}")
    if already:
        parts.append(f"{', '.join(quote_for_model(text, 40) for text in already)} "
                     f"{'was' if len(already) == 1 else 'were'} already selected in {element_id}")
    return "; ".join(parts) + f"; it shows {quote_for_model(shown, 100)}"


def _missing(element_id: str, label: str, first: dict[str, Any], listed: dict[str, Any]) -> str:
    """No option `label`: the options the list showed, and how many a scroll through it went past."""
    seen = listed.get("seen")
    if seen and seen["count"] > len(first["options"]):
        texts = seen["first"] + [option["text"] for option in first["options"]]
        options = [[text, "", False] for text in dict.fromkeys(texts)]
        message = no_such_option(element_id, options[:8], label)
        return message.split(" … (")[0] + f" … ({seen['count']} in all, the list scrolled through to its end)"
    options = [[option["text"], "", option["disabled"]] for option in first["options"]]
    return no_such_option(element_id, options, label)


async def _open(widget: _Widget, target: Target, timeout_s: float) -> None:
    """Open the widget by a click on it, as a person does: on the element, or when something of the
    widget's own lies over it (the chosen tags of a multiple select), on a free part of the widget."""
    if target.info["visible"] and not target.info["offscreen"] and target.position is None:
        point = await widget.call("opener")
        if point is not None:
            left, top = target.info["rect"][0], target.info["rect"][1]
            await target.locator.click(position={"x": point["x"] - left, "y": point["y"] - top}, force=True,
                                       timeout=timeout_s * 1000)
            return
    await actions.click(target, timeout_s)


async def _shown_after(widget: _Widget, before: str) -> dict[str, Any]:
    """What the widget shows once it changed from `before` and held still for a moment (a re-render
    that empties it for a frame is not its answer), or after _SHOWN_WAIT_S when it does not change."""
    deadline = time.monotonic() + _SHOWN_WAIT_S
    last: dict[str, Any] | None = None
    since = 0.0
    while True:
        now: dict[str, Any] = await widget.call("shown")
        moment = time.monotonic()
        if last is None or now["shown"] != last["shown"]:
            last, since = now, moment
        settled = now["shown"] != before and now["shown"] and moment - since >= _SHOWN_QUIET_S
        if settled or moment >= deadline:
            return now
        await asyncio.sleep(0.03)


async def _close(widget: _Widget, target: Target, force: bool = False) -> None:
    """Close the widget's list if it is open (Escape, as a person would), so it covers nothing; with
    `force` also when it looks closed (text typed into it may open it again a moment later)."""
    if force or (await widget.call("shown"))["expanded"]:
        await target.frame.page.keyboard.press("Escape")
        # Until it shows closed (a closing list still covers what is below it, and a widget asked
        # again while it closes would be taken for open), at most _CLOSE_WAIT_S.
        # After typing, closed must also hold for a moment: the widget's search may answer the typed
        # text late and open the list again over the next control (seen under load); Escape again then.
        deadline = time.monotonic() + _CLOSE_WAIT_S
        closed_since: float | None = None
        while time.monotonic() < deadline:
            now = await widget.call("shown")
            moment = time.monotonic()
            if not now["expanded"] and not now["closing"]:
                closed_since = moment if closed_since is None else closed_since
                if not force or moment - closed_since >= _CLOSED_QUIET_S:
                    break
            elif closed_since is not None:
                closed_since = None
                await target.frame.page.keyboard.press("Escape")
            await asyncio.sleep(0.03)
