"""Playwright traces of a task's browser: every action, a screenshot film strip and DOM snapshots,
opened with ``playwright show-trace trace.zip`` (the trace viewer Playwright users debug with).

    tracer = TraceRecorder(folder, scrub=secrets.scrub)
    async with BrowserRuntime(tracer=tracer) as runtime:   # each tab it opens is traced
        ...
    tracer.parts  # one zip per browser context the task used (a tab reopened after a crash: two)

A trace holds what was typed: the ``fill`` calls' values, the DOM snapshots' input values (a
password field's too) and the request bodies (a login form's POST). Every text member of a saved
trace is scrubbed with ``scrub`` (``SecretValues.scrub``: the value as typed, URL-encoded and
JSON-escaped becomes its ``{{secret:NAME}}`` placeholder) before anyone can read it. The film strip
is pictures: password fields show dots, and so does a field a secret was typed into (the tools draw
it so); when a snapshot shows a secret anywhere else (a page echoing it as text), the film strip is
left out of that trace. Recording never fails a task: a trace that cannot be
started or saved is logged and left out.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

from webtask_core.browser.failures import first_line

if TYPE_CHECKING:
    from webtask_core.browser.tab import BrowserTab

__all__ = ["TraceRecorder", "TraceScrub", "scrub_trace"]

logger = logging.getLogger(__name__)

# Members that are pictures: never rewritten (a secret in them is pixels, not text).
_PICTURES = (".jpeg", ".jpg", ".png", ".webp", ".gif")


def scrub_trace(path: Path, scrub: Callable[[str], str]) -> TraceScrub:
    """Rewrite the trace zip at ``path`` with ``scrub`` applied to every text member. When a DOM
    snapshot shows a secret where a picture would show it too (as text, or in a field not drawn as
    dots), the film strip is left out of the trace: its frames are pixels nobody can scrub.
    Bytes that are not UTF-8 pass through unchanged (surrogateescape)."""
    result = TraceScrub()
    scrubbed = path.with_name(path.name + ".scrubbing")
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(scrubbed, "w", zipfile.ZIP_DEFLATED) as target:
        events = {name: source.read(name) for name in source.namelist() if name.endswith(".trace")}
        drop = any(_snapshots_show_a_secret(data, scrub) for data in events.values())
        result.film_strip_dropped = drop
        for info in source.infolist():
            if drop and info.filename.startswith(_FILM_STRIP):
                continue
            data = events[info.filename] if info.filename in events else source.read(info)
            if not info.filename.lower().endswith(_PICTURES):
                text = data.decode("utf-8", "surrogateescape")
                if drop and info.filename in events:
                    text = "".join(line for line in text.splitlines(keepends=True) if _FRAME_EVENT not in line)
                clean = scrub(text)
                result.changed += clean != text
                data = clean.encode("utf-8", "surrogateescape")
            target.writestr(info.filename, data)
    os.replace(scrubbed, path)
    return result


@dataclass
class TraceScrub:
    changed: int = 0  # text members that held a secret
    film_strip_dropped: bool = False


_FILM_STRIP = "screencast/"
_FRAME_EVENT = '"type":"screencast-frame"'


def _snapshots_show_a_secret(trace: bytes, scrub: Callable[[str], str]) -> bool:
    """Whether a DOM snapshot of this trace has a secret where the page draws it: in a text node,
    or an attribute, other than the value of a password field or of a field drawn as dots."""
    for line in trace.decode("utf-8", "replace").splitlines():
        if '"frame-snapshot"' not in line:
            continue
        try:
            html = json.loads(line)["snapshot"]["html"]
        except (ValueError, KeyError, TypeError):
            continue
        if _node_shows_a_secret(html, scrub):
            return True
    return False


def _node_shows_a_secret(node: Any, scrub: Callable[[str], str]) -> bool:
    # A snapshot node: a text (str), a reference to an earlier snapshot's node ([[i, j]]: seen
    # there), or [TAG, {attributes}, *children].
    if isinstance(node, str):
        return scrub(node) != node
    if not isinstance(node, list) or not node or not isinstance(node[0], str):
        return False
    has_attributes = len(node) > 1 and isinstance(node[1], dict)
    attributes: dict[str, Any] = node[1] if has_attributes else {}
    children = node[2:] if has_attributes else node[1:]
    drawn_as_dots = str(attributes.get("type", "")).lower() == "password" or "text-security" in str(
        attributes.get("style", ""))
    for name, value in attributes.items():
        hidden = drawn_as_dots and name in ("__playwright_value_", "value")
        if isinstance(value, str) and not hidden and scrub(value) != value:
            return True
    return any(_node_shows_a_secret(child, scrub) for child in children)


class TraceRecorder:
    """Traces each tab the runtime opens (``start``) until it closes it (``stop``), one zip per tab
    in ``folder``: ``trace.zip``, then ``trace-2.zip``... ``scrub`` cleans secrets out of each."""

    def __init__(self, folder: Path, *, scrub: Callable[[str], str] | None = None, screenshots: bool = True,
                 snapshots: bool = True, title: str = ""):
        self.folder = Path(folder)
        self.scrub = scrub
        self.screenshots = screenshots
        self.snapshots = snapshots
        self.title = title
        self.parts: list[Path] = []
        self.lost = 0  # tabs whose trace could not be saved (the browser died under them)
        self.film_strips_dropped = 0  # traces saved without their screenshots (a page showed a secret)
        self.save_ms = 0.0  # time spent saving and scrubbing, for the benchmarks
        # False once the owner knows nobody will keep the trace (a clean run under retain-on-failure):
        # ``stop`` then ends it without writing, zipping and scrubbing a file only to delete it.
        self.keep = True
        self.discarded = 0  # traces ended unsaved because of that
        self._traced: set[int] = set()

    def __repr__(self) -> str:
        return f"TraceRecorder({str(self.folder)!r}, parts={len(self.parts)})"

    @staticmethod
    def _context(tab: BrowserTab) -> Any:
        page = tab.page
        return page.context if page is not None else None

    async def start(self, tab: BrowserTab) -> None:
        context = self._context(tab)
        if context is None or id(tab) in self._traced:
            return
        try:
            await context.tracing.start(screenshots=self.screenshots, snapshots=self.snapshots, sources=False,
                                        title=self.title or None)
        except PlaywrightError as error:
            logger.warning("Not tracing this browser tab: %s", first_line(error))
            return
        self._traced.add(id(tab))

    async def group(self, tab: BrowserTab, title: str) -> None:
        """Open a group in the tab's trace (the viewer shows its actions under ``title``, e.g. a step)."""
        context = self._context(tab)
        if context is None or id(tab) not in self._traced:
            return
        try:
            await context.tracing.group(title)
        except PlaywrightError as error:
            logger.debug("No trace group %r: %s", title, first_line(error))

    async def group_end(self, tab: BrowserTab) -> None:
        context = self._context(tab)
        if context is None or id(tab) not in self._traced:
            return
        try:
            await context.tracing.group_end()
        except PlaywrightError as error:  # the tab was replaced meanwhile: its group went with it
            logger.debug("No trace group to end: %s", first_line(error))

    async def stop(self, tab: BrowserTab) -> Path | None:
        """Save the tab's trace (scrubbed) and return its path; None when it was not traced, lost, or
        not to be kept (``keep`` False)."""
        if id(tab) not in self._traced:
            return None
        self._traced.discard(id(tab))
        context = self._context(tab)
        if context is None or not tab.is_alive:
            self.lost += 1
            logger.warning("The trace of a browser tab that died was lost with it")
            return None
        started = time.perf_counter()
        if not self.keep:
            try:
                await context.tracing.stop()  # no path: Playwright drops what it recorded
            except PlaywrightError as error:
                logger.debug("Ending an unkept trace: %s", first_line(error))
            self.discarded += 1
            return None
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / ("trace.zip" if not self.parts else f"trace-{len(self.parts) + 1}.zip")
        try:
            await context.tracing.stop(path=str(path))
        except PlaywrightError as error:
            self.lost += 1
            logger.warning("The trace could not be saved: %s", first_line(error))
            return None
        if self.scrub is not None:
            scrubbed = await asyncio.to_thread(scrub_trace, path, self.scrub)
            if scrubbed.film_strip_dropped:
                self.film_strips_dropped += 1
                logger.warning("The trace %s has no film strip: the page showed a secret value where a picture "
                               "would show it (its DOM snapshots show the placeholder instead)", path.name)
        self.parts.append(path)
        self.save_ms += (time.perf_counter() - started) * 1000.0
        return path
