"""What the model is told about where the page is scrolled and what a trimmed tree left out
(the tree itself is stitch_tree's, in tree.py; its summary and view-marker lines are written here)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TreeTrim", "VIEW_MARKERS", "describe_scroll", "describe_trim", "summary_line", "view_side"]


@dataclass(frozen=True)
class TreeTrim:
    """What a tree budget left out: the margin kept around the screen and the elided line counts."""

    margin: float  # viewport heights kept above and below the screen
    above: int
    above_interactive: int
    below: int
    below_interactive: int


def describe_trim(trim: TreeTrim) -> str:
    """The sentence telling the model the tree is trimmed, and how much lies where."""
    if trim.margin == 0:
        kept = "what is on screen"
    else:
        kept = f"{trim.margin:g} viewport{'' if trim.margin == 1 else 's'} above and below the screen"
    parts = []
    if trim.above:
        parts.append(f"{trim.above} elements above ({trim.above_interactive} interactive)")
    if trim.below:
        parts.append(f"{trim.below} {'' if trim.above else 'elements '}below ({trim.below_interactive} interactive)")
    return (f"page state trimmed to {kept}: {' and '.join(parts)} are left out "
            f"(see the '- … more' lines); scroll to see them")


def describe_scroll(scroll: dict[str, float] | None, trim: TreeTrim | None = None) -> str:
    """Where the viewport is, e.g. ``scrolled 40% (page is 2.3 viewports tall)``, and with `trim` what
    the tree leaves out."""
    position = _describe_position(scroll)
    return position if trim is None else f"{position}; {describe_trim(trim)}"


def _describe_position(scroll: dict[str, float] | None) -> str:
    if not scroll or not scroll.get("vh"):
        return "scroll position unknown"
    top, height, viewport = scroll["y"], scroll["h"], scroll["vh"]
    viewports = height / viewport
    if height <= viewport + 1:
        return "page fits in the viewport (no scrolling)"
    percent = round(100 * top / (height - viewport))
    return f"scrolled {max(0, min(100, percent))}% (page is {viewports:.1f} viewports tall)"


def summary_line(pad: str, side: int, lines: int, interactive: int, scroller: str | None) -> str:
    where = "above" if side < 0 else "below"
    inside = f" in {scroller}" if scroller else ""  # the scroll box to scroll, else the page
    return f"{pad}- … {lines} more {where}{inside} ({interactive} interactive)"


# The line where a scroll box's items go out of its view, or come back into it (tree.py's render).
VIEW_MARKERS = {-1: "(out of view above)", 0: "(in view)", 1: "(out of view below)"}


def view_side(positions: list[int | None], index: int, view: list[int]) -> int:
    """-1 if item `index` lies wholly above the scroll box's visible area, 1 below, else 0."""
    top, bottom = positions[2 * index], positions[2 * index + 1]
    if top is None or bottom is None:
        return 0
    if bottom <= view[0]:
        return -1
    return 1 if top >= view[1] else 0
