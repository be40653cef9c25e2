"""Turn the items each frame's observe.js pass returned into the indented text tree the model reads.

Frames are stitched where their <iframe> sits, and element ids are renumbered per tag in document
order across all frames (each frame's pass numbers its own elements from 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webtask_core.browser.models import ElementInfo

__all__ = ["FrameItems", "StitchedTree", "stitch_tree", "describe_scroll"]


@dataclass(frozen=True)
class FrameItems:
    """One frame's result: its key ("" for the main frame) and the items observe.js returned."""

    key: str
    items: list[Any]


@dataclass
class StitchedTree:
    text: str
    elements: dict[str, ElementInfo]
    # frame key -> {id observe.js stamped: final id}, only where the two differ
    renames: dict[str, dict[str, str]] = field(default_factory=dict)


def _quote(text: str) -> str:
    if '"' in text or "\\" in text:
        text = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _format_attributes(pairs: list[Any]) -> str:
    parts = []
    for index in range(0, len(pairs), 2):
        key, value = pairs[index], pairs[index + 1]
        parts.append(key if value is True else f"{key}={_quote(value)}")
    return " ".join(parts)


class _Stitcher:
    def __init__(self, frames: dict[str, FrameItems]):
        self.frames = frames
        self.lines: list[str] = []
        self.elements: dict[str, ElementInfo] = {}
        self.renames: dict[str, dict[str, str]] = {}
        self.counters: dict[str, int] = {}
        self.frame_counters: dict[str, dict[str, int]] = {}  # the numbering observe.js used per frame
        self.visited: set[str] = set()

    def render(self, items: list[Any], depth: int, frame_key: str) -> None:
        pad = "  " * depth
        lines = self.lines
        for item in items:
            if type(item) is str:
                lines.append(f"{pad}- text: {_quote(item)}")
            elif type(item) is list:
                self._element(item, depth, pad, frame_key)
            elif item["t"] == "iframe":
                self._frame(item, depth, pad)
            else:
                text = item.get("x")
                lines.append(f"{pad}- {item['t']} {_quote(text)}" if text else f"{pad}- {item['t']}")
                children = item.get("c")
                if children:
                    self.render(children, depth + 1, frame_key)

    def _element(self, item: list[Any], depth: int, pad: str, frame_key: str) -> None:
        tag, pairs, text, role = item[0], item[1], item[2], item[3]
        number = self.counters.get(tag, 0)
        self.counters[tag] = number + 1
        element_id = f"{tag}-{number}"
        local = self.frame_counters.setdefault(frame_key, {})
        local_number = local.get(tag, 0)
        local[tag] = local_number + 1
        if local_number != number:
            self.renames.setdefault(frame_key, {})[f"{tag}-{local_number}"] = element_id
        name = kind = None
        disabled = hidden = False
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
            line = f"{pad}- {element_id} ({_format_attributes(pairs)})"
        else:
            line = f"{pad}- {element_id}"
        self.lines.append(f"{line} {_quote(text)}" if text else line)
        # Plain validated construction is faster than model_construct for a model this small.
        self.elements[element_id] = ElementInfo(
            id=element_id, tag=tag, frame_path=frame_key, role=role or None, name=name, type=kind,
            text=text, disabled=disabled, hidden=hidden,
        )
        if len(item) > 4:
            self.render(item[4], depth + 1, frame_key)

    def _frame(self, item: dict[str, Any], depth: int, pad: str) -> None:
        title = item.get("x")
        self.lines.append(f"{pad}- iframe {_quote(title)}" if title else f"{pad}- iframe")
        key = item.get("k")
        child = self.frames.get(key) if key else None
        if child is not None and key not in self.visited:
            self.visited.add(key)
            self.render(child.items, depth + 1, key)


def stitch_tree(frames: dict[str, FrameItems]) -> StitchedTree:
    """Stitch every frame under its <iframe> line, starting at the main frame (key "")."""
    stitcher = _Stitcher(frames)
    main = frames.get("")
    if main is not None:
        stitcher.visited.add("")
        stitcher.render(main.items, 0, "")
    return StitchedTree(text="\n".join(stitcher.lines), elements=stitcher.elements, renames=stitcher.renames)


def describe_scroll(scroll: dict[str, float] | None) -> str:
    """Where the viewport is, e.g. ``scrolled 40% (page is 2.3 viewports tall)``."""
    if not scroll or not scroll.get("vh"):
        return "scroll position unknown"
    top, height, viewport = scroll["y"], scroll["h"], scroll["vh"]
    viewports = height / viewport
    if height <= viewport + 1:
        return "page fits in the viewport (no scrolling)"
    percent = round(100 * top / (height - viewport))
    return f"scrolled {max(0, min(100, percent))}% (page is {viewports:.1f} viewports tall)"
