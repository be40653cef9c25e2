"""Observing a page: one observe.js pass per frame, stitched into one tree with frame-aware ids."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from dataclasses import dataclass
from functools import cache

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Page

from webtask_core.browser.declared_roots import FLAG, SIGNAL, DeclaredRoots
from webtask_core.browser.failures import is_closed_error
from webtask_core.browser.motion import STILL_ARGS, still_first
from webtask_core.browser.scripts import FRAME_ATTRIBUTE, MARK_ATTRIBUTE, load_script
from webtask_core.browser.tree import FrameItems, StitchedTree, describe_scroll, stitch_tree

__all__ = ["PageSnapshot", "FrameRegistry", "snapshot_page", "init_script", "TEXT_MAX", "VALUE_MAX"]

logger = logging.getLogger(__name__)

TEXT_MAX = 100  # characters of text per line before "…"
VALUE_MAX = 100  # characters of an attribute value (value, href, placeholder ...)

_RESTAMP = """([mark, renames]) => {
  for (const el of window[Symbol.for('webtask.marks')] || []) {
    const id = el.getAttribute(mark);
    if (id !== null && Object.prototype.hasOwnProperty.call(renames, id)) el.setAttribute(mark, renames[id]);
  }
}"""
_STAMP_FRAME = "(el, [attribute, key]) => el.setAttribute(attribute, key)"

# The pass is compiled once per document and kept there, under a key naming this version of the
# script: a fresh copy per call runs cold (V8 keeps what it learnt per function object), which cost
# about a sixth of a large page's observation. A document without it (new, navigated) gets it on
# the first call that finds none (the context's init script puts it into every new document: see
# init_script). A page that parsed HTML declaring closed shadow roots since the
# last look answers `SIGNAL` instead (declared_roots.py).
_CALL = ("([key, options, flag, signal]) => { if (window[Symbol.for(flag)]) return signal;"
         " const pass = window[Symbol.for(key)]; return pass ? pass(options) : null; }")


@cache
def _installer() -> tuple[str, str]:
    source = load_script("observe.js")
    key = "webtask.observe." + hashlib.sha1(source.encode()).hexdigest()[:12]
    return key, f"([key, options]) => (window[Symbol.for(key)] = {source})(options)"


@cache
def init_script() -> str:
    """The pass kept in every new document before the page's code runs (a context's init script):
    the first look at a document then costs one round trip, not two (the call, then the install)."""
    key = _installer()[0]
    return f"window[Symbol.for({json.dumps(key)})] = {load_script('observe.js')};"


@dataclass
class PageSnapshot:
    url: str
    title: str
    document: float  # the main document's performance.timeOrigin
    tree: StitchedTree
    scroll: str
    frames: dict[str, Frame]  # frame key -> the Playwright frame its ids live in


class FrameRegistry:
    """Gives every child frame a stable key and stamps it on the <iframe> element once."""

    def __init__(self) -> None:
        self._keys: dict[Frame, str] = {}
        self._counter = 0

    def get(self, frame: Frame) -> str | None:
        return self._keys.get(frame)

    def key_of(self, frame: Frame) -> str:
        key = self._keys.get(frame)
        if key is None:
            self._counter += 1
            key = self._keys[frame] = f"f{self._counter}"
        return key

    async def stamp_new(self, frames: list[Frame]) -> None:
        """Stamp the <iframe> of each child frame not seen before with its key."""
        for frame in [f for f in self._keys if f.is_detached()]:
            del self._keys[frame]
        fresh = [frame for frame in frames if frame not in self._keys]
        if fresh:
            await asyncio.gather(*(self._stamp(frame) for frame in fresh))

    async def _stamp(self, frame: Frame) -> None:
        try:
            element = await frame.frame_element()
            try:
                await element.evaluate(_STAMP_FRAME, [FRAME_ATTRIBUTE, self.key_of(frame)])
            finally:
                await element.dispose()
        except PlaywrightError as error:
            if is_closed_error(error) and frame.page.is_closed():
                raise
            # The frame went away while we looked at it; it simply is not part of this observation.
            logger.debug("skipping frame %s: %s", frame.url, error.message)
            self._keys.pop(frame, None)


async def _observe_frame(frame: Frame, key: str, positions: bool = False, stamp: bool = True,
                         declared: DeclaredRoots | None = None, hold_still: bool = False) -> tuple[str, dict]:
    options = {
        "mark": MARK_ATTRIBUTE, "frameAttribute": FRAME_ATTRIBUTE, "textMax": TEXT_MAX, "valueMax": VALUE_MAX,
        "positions": positions, "stamp": stamp,
    }
    name, install = _installer()
    if declared is not None:
        await declared.before_pass(frame)
    if hold_still:  # the frame holds still first, in the same round trip as its pass
        raw = await frame.evaluate(still_first(_CALL), [STILL_ARGS, [name, options, FLAG, SIGNAL]])
    else:
        raw = await frame.evaluate(_CALL, [name, options, FLAG, SIGNAL])
    if raw == SIGNAL and declared is not None:
        await declared.keep(frame)
        raw = await frame.evaluate(_CALL, [name, options, FLAG, SIGNAL])
    if raw is None or raw == SIGNAL:
        raw = await frame.evaluate(install, [name, options])
    return key, json.loads(raw)


async def snapshot_page(page: Page, registry: FrameRegistry, tree_budget: int | None = None, *,
                        stamp: bool = True, declared: DeclaredRoots | None = None,
                        hold_still: bool = False) -> PageSnapshot:
    """One observe.js pass per frame (concurrently), stitched; restamps ids that were renumbered.
    `declared` hands the passes the closed shadow roots a frame's HTML declares. `hold_still`: each
    frame holds still first (motion.settle_motion's wait, in the pass's round trip).

    With `tree_budget` (characters) a longer tree is trimmed around the screen (tree.stitch_tree)
    and the scroll text says so. With `stamp=False` no mark on the page changes (the last
    observation's ids stay valid)."""
    main = page.main_frame
    children = [frame for frame in page.frames if frame is not main and not frame.is_detached()]
    if children:
        await registry.stamp_new(children)
    by_key: dict[str, Frame] = {"": main}
    for frame in children:
        key = registry.get(frame)
        if key is not None:
            by_key[key] = frame

    main_result = None
    results: dict[str, FrameItems] = {}
    outcomes = await asyncio.gather(
        *(_observe_frame(frame, key, tree_budget is not None, stamp, declared, hold_still)
          for key, frame in by_key.items()),
        return_exceptions=True,
    )
    for key, outcome in zip(by_key, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if key == "" or not isinstance(outcome, PlaywrightError):
                raise outcome
            if is_closed_error(outcome) and page.is_closed():
                raise outcome
            logger.debug("frame %s could not be observed: %s", key, outcome.message)
            continue
        _, data = outcome
        results[key] = FrameItems(key=key, items=data["items"], positions=data.get("pos"))
        if key == "":
            main_result = data

    assert main_result is not None  # the main frame either answered or raised above
    tree = stitch_tree(results, tree_budget, main_result["scroll"], main_result["url"])
    if tree.renames and stamp:
        keys = list(tree.renames)
        restamps = [by_key[key].evaluate(_RESTAMP, [MARK_ATTRIBUTE, tree.renames[key]]) for key in keys]
        for key, outcome in zip(keys, await asyncio.gather(*restamps, return_exceptions=True), strict=True):
            # A child frame that vanished since its pass leaves stale ids behind; actions report them.
            if isinstance(outcome, BaseException) and (key == "" or not isinstance(outcome, PlaywrightError)):
                raise outcome
    return PageSnapshot(
        url=main_result["url"],
        title=main_result["title"],
        document=float(main_result.get("document") or 0.0),
        tree=tree,
        scroll=describe_scroll(main_result["scroll"], tree.trim),
        frames=by_key,
    )
