"""The browser layer: launch Chromium, observe a page as an element tree, act on element ids.

See docs/internals.md §2 for the contract.
"""

from webtask_core.browser.chromium import CHROMIUM_ARGS, ChromiumNotFound, find_chromium
from webtask_core.browser.launch import Browser
from webtask_core.browser.models import BrowserConfig, ElementInfo, Observation, TabInfo
from webtask_core.browser.runtime import BrowserRuntime, SharedBrowser
from webtask_core.browser.tab import BrowserTab

__all__ = [
    "Browser",
    "BrowserConfig",
    "BrowserTab",
    "BrowserRuntime",
    "SharedBrowser",
    "Observation",
    "ElementInfo",
    "TabInfo",
    "find_chromium",
    "ChromiumNotFound",
    "CHROMIUM_ARGS",
]
