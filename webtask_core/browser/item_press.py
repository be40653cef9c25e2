"""A key that should add a typed item to a list widget (a tag, a chip, a token), checked and pressed
once more when it did nothing, as a person watching the field would.

Tag widgets take Enter (Tab, a comma) as "make a chip of what I typed"; some ignore it at times:
tag-it does nothing while its suggestion list is open and no suggestion is picked (Wagtail's tag
field, where the list opens on a timer and a server's answer, so a replay running its calls back to
back can press Enter just after it opened). The signs that a press did nothing are on the page: the
field still holds the typed text, and the text shows nowhere more than before (no new chip).
:func:`item_field` reads them; :func:`confirm_item_added` compares them after the press and, when it
did nothing, does what a person does: with the list open, clicks the suggestion that says exactly the
item; else closes the list (Escape) and presses once more. Escape may put back what the list was
searched for (jQuery UI's autocomplete restores the term it searched, a few letters short when the
search started while the item was still being typed): the item is then typed again over it, once.
Never a second press once a chip showed; a widget that still takes nothing refuses the value, which
is an :class:`ActionError` naming it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from playwright.async_api import Page

from webtask_core.browser.failures import translate_errors
from webtask_core.browser.focus import DEEP_ACTIVE, focused_frame
from webtask_core.browser.motion import MOTION_MAX_S, pointer_off_page, settle_motion
from webtask_core.errors import ActionError

__all__ = ["ItemField", "item_field", "press_needed", "confirm_item_added"]

logger = logging.getLogger(__name__)

_SUGGESTION_WAIT_S = 2.0  # for a list searching again to show the item typed over the term Escape put back

# The focused field, its text, how many visible elements show `text` (chips; not the field, not a
# suggestion list) and whether a suggestion list is open beside it: the field says so (aria-expanded),
# or a floating box (positioned absolute or fixed) touches its box, holding items, not the field.
_ITEM_FIELD = """([text, mark]) => {
  """ + DEEP_ACTIVE + """
  if (!a) return null;
  const field = a.matches('input, textarea') ? a : (a.isContentEditable ? a : null);
  if (!field) return null;
  const value = field.matches('input, textarea') ? field.value : field.textContent;
  const fold = (s) => (s || '').replace(/^["']|["']$/g, '').replace(/\\s+/g, ' ').trim().toLowerCase();
  const box = field.getBoundingClientRect();
  const floating = (el) => {
    for (let n = el, depth = 0; n && depth < 3; n = n.parentElement, depth++) {
      const position = getComputedStyle(n).position;
      if (position === 'absolute' || position === 'fixed') return true;
    }
    return false;
  };
  const lists = [...document.querySelectorAll('ul, ol, [role=listbox], [role=menu], [class*=dropdown], [class*=suggest]')]
    .filter((list) => {
      if (list.contains(field) || !list.children.length || !list.getClientRects().length) return false;
      const r = list.getBoundingClientRect();
      if (r.height < 4 || r.right < box.left || r.left > box.right) return false;
      const below = r.top - box.bottom, above = box.top - r.bottom;
      return ((below > -6 && below < 40) || (above > -6 && above < 40)) && floating(list);
    });
  const open = field.getAttribute('aria-expanded') === 'true' || lists.length > 0;
  const wanted = fold(text);
  // the text nodes that say the item, one per element (a chip's label), walked once: no element's whole text is built
  let shown = 0;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); wanted && node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || node.data.length > wanted.length + 8 || fold(node.data) !== wanted) continue;
    if (el === field || lists.some((list) => list.contains(el))) continue;
    if (el.closest('select, option, script, style, template')) continue;
    if (el.getClientRects().length) shown += 1;
  }
  // the open list's option that says exactly the item (marked when asked, to be clicked as a person picks it)
  const option = lists.flatMap((list) => [...list.querySelectorAll('li, [role=option], a, div')])
    .find((el) => (el.matches('li, [role=option]') || !el.children.length)
      && fold(el.textContent) === wanted && el.getClientRects().length > 0);
  if (mark) {
    document.querySelectorAll('[data-webtask-pick]').forEach((el) => el.removeAttribute('data-webtask-pick'));
    if (option) option.setAttribute('data-webtask-pick', '');
  }
  return {value, shown, open, pick: !!option};
}"""


@dataclass(frozen=True)
class ItemField:
    """The focused field as a list widget shows it: its text, how many elements show the item's text,
    whether a suggestion list is open beside it."""

    value: str
    shown: int
    list_open: bool
    suggested: bool = False  # the open list holds an option saying exactly the item (marked data-webtask-pick)


async def item_field(page: Page, text: str, *, mark: bool = False) -> ItemField | None:
    """The focused text field as it stands for the item ``text``; None when no text field has the focus.
    ``mark``: mark the open list's option saying exactly ``text`` for :func:`_pick_suggestion`."""
    async with translate_errors("read the focused field", MOTION_MAX_S):
        frame = await focused_frame(page)
        found = await frame.evaluate(_ITEM_FIELD, [text, mark])
    if not isinstance(found, dict):
        return None
    return ItemField(value=str(found["value"]), shown=int(found["shown"]), list_open=bool(found["open"]),
                     suggested=bool(found.get("pick")))


def press_needed(before: ItemField | None, key: str, text: str) -> str | None:
    """Before ``key`` is pressed to add the typed item ``text``: None when the focused field holds it
    (press). When the field lost it, a press would not add it (in an empty field Enter can submit the
    form: Wagtail's tag field then saves the page as a draft): the note that it is not needed when the
    item shows outside the field already (the widget made its chip as the field lost the focus), an
    ActionError when it shows nowhere. None (no text field has the focus) is left to the press."""
    if before is None or not text.strip():
        return None
    if " ".join(text.split()).casefold() in " ".join(before.value.split()).casefold():
        return None
    if before.shown > 0:
        return f"not pressed: {text!r} shows already (the widget added it) and the field holds {before.value!r}"
    raise ActionError(f"{key} was to add the item {text!r}, but the focused field holds {before.value!r} and the "
                      "item shows nowhere: pressed now it would not add it (in an empty field it can submit the "
                      "form), so it was not pressed")


def _did_nothing(before: ItemField | None, after: ItemField | None, text: str) -> bool:
    """The press left the field holding the same typed text and made no new element showing it."""
    if before is None or after is None or not text.strip() or text.strip() not in before.value:
        return False
    return after.value == before.value and after.shown <= before.shown


async def confirm_item_added(page: Page, key: str, text: str, before: ItemField | None) -> str:
    """After ``key`` was pressed to add the typed item ``text`` (``before``: the field just before
    the press): '' when it did something; when it did nothing, the note of what added it after all;
    an ActionError when nothing did (see the module docstring)."""
    after = await item_field(page, text, mark=True)
    if not _did_nothing(before, after, text):
        return ""
    assert after is not None  # _did_nothing says so
    why = "its suggestion list was open" if after.list_open else "the field did not take it"
    if after.suggested and await _pick_suggestion(page, text, before):
        logger.info("the first %s added no item %r (%s); picked it in the list", key, text, why)
        return f" (the first {key} added no item: {why}; picked {text!r} in the list)"
    closed = ""
    if after.list_open:
        now = await _close_list(page, key, text, why)
        closed = " after Escape closed the suggestion list"
        if now.value != after.value:
            closed = f" after Escape closed the suggestion list and put back {now.value!r} (typed {text!r} again)"
            again = await _type_again(page, text)
            if again is not None and again.suggested and await _pick_suggestion(page, text, before):
                logger.info("%s added no item %r (%s);%s and picked it in the list", key, text, why, closed)
                return f" (the first {key} added no item: {why}{closed}; picked {text!r} in the list)"
            if again is not None and again.list_open:  # open again for this very text: Escape leaves it as it is
                await _close_list(page, key, text, why)
    await settle_motion(page)
    async with translate_errors(f"press {key}", MOTION_MAX_S):
        await page.keyboard.press(key)
    await settle_motion(page)
    if _did_nothing(before, await item_field(page, text), text):
        raise ActionError(f"pressed {key} twice{closed} to add {text!r}: the field still holds it and no item "
                          f"{text!r} was added; the widget does not take this value")
    logger.info("the first %s added no item %r (%s); pressed again%s", key, text, why, closed)
    return f" (the first {key} added no item: {why}; pressed again{closed})"


async def _close_list(page: Page, key: str, text: str, why: str) -> ItemField:
    """Escape, to close the suggestion list beside the focused field; the field as it then stands. An
    ActionError when the field lost the focus."""
    async with translate_errors("press Escape", MOTION_MAX_S):
        await page.keyboard.press("Escape")
    now = await item_field(page, text)
    if now is None:
        raise ActionError(f"pressed {key} to add {text!r}, but no item was added ({why}); Escape took the focus "
                          "from the field, so it was not pressed again")
    return now


async def _pick_suggestion(page: Page, text: str, before: ItemField | None) -> bool:
    """Click the open list's option that says exactly ``text`` (the one :func:`item_field` marked), then
    take the mouse off the page again (what its hover shows must not depend on where the list was);
    True when that added the item."""
    async with translate_errors(f"pick {text!r} in the suggestion list", MOTION_MAX_S * 2):
        frame = await focused_frame(page)
        await frame.locator("[data-webtask-pick]").first.click(timeout=MOTION_MAX_S * 1000)
        await pointer_off_page(page)
    await settle_motion(page)
    return not _did_nothing(before, await item_field(page, text), text)


async def _type_again(page: Page, text: str) -> ItemField | None:
    """Escape put something else back into the field (the term its list was searched for): select it and
    type the item over it, then give the list's search (its timers, its request) a moment to show the
    item; the field as it then stands (its option marked when the list shows it)."""
    async with translate_errors(f"type {text!r} again", MOTION_MAX_S * 2 + len(text) * 0.05):
        await page.keyboard.press("ControlOrMeta+a")
        await page.keyboard.type(text)
    deadline = time.monotonic() + _SUGGESTION_WAIT_S
    while True:
        now = await item_field(page, text, mark=True)
        if now is None or now.suggested or time.monotonic() > deadline:
            return now
        await asyncio.sleep(0.1)
