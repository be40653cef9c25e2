"""Which document text typed now would reach: an element's frame, or the frame holding the focus.

Secrets limited to some hosts are checked against this document, not the tab: an allowed page can
embed a frame from any site (an ad, a widget, an injected phishing form), and a password typed into
it goes to that site.
"""

from __future__ import annotations

from playwright.async_api import Frame, Page

from webtask_core.errors import ActionError

__all__ = ["DEEP_ACTIVE", "document_url", "focused_frame"]

_MAX_DEPTH = 10  # frames nested deeper than this are not followed (and typing there is refused)
# The focused element, as `a`, through shadow roots (a widget's iframe can sit inside one; closed ones
# as listeners.js kept them).
DEEP_ACTIVE = (
    "const closed = window[Symbol.for('webtask.closedRoots')]; const rootOf = (n) => n.shadowRoot || (closed && closed.get(n));"
    " let a = document.activeElement; while (a && rootOf(a) && rootOf(a).activeElement) a = rootOf(a).activeElement;"
)
_FOCUS_IN_CHILD_FRAME = "() => { " + DEEP_ACTIVE + " return !!a && (a.tagName === 'IFRAME' || a.tagName === 'FRAME'); }"
_IS_FOCUSED = "(element) => { " + DEEP_ACTIVE + " return a === element; }"


def document_url(frame: Frame) -> str:
    """The URL whose host the frame's document belongs to: an about:blank or about:srcdoc frame
    takes its parent's (its content is the parent page's own), every other frame its own."""
    while frame.url.startswith("about:") and frame.parent_frame is not None:
        frame = frame.parent_frame
    return frame.url


async def focused_frame(page: Page) -> Frame:
    """The frame whose document has the keyboard focus (the main frame when no frame has it)."""
    frame = page.main_frame
    for _ in range(_MAX_DEPTH):
        if not await frame.evaluate(_FOCUS_IN_CHILD_FRAME):
            return frame
        for child in frame.child_frames:
            element = await child.frame_element()
            if await element.evaluate(_IS_FOCUSED):
                frame = child
                break
        else:
            raise ActionError("the keyboard focus is in a frame that could not be found; give the element_id to type into")
    raise ActionError(f"the keyboard focus is in frames nested more than {_MAX_DEPTH} deep; give the element_id to type into")
