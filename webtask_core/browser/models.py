"""Data that crosses the browser layer's boundary: its configuration and what an observation returns."""

from __future__ import annotations

import os
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from webtask_core.errors import ConfigError

__all__ = ["BrowserConfig", "ElementInfo", "TabInfo", "Observation"]


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
