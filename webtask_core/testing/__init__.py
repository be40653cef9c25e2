"""The offline model kit and the demo marketplace, shipped so users can test flows without an API key.

Names are imported lazily so `import webtask_core.testing` stays cheap and does not start anything.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "Reply",
    "ToolUse",
    "FakeAnthropicServer",
    "MarketplaceListingPolicy",
    "ReplayPolicy",
    "Marketplace",
]

_WHERE = {
    "Reply": "webtask_core.testing.replies",
    "ToolUse": "webtask_core.testing.replies",
    "FakeAnthropicServer": "webtask_core.testing.fake_anthropic",
    "MarketplaceListingPolicy": "webtask_core.testing.policies",
    "ReplayPolicy": "webtask_core.testing.policies",
    "Marketplace": "webtask_core.testing.marketplace",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
