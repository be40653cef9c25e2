"""A key that should add a typed item to a list widget (a tag, a chip, a token), checked and pressed
once more when it did nothing, as a person watching the field would.

Tag widgets take Enter (Tab, a comma) as "make a chip of what I typed"; some ignore it at times:
tag-it does nothing while its suggestion list is open and no suggestion is picked (Wagtail's tag
field, where the list opens on a timer and a server's answer, so a replay running its calls back to
back can press Enter just after it opened). The signs that a press did nothing are on the page: the
field still holds the typed text, and the text shows nowhere more than before (no new chip).
:func:`item_field` reads them; :func:`confirm_item_added` compares them after the press and, when it
did nothing, closes an open suggestion list (Escape: it keeps the typed text), lets the page settle
and presses once more. Never the text again, never a second press once a chip showed; a widget that
still takes nothing refuses the value, which is an :class:`ActionError` naming it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from playwright.async_api import Page

from webtask_core.browser.failures import translate_errors
from webtask_core.browser.focus import DEEP_ACTIVE, focused_frame
from webtask_core.browser.motion import MOTION_MAX_S, settle_motion
from webtask_core.errors import ActionError

__all__ = ["ItemField", "item_field", "confirm_item_added"]

logger = logging.getLogger(__name__)

# The focused field, its text, how many visible elements show `text` (chips; not the field, not a
# suggestion list) and whether a suggestion list is open beside it: the field says so (aria-expanded),
# or a floating box (positioned absolute or fixed) touches its box, holding items, not the field.
_ITEM_FIELD = """(text) => {
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
  return {value, shown, open};
}"""


@dataclass(frozen=True)
class ItemField:
    """The focused field as a list widget shows it: its text, how many elements show the item's text,
    whether a suggestion list is open beside it."""

    value: str
    shown: int
    list_open: bool


async def item_field(page: Page, text: str) -> ItemField | None:
    """The focused text field as it stands for the item ``text``; None when no text field has the focus."""
    async with translate_errors("read the focused field", MOTION_MAX_S):
        frame = await focused_frame(page)
        found = await frame.evaluate(_ITEM_FIELD, text)
    if not isinstance(found, dict):
        return None
    return ItemField(value=str(found["value"]), shown=int(found["shown"]), list_open=bool(found["open"]))


def _did_nothing(before: ItemField | None, after: ItemField | None, text: str) -> bool:
    """The press left the field holding the same typed text and made no new element showing it."""
    if before is None or after is None or not text.strip() or text.strip() not in before.value:
        return False
    return after.value == before.value and after.shown <= before.shown


async def confirm_item_added(page: Page, key: str, text: str, before: ItemField | None) -> str:
    """After ``key`` was pressed to add the typed item ``text`` (``before``: the field just before
    the press): '' when it did something; when it did nothing, the note of a second press that did;
    an ActionError when the second did nothing either (see the module docstring)."""
    after = await item_field(page, text)
    if not _did_nothing(before, after, text):
        return ""
    assert after is not None  # _did_nothing says so
    why = "its suggestion list was open" if after.list_open else "the field did not take it"
    closed = ""
    if after.list_open:
        async with translate_errors("press Escape", MOTION_MAX_S):
            await page.keyboard.press("Escape")
        closed = " after Escape closed the suggestion list"
        now = await item_field(page, text)
        if now is None or now.value != after.value:  # Escape did more than close the list: stop here
            raise ActionError(f"pressed {key} to add {text!r}, but no item was added ({why}); Escape to close the "
                              "list changed the field, so it was not pressed again")
    await settle_motion(page)
    async with translate_errors(f"press {key}", MOTION_MAX_S):
        await page.keyboard.press(key)
    await settle_motion(page)
    if _did_nothing(before, await item_field(page, text), text):
        raise ActionError(f"pressed {key} twice{closed} to add {text!r}: the field still holds it and no item "
                          f"{text!r} was added; the widget does not take this value")
    logger.info("the first %s added no item %r (%s); pressed again%s", key, text, why, closed)
    return f" (the first {key} added no item: {why}; pressed again{closed})"
