"""Closed shadow roots declared in HTML (``<template shadowrootmode="closed">``), handed to the
observation through CDP.

listeners.js keeps every closed root the page makes with ``attachShadow``; a declared one is made by
the HTML parser, which calls no script, so no page script can reach it. The browser's own tools can:
``DOM.getDocument`` with ``pierce`` lists every shadow root with its mode, and each closed one is put
into the same WeakMap listeners.js fills, so the tree walks into it, the probe hits through it and
actions reach its elements as for any closed root.

Only pages that have them pay for it (a pierced document costs tens of milliseconds on a large page).
A frame's document is looked at once, in its source (the network response that loaded it: a bytes
search), and HTML a script parses later (``setHTMLUnsafe``, ``parseHTMLUnsafe``, ``document.write``)
raises a flag in the page that the observation's call answers with `SIGNAL` (listeners.js).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any
from weakref import WeakKeyDictionary

from playwright.async_api import BrowserContext, CDPSession, Frame, Page, Response
from playwright.async_api import Error as PlaywrightError

from webtask_core.browser.bounded import clean_up
from webtask_core.browser.failures import is_closed_error

__all__ = ["DeclaredRoots", "SIGNAL", "FLAG", "declares_closed_root"]

logger = logging.getLogger(__name__)

SIGNAL = "webtask:declared-closed-roots"  # what the observation's call returns instead of a pass
FLAG = "webtask.declaredRoots"  # the page's flag (listeners.js), lowered once the roots are kept
_CLOSED_TEMPLATE = re.compile(rb"""shadowrootmode\s*=\s*["']?closed""", re.IGNORECASE)

# Runs with `this` the closed root, in the main world of the root's own frame.
_KEEP = """function (host) {
  const roots = window[Symbol.for('webtask.closedRoots')];
  if (roots && roots.get(host) !== this) roots.set(host, this);
}"""
_LOWER_FLAG = f"() => {{ window[Symbol.for('{FLAG}')] = false; return document.readyState; }}"


def declares_closed_root(html: bytes) -> bool:
    """Whether an HTML source declares a closed shadow root."""
    return _CLOSED_TEMPLATE.search(html) is not None


def _closed_roots(node: dict[str, Any]) -> Iterator[tuple[int, int]]:
    """(host, root) backend node ids of every closed shadow root under `node` (iframes' documents in
    the same process included)."""
    stack = [node]
    while stack:
        current = stack.pop()
        for root in current.get("shadowRoots", ()):
            if root.get("shadowRootType") == "closed":
                yield current["backendNodeId"], root["backendNodeId"]
            stack.append(root)
        stack.extend(current.get("children", ()))
        if "contentDocument" in current:
            stack.append(current["contentDocument"])


class DeclaredRoots:
    """The declared closed roots of one browser context's frames, kept for the observation."""

    def __init__(self, context: BrowserContext) -> None:
        self._context = context
        # The response that loaded each frame's document, until that document is looked at.
        self._unread: WeakKeyDictionary[Frame, Response] = WeakKeyDictionary()
        context.on("response", self._response)

    def _response(self, response: Response) -> None:
        request = response.request
        if request.resource_type == "document":
            try:
                self._unread[request.frame] = response
            except PlaywrightError:  # a service worker's request belongs to no frame
                return

    async def before_pass(self, frame: Frame) -> None:
        """Keep the declared closed roots of `frame`'s document when its source has any (looked at
        once per document)."""
        response = self._unread.pop(frame, None)
        if response is None:
            return
        try:
            source = await response.body()
        except PlaywrightError as error:
            if is_closed_error(error) and frame.page.is_closed():
                raise
            # The body is gone (a redirect, an evicted or failed load): the page's own flag remains.
            logger.debug("no source for %s: %s", frame.url, error.message)
            return
        if declares_closed_root(source) and await self.keep(frame) == "loading":
            self._unread[frame] = response  # still parsing: its later roots on the next look

    async def keep(self, frame: Frame) -> str:
        """Put every closed root of `frame`'s document (and of same-process frames in it) into the
        page's WeakMap; lowers the page's flag. Returns the document's readyState."""
        state = str(await frame.evaluate(_LOWER_FLAG))
        session = await self._session(frame)
        try:
            document = await session.send("DOM.getDocument", {"depth": -1, "pierce": True})
            for host, root in _closed_roots(document["root"]):
                await self._keep_one(session, host, root)
        finally:
            await clean_up(session.detach())  # its DOM agent would follow every change of the page otherwise
        return state

    async def _session(self, frame: Frame) -> CDPSession:
        page: Page = frame.page
        if frame is page.main_frame:
            return await self._context.new_cdp_session(page)
        try:  # a frame from another site runs in a process (a CDP target) of its own
            return await self._context.new_cdp_session(frame)
        except PlaywrightError as error:
            if is_closed_error(error):
                raise
            return await self._context.new_cdp_session(page)  # part of its page's target

    @staticmethod
    async def _keep_one(session: CDPSession, host: int, root: int) -> None:
        group = {"objectGroup": "webtask-declared-roots"}
        try:
            host_object = (await session.send("DOM.resolveNode", {"backendNodeId": host, **group}))["object"]
            root_object = (await session.send("DOM.resolveNode", {"backendNodeId": root, **group}))["object"]
            await session.send("Runtime.callFunctionOn", {
                "objectId": root_object["objectId"], "functionDeclaration": _KEEP,
                "arguments": [{"objectId": host_object["objectId"]}], "silent": True,
            })
        except PlaywrightError as error:
            if is_closed_error(error):
                raise
            # The host left the page since the document was read: nothing of it to observe.
            logger.debug("declared closed root %s not kept: %s", root, error.message)
        finally:
            await clean_up(session.send("Runtime.releaseObjectGroup", group))
