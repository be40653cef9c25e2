"""Data that crosses the browser layer's boundary: its configuration and what an observation returns."""

from __future__ import annotations

import os
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from webtask_core.errors import ConfigError

__all__ = ["BrowserConfig", "ElementInfo", "TabInfo", "Observation", "DEFAULT_TREE_BUDGET_CHARS"]


def _from_env(name: str, default: float) -> Callable[[], float]:
    """A default read from the environment when a config is made, so deployments (the flows, which
    build BrowserConfig() themselves) can tune timeouts without code."""

    def read() -> float:
        raw = os.environ.get(name, "").strip()
        if not raw:
            return default
        try:
            return float(raw)
        except ValueError:
            raise ConfigError(name, f"must be a number of seconds, got {raw!r}") from None

    return read


# Characters of element tree per observation, ~6k tokens at ~4 characters a token. The tree sits in
# the last user message, so it is paid in full (uncached) on every step. 24,000 characters keep whole
# every form and product page we test on (the demo marketplace's pages are 300-1,300 characters, the
# bundled test pages under 1,300), and on a long listing table or feed still hold the screen plus
# two to four screens either side (a dense 1280x800 screen of table rows is ~5-8k characters), so
# the model rarely spends a step scrolling just to see what comes next. Untrimmed, the 10,000-element
# page of benchmarks/observe.py is ~148,600 characters (~37k tokens) a step.
DEFAULT_TREE_BUDGET_CHARS = 24_000


def _tree_budget_from_env() -> int | None:
    """WEBTASK_TREE_BUDGET_CHARS: a number of characters, or "none" for the whole page every time."""
    raw = os.environ.get("WEBTASK_TREE_BUDGET_CHARS", "").strip()
    if not raw:
        return DEFAULT_TREE_BUDGET_CHARS
    if raw.lower() == "none":
        return None
    try:
        return int(raw)
    except ValueError:
        raise ConfigError("WEBTASK_TREE_BUDGET_CHARS", f"must be a number of characters or 'none', got {raw!r}") from None


class BrowserConfig(BaseModel):
    """How to launch Chromium and how long any single browser operation may take."""

    model_config = ConfigDict(frozen=True, validate_default=True)

    headless: bool = True
    executable_path: str | None = None  # None: find_chromium()
    viewport: tuple[int, int] = (1280, 800)
    # Defaults: WEBTASK_ACTION_TIMEOUT_S, WEBTASK_NAVIGATION_TIMEOUT_S, WEBTASK_SETTLE_TIMEOUT_S, else these.
    action_timeout_s: float = Field(default_factory=_from_env("WEBTASK_ACTION_TIMEOUT_S", 5.0), gt=0, le=120)
    navigation_timeout_s: float = Field(default_factory=_from_env("WEBTASK_NAVIGATION_TIMEOUT_S", 20.0), gt=0, le=600)
    # Upper bound on waiting for load / network quiet after an action; never a fixed sleep.
    settle_timeout_s: float = Field(default_factory=_from_env("WEBTASK_SETTLE_TIMEOUT_S", 3.0), ge=0, le=60)
    extra_args: tuple[str, ...] = ()
    # Longest element tree an observation returns; a longer one keeps what is on and near the screen
    # and summarises the rest (docs/internals.md §2). None: always the whole page.
    tree_budget_chars: int | None = Field(default_factory=_tree_budget_from_env, ge=1_000)

    @field_validator("viewport")
    @classmethod
    def _positive_viewport(cls, value: tuple[int, int]) -> tuple[int, int]:
        width, height = value
        if width < 100 or height < 100:
            raise ValueError(f"viewport must be at least 100x100 pixels, got {width}x{height}")
        return value


class ElementInfo(BaseModel):
    """One interactive element of an observation, addressed by its id (e.g. ``input-0``)."""

    id: str
    tag: str
    frame_path: str = ""  # "" for the main frame, else an internal frame key ("f1", ...)
    role: str | None = None
    name: str | None = None  # the HTML name attribute
    type: str | None = None  # input type (or the type of the control a label stands for)
    text: str = ""  # visible text or label, truncated
    disabled: bool = False
    hidden: bool = False  # only hidden file inputs (upload targets) are kept while hidden
    attributes: dict[str, str] = Field(default_factory=dict)  # as the tree line shows them (href, placeholder, ...)
    context: tuple[str, ...] = ()  # the nearest enclosing tree lines, outermost first (`label "Price"`)


class TabInfo(BaseModel):
    index: int
    url: str
    title: str
    active: bool


class Observation(BaseModel):
    """What the model sees of the active tab at one moment."""

    url: str
    title: str
    tabs: list[TabInfo]
    tree: str  # the indented element tree (docs/internals.md §2)
    elements: dict[str, ElementInfo]  # every interactive id in `tree`
    scroll: str  # e.g. "scrolled 0% (page is 2.3 viewports tall)"
    # The main document's performance.timeOrigin: equal in two observations, the same document (a URL
    # its script changed with the history API, an autosave's create -> edit, is no new page load).
    document: float = 0.0
