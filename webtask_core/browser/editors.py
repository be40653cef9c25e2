"""fill on an editor, written with the editor's own means, then read back as the tree shows it.

A rich-text region (a contenteditable: CKEditor, Quill, Draftail, ProseMirror, TinyMCE's iframe body)
takes the tree's markdown-like notation (``**bold**``, lists, links...; rich_text.py): its content is
selected with the keyboard and replaced by a paste of the HTML that notation stands for, which the
editor turns into its own model as it does any paste (a page that ignores pastes gets the HTML
inserted as typing would). A code editor (CodeMirror 5 and 6, as in a markdown editor) takes the
text as is, typed in one go after a select-all. Either way the result says what the editor shows
afterwards; one that shows other text than asked is an error, never a success.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from playwright.async_api import ElementHandle

from webtask_core.browser import actions
from webtask_core.browser.actions import Target, quote_for_model
from webtask_core.browser.rich_text import same_text, to_html, to_plain
from webtask_core.browser.scripts import MARK_ATTRIBUTE, load_script
from webtask_core.errors import ActionError

__all__ = ["is_editor", "fill_editor"]

_SETTLE_S = 1.0  # for the editor to show what was written
_QUIET_S = 0.1  # ... and hold it that long (editors re-render once more after a paste)

# A paste of `html` (and its plain text) into the focused part of the editor; false when the page did
# not take it (no handler cancelled it), and the HTML was inserted as typing would.
_PASTE = """(el, [html, plain]) => {
  const doc = el.ownerDocument;
  let at = doc.activeElement;
  while (at && at.shadowRoot && at.shadowRoot.activeElement) at = at.shadowRoot.activeElement;
  const target = at && (el.contains(at) || at === el) ? at : el;
  const data = new DataTransfer();
  data.setData('text/html', html);
  data.setData('text/plain', plain);
  const event = new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true, composed: true});
  if (!target.dispatchEvent(event)) return true;
  doc.execCommand('insertHTML', false, html);
  return false;
}"""


def is_editor(target: Target) -> bool:
    return target.info.get("editor") is not None


# The marked element, held by a handle from here on (its mark may not survive the editor's rendering).
_MARKED = """([mark, id]) => (window[Symbol.for('webtask.marks')] || [])
  .find((n) => n.isConnected && n.getAttribute(mark) === id)"""


async def _shown(target: Target, element: ElementHandle) -> dict[str, Any]:
    shown = await element.evaluate(load_script("editor.js"))
    if shown is None:
        raise ActionError(f"{target.element_id} is gone: the page replaced it; use the ids of the current page state")
    return dict(shown)


async def _settled(target: Target, element: ElementHandle, before: str) -> dict[str, Any]:
    """What the editor shows once it changed from `before` and held still, or after _SETTLE_S."""
    deadline = time.monotonic() + _SETTLE_S
    last: dict[str, Any] | None = None
    since = 0.0
    while True:
        now = await _shown(target, element)
        moment = time.monotonic()
        if last is None or now["text"] != last["text"]:
            last, since = now, moment
        if (now["text"] != before and moment - since >= _QUIET_S) or moment >= deadline:
            return now
        await asyncio.sleep(0.03)


async def fill_editor(target: Target, text: str, timeout_s: float) -> str:
    """Replace what the editor holds with `text` (the tree's notation for a rich one) and say what it shows."""
    element_id = target.element_id
    target.require_enabled()
    if target.info["readonly"]:
        raise ActionError(f"{element_id} is read-only")
    element = (await target.frame.evaluate_handle(_MARKED, [MARK_ATTRIBUTE, element_id])).as_element()
    if element is None:
        raise ActionError(f"{element_id} is gone: the page replaced it; use the ids of the current page state")
    try:
        return await _write(target, element, text, timeout_s)
    finally:
        await element.dispose()


async def _write(target: Target, element: ElementHandle, text: str, timeout_s: float) -> str:
    element_id = target.element_id
    before = (await _shown(target, element))["text"]
    page = target.frame.page
    await actions.click(target, timeout_s)  # the caret goes in, as a person's click puts it
    await page.keyboard.press("ControlOrMeta+A")
    if not text:
        await page.keyboard.press("Delete")
    elif target.info["editor"] == "code":
        await page.keyboard.insert_text(text)
    else:
        await element.evaluate(_PASTE, [to_html(text), to_plain(text)])
    shown = await _settled(target, element, before)
    now = shown["text"]
    matches = now.rstrip("\n") == text.rstrip("\n") if shown["code"] else same_text(text, now)
    if not matches:
        raise ActionError(
            f"wrote into {element_id}, but it shows {quote_for_model(now, 200) if now else 'nothing'} instead of "
            f"{quote_for_model(text, 200)} (the editor changed or refused part of it)"
        )
    return f"filled {element_id} with {quote_for_model(text, 200)}; the editor shows it so"
