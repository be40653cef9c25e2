"""Turn the items each frame's observe.js pass returned into the indented text tree the model reads.

Frames are stitched where their <iframe> sits, and element ids are renumbered per tag in document
order across all frames (each frame's pass numbers its own elements from 0).

With a character budget, a tree that does not fit is trimmed by distance from the screen: everything
within a margin of the viewport stays in full, farther runs of sibling items become one summary line
each (``- … 412 more below (87 interactive)``; ``in div-0`` names a scroll box to scroll; where an inner
container's rest and the rest around it both lie below, one line at the outer depth counts both). The margin is the
widest rung of MARGINS whose tree fits; the screen itself is never trimmed. Ids keep their full-tree
numbers (a kept row has the same id wherever the page is scrolled); elided elements get no entry in
``elements``, so acting on one is an unknown id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webtask_core.browser.links import LinkShortener
from webtask_core.browser.models import ElementInfo
from webtask_core.browser.scroll_text import VIEW_MARKERS, TreeTrim, describe_scroll, describe_trim, summary_line, view_side
from webtask_core.browser.tree_lines import quote as _quote
from webtask_core.browser.tree_lines import text_line as _text_line

__all__ = ["FrameItems", "StitchedTree", "TreeTrim", "MARGINS", "stitch_tree", "describe_scroll", "describe_trim"]

# Viewport heights kept above and below the screen, widest first; the first whose tree fits wins.
# The widest is 1,000 px at the default 800 px viewport: the region browser-use reads (issue 29;
# 4 viewports gave a model 2x its text on long pages for rows it could only reach by scrolling).
MARGINS: tuple[float, ...] = (1.25, 1.0, 0.5, 0.25, 0.0)


@dataclass(frozen=True)
class FrameItems:
    """One frame's result: its key ("" for the main frame) and the items observe.js returned.

    `positions` (with a budget): two numbers per item, top and bottom in CSS pixels from the frame's
    viewport top, or None, None for an item that must never be elided."""

    key: str
    items: list[Any]
    positions: list[int | None] | None = None


@dataclass
class StitchedTree:
    text: str
    elements: dict[str, ElementInfo]
    # frame key -> {id observe.js stamped: final id}, only where the two differ
    renames: dict[str, dict[str, str]] = field(default_factory=dict)
    trim: TreeTrim | None = None  # None: the whole page is in the tree


def _format_attributes(pairs: list[Any], links: LinkShortener | None, text: str, main_frame: bool, tag: str) -> str:
    parts = []
    for index in range(0, len(pairs), 2):
        key, value = pairs[index], pairs[index + 1]
        if key[0] == "_":  # for replay's checks, not for the model (observe_names.js)
            continue
        if key == "type" and value == "text" and tag == "input":  # the default: an input says nothing else
            continue
        if key == "href" and links is not None:  # only what the URL says (links.py)
            value = links.show(value, text, main_frame)
            if value is None:
                continue
        parts.append(key if value is True else f"{key}={_quote(value)}")
    return " ".join(parts)


_CONTEXT_KEPT = 3  # enclosing lines an element remembers (see _Stitcher.context)

def _one_line(item: Any) -> bool:
    if type(item) is str:
        return True
    if type(item) is list:
        return len(item) <= 4
    return item["t"] != "iframe" and not item.get("c")


class _Stitcher:
    """One rendering of the frames; with `window` (top, bottom in main-viewport pixels) items lying
    wholly outside it are elided in runs.

    `full`: the full rendering, already run. Every rendering numbers the same elements in the same
    order, so a trimmed one takes its ids and renames from there, and the line counts of elided items
    are shared between the trimmed renderings (`skipped`) instead of walking them again for each."""

    def __init__(self, frames: dict[str, FrameItems], window: tuple[float, float] | None = None,
                 forced: frozenset[int] = frozenset(), full: _Stitcher | None = None,
                 skipped: dict[int, tuple[int, int]] | None = None, collect: bool = True,
                 links: LinkShortener | None = None):
        self.frames = frames
        self.links: LinkShortener | None = full.links if full is not None else links
        self.collect = collect  # build `found` (a rendering only measured for its length needs none)
        self.window = window
        self.forced = forced  # id() of items holding a frame that holds an item that must stay
        self.lines: list[str] = []
        self.found: list[tuple[Any, ...]] = []  # ElementInfo fields, built only for the chosen rendering
        # id() of an element item -> its id; taken from `full` when given, else filled while numbering.
        self.ids: dict[int, str] = full.ids if full is not None else {}
        self.known = full is not None
        # id() of an elided item -> its lines and interactive elements.
        self.skipped = skipped if skipped is not None else {}
        self.renames: dict[str, dict[str, str]] = full.renames if full is not None else {}
        self.counters: dict[str, int] = {}
        self.frame_counters: dict[str, dict[str, int]] = {}  # the numbering observe.js used per frame
        self.visited: set[str] = set()
        self.elided = [0, 0, 0, 0]  # lines above, interactive above, lines below, interactive below
        # The last "more below" line: (its index, scroll box, depth, lines, interactive); see _summary.
        self.last_below: tuple[int, tuple[str, str | None], int, int, int] | None = None
        # The lines enclosing the item being rendered (`label "Price"`, `form`, `a-3 "Shoes"`): each
        # element keeps its nearest few, so it can be recognised again on a later visit (replay).
        self.context: list[str] = []
        # (line index, where a form="..." would go, whether it goes inside shown attributes, the form's
        # action) of each form control rendered
        self.form_lines: list[tuple[int, int, bool, str]] = []

    def run(self) -> _Stitcher:
        """Stitch every frame under its <iframe> line, starting at the main frame (key "")."""
        main = self.frames.get("")
        if main is not None:
            self.visited.add("")
            self.render(main.items, main.positions, 0, "", 0.0, None)
        return self

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def _tell_forms_apart(self) -> None:
        """Two controls whose lines read the same but submit different forms (a "Submit" that
        publishes, one that saves a draft) show where each form goes: ``form="/drafts"``."""
        by_line: dict[str, list[tuple[int, int, bool, str]]] = {}
        for entry in self.form_lines:
            line = self.lines[entry[0]]
            by_line.setdefault(line[line.index("- ") + 2:].split(" ", 1)[-1] if " " in line.strip() else "", []).append(entry)
        for same in by_line.values():
            if len(same) < 2 or len({entry[3] for entry in same}) < 2:
                continue
            for index, at, inside, action in same:
                line, shown = self.lines[index], f"form={_quote(action)}"
                self.lines[index] = line[:at] + (f" {shown}" if inside else f" ({shown})") + line[at:]

    def result(self, trim: TreeTrim | None = None) -> StitchedTree:
        self._tell_forms_apart()
        elements = {
            found[0]: ElementInfo(
                id=found[0], tag=found[1], frame_path=found[2], role=found[3], name=found[4], type=found[5],
                text=found[6], disabled=found[7], hidden=found[8], attributes=found[9], context=found[10],
            )
            for found in self.found
        }
        return StitchedTree(text=self.text, elements=elements, renames=self.renames, trim=trim)

    def render(
        self, items: list[Any], positions: list[int | None] | None, depth: int, frame_key: str,
        offset: float, scroller: str | None, view: list[int] | None = None,
    ) -> None:
        """Render sibling items; with `view` (the visible top and bottom of the scroll box they are in)
        a marker line goes where the items go out of the box's view or come back into it."""
        pad = " " * depth  # one character per level (docs/internals.md §2)
        window = self.window if positions is not None else None
        if positions is None:
            view = None
        run: list[Any] = []  # consecutive elided siblings on one side of the window
        run_side = 0
        shown = 0  # which side of the scroll box's view the last item lies on
        for index, item in enumerate(items):
            where = 0 if view is None or positions is None else view_side(positions, index, view)
            if where != shown:
                if run:
                    self._elide(run, run_side, depth, pad, frame_key, scroller)
                    run = []
                self.lines.append(f"{pad}- {VIEW_MARKERS[where]}")
                shown = where
            if window is not None and positions is not None:  # (window is None when positions is)
                top, bottom = positions[2 * index], positions[2 * index + 1]
                side = 0
                if top is not None and bottom is not None:  # both or neither, as in view_side
                    if bottom + offset < window[0]:
                        side = -1
                    elif top + offset > window[1]:
                        side = 1
                    if side and id(item) in self.forced:
                        side = 0
                if side:
                    if side != run_side and run:
                        self._elide(run, run_side, depth, pad, frame_key, scroller)
                        run = []
                    run_side = side
                    run.append(item)
                    continue
                if run:
                    self._elide(run, run_side, depth, pad, frame_key, scroller)
                    run = []
            # Inside an item out of the box's view everything is: no more markers down there.
            self._item(item, depth, pad, frame_key, offset, scroller, view if where == 0 else None)
        if run:
            self._elide(run, run_side, depth, pad, frame_key, scroller)

    def _item(
        self, item: Any, depth: int, pad: str, frame_key: str, offset: float, scroller: str | None,
        view: list[int] | None = None,
    ) -> None:
        if type(item) is str:
            self.lines.append(f"{pad}{_text_line(item)}")
        elif type(item) is list:
            self._element(item, depth, pad, frame_key, offset, scroller, view)
        elif item["t"] == "iframe":
            self._frame(item, depth, pad, offset)
        else:
            text = item.get("x")
            head = f"{item['t']} {_quote(text)}" if text else item["t"]
            self.lines.append(f"{pad}- {head}")
            children = item.get("c")
            if children:
                self.context.append(head)
                self.render(children, item.get("p"), depth + 1, frame_key, offset, scroller, view)
                self.context.pop()

    def _elide(self, run: list[Any], side: int, depth: int, pad: str, frame_key: str, scroller: str | None) -> None:
        """Replace a run of siblings by one summary line, unless it is one line: that is shorter."""
        if len(run) == 1 and _one_line(run[0]):
            self._item(run[0], depth, pad, frame_key, 0.0, scroller)
            return
        lines = interactive = 0
        for item in run:
            # Another rung may elide the same item: count it once (unless it holds frames, whose
            # stitching the count also records).
            counted = self.skipped.get(id(item))
            if counted is None:
                counted = self._skip(item, frame_key)
                if len(self.frames) == 1:
                    self.skipped[id(item)] = counted
            lines += counted[0]
            interactive += counted[1]
        self._summary(pad, side, lines, interactive, scroller, frame_key)

    def _summary(self, pad: str, side: int, lines: int, interactive: int, scroller: str | None, frame_key: str) -> None:
        at = 0 if side < 0 else 2
        self.elided[at] += lines
        self.elided[at + 1] += interactive
        last = self.last_below
        scrolled = (frame_key, scroller)
        if side > 0 and last is not None and last[0] == len(self.lines) - 1 and last[1] == scrolled \
                and last[2] > len(pad):
            # The rest of an inner container and the rest around it lie below alike, scrolled the
            # same way (same frame, same scroll box): one line at the outer depth counts both.
            self.lines.pop()
            lines += last[3]
            interactive += last[4]
        self.lines.append(summary_line(pad, side, lines, interactive, scroller))
        self.last_below = (len(self.lines) - 1, scrolled, len(pad), lines, interactive) if side > 0 else None

    def _number(self, tag: str, frame_key: str) -> str:
        number = self.counters.get(tag, 0)
        self.counters[tag] = number + 1
        element_id = f"{tag}-{number}"
        local = self.frame_counters.setdefault(frame_key, {})
        local_number = local.get(tag, 0)
        local[tag] = local_number + 1
        if local_number != number:
            self.renames.setdefault(frame_key, {})[f"{tag}-{local_number}"] = element_id
        return element_id

    def _skip(self, item: Any, frame_key: str) -> tuple[int, int]:
        """Number an elided item's elements (ids stay those of the full tree); count its lines."""
        if type(item) is str:
            return 1, 0
        lines, interactive = 1, 0
        if type(item) is list:
            if not self.known:
                self.ids[id(item)] = self._number(item[0], frame_key)
            interactive = 1
            children = item[4] if len(item) > 4 else None
        elif item["t"] == "iframe":
            key = item.get("k")
            child = self.frames.get(key) if key else None
            children = None
            if child is not None and key not in self.visited:
                self.visited.add(key)
                frame_key, children = key, child.items
        else:
            children = item.get("c")
        if children:
            for child_item in children:
                counted = self._skip(child_item, frame_key)
                lines += counted[0]
                interactive += counted[1]
        return lines, interactive

    def _element(
        self, item: list[Any], depth: int, pad: str, frame_key: str, offset: float, scroller: str | None,
        view: list[int] | None = None,
    ) -> None:
        tag, pairs, text, role = item[0], item[1], item[2], item[3]
        if self.known:
            element_id = self.ids[id(item)]
        else:
            element_id = self.ids[id(item)] = self._number(tag, frame_key)
        name = kind = None
        disabled = hidden = scrollable = False
        if pairs:
            for index in range(0, len(pairs), 2):
                key = pairs[index]
                if key == "type":
                    kind = pairs[index + 1]
                elif key == "name":
                    name = pairs[index + 1]
                elif key == "disabled":
                    disabled = True
                elif key == "hidden":
                    hidden = True
                elif key == "scrollable":
                    scrollable = True
            shown = _format_attributes(pairs, self.links, text or "", frame_key == "", tag)
            line = f"{pad}- {element_id} ({shown})" if shown else f"{pad}- {element_id}"
        else:
            shown = ""
            line = f"{pad}- {element_id}"
        self.lines.append(f"{line} {_quote(text)}" if text else line)
        if self.collect:
            attributes = {pairs[i]: str(pairs[i + 1]) for i in range(0, len(pairs), 2)} if pairs else {}
            if "_action" in attributes:  # a control of a form: see _tell_forms_apart
                # where a form="..." goes: before the attributes' ")", else after the id
                at = len(pad) + 2 + len(element_id) + (2 + len(shown) if shown else 0)
                self.form_lines.append((len(self.lines) - 1, at, bool(shown), attributes["_action"]))
            self.found.append((element_id, tag, frame_key, role or None, name, kind, text, disabled, hidden,
                               attributes, tuple(self.context[-_CONTEXT_KEPT:])))
        if len(item) > 4:
            positions = item[5] if len(item) > 5 else None
            if len(item) > 6:  # a scroll box: its own view, for the items inside it
                view = item[6]
            self.context.append(f"{tag} {_quote(text)}" if text else tag)
            self.render(item[4], positions, depth + 1, frame_key, offset, element_id if scrollable else scroller, view)
            self.context.pop()

    def _frame(self, item: dict[str, Any], depth: int, pad: str, offset: float) -> None:
        title = item.get("x")
        head = f"iframe {_quote(title)}" if title else "iframe"
        self.lines.append(f"{pad}- {head}")
        key: str = item.get("k") or ""
        child = self.frames.get(key) if key else None
        if child is not None and key not in self.visited:
            self.visited.add(key)
            # The child frame measured from its own viewport: shift it to where the <iframe> sits.
            self.context.append(head)
            self.render(child.items, child.positions, depth + 1, key, offset + item.get("y", 0), None)
            self.context.pop()


def _holds_frame(items: list[Any], holding: set[str], forced: set[int]) -> bool:
    """Add to `forced` every item on the way to an <iframe> of a frame in `holding`."""
    found = False
    for item in items:
        if type(item) is dict:
            if item["t"] == "iframe":
                inside = item.get("k") in holding
            else:
                inside = bool(item.get("c")) and _holds_frame(item["c"], holding, forced)
        elif type(item) is list:
            inside = len(item) > 4 and _holds_frame(item[4], holding, forced)
        else:
            continue
        if inside:
            forced.add(id(item))
            found = True
    return found


def _forced_items(frames: dict[str, FrameItems]) -> frozenset[int]:
    """Items that must stay because a frame inside them holds a must-stay item (a hidden file input;
    its parent frame's pass cannot know). Usually none: then no walk at all."""
    holding = {key for key, frame in frames.items() if key and frame.positions is not None and None in frame.positions}
    forced: set[int] = set()
    while holding:
        found = {key for key, frame in frames.items() if _holds_frame(frame.items, holding, forced)} - holding
        if not found - {""}:
            break
        holding |= found  # a frame holding such a frame holds one too: its own <iframe> must stay
    return frozenset(forced)


def _estimated_rung(size: int, budget: int, scroll: dict[str, float]) -> int:
    """The widest margin whose tree would fit if the content were spread evenly down the page."""
    top, height, viewport = scroll["y"], max(scroll["h"], scroll["vh"]), scroll["vh"]
    for index, margin in enumerate(MARGINS):
        shown = min(height, top + viewport * (1 + margin)) - max(0.0, top - viewport * margin)
        if size * shown / height <= budget:
            return index
    return len(MARGINS) - 1


def stitch_tree(
    frames: dict[str, FrameItems], budget: int | None = None, scroll: dict[str, float] | None = None,
    page_url: str | None = None,
) -> StitchedTree:
    """Stitch every frame under its <iframe> line, starting at the main frame (key "").
    Links show only what their URL says (links.py; `page_url`: the main frame's, for its origin).

    With `budget` (characters) and the main frame's `scroll` ({y, h, vh}), a tree longer than the
    budget is trimmed around the screen (see the module docstring); frames need their positions."""
    main = frames.get("")
    links = LinkShortener(frames, page_url)

    def whole() -> StitchedTree:
        return _Stitcher(frames, links=links).run().result()

    if budget is None or not scroll or not scroll.get("vh") or main is None or main.positions is None:
        return whole()
    # Usually the full tree is only measured (and numbered) here; if it is the answer, it is
    # rendered again for its elements: it is then within the budget, or rarely all on screen.
    full = _Stitcher(frames, collect=False, links=links).run()
    size = len(full.text)
    if size <= budget:
        return whole()
    viewport = scroll["vh"]
    forced = _forced_items(frames)
    skipped: dict[int, tuple[int, int]] = {}

    def attempt(index: int) -> _Stitcher:
        margin = MARGINS[index]
        return _Stitcher(frames, (-margin * viewport, viewport * (1 + margin)), forced, full, skipped).run()

    index = _estimated_rung(size, budget, scroll)
    chosen = attempt(index)
    if len(chosen.text) <= budget:
        while index > 0:  # the estimate may be cautious: widen while it still fits
            wider = attempt(index - 1)
            if len(wider.text) > budget:
                break
            chosen, index = wider, index - 1
    else:
        while index < len(MARGINS) - 1:  # the last rung is the screen alone: kept even over budget
            index += 1
            chosen = attempt(index)
            if len(chosen.text) <= budget:
                break
    above, above_interactive, below, below_interactive = chosen.elided
    if not above and not below:
        return whole()  # everything is on screen: nothing to leave out
    return chosen.result(TreeTrim(MARGINS[index], above, above_interactive, below, below_interactive))
