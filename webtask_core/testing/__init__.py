"""The offline model kit and the demo marketplace, shipped so users can test flows without an API key.

The model kit (FakeLLM in process, FakeAnthropicServer over HTTP, Reply/ToolUse, the policies, the
offline guard) needs only the base install; the demo marketplace needs the ``demo`` extra.

Names are imported lazily so `import webtask_core.testing` stays cheap and does not start anything.
"""

from __future__ import annotations

from webtask_core.lazy_exports import lazy_exports

__all__ = [
    "Reply",
    "ToolUse",
    "FakeAnthropicServer",
    "FakeLLM",
    "MarketplaceListingPolicy",
    "ReplayPolicy",
    "Marketplace",
    "offline_mode",
    "assert_offline",
]

_WHERE = {
    "Reply": "webtask_core.testing.replies",
    "ToolUse": "webtask_core.testing.replies",
    "FakeAnthropicServer": "webtask_core.testing.fake_anthropic",
    "FakeLLM": "webtask_core.testing.fake_llm",
    "MarketplaceListingPolicy": "webtask_core.testing.policies",
    "ReplayPolicy": "webtask_core.testing.policies",
    "Marketplace": "webtask_core.testing.marketplace",
    "offline_mode": "webtask_core.llm.guard",
    "assert_offline": "webtask_core.llm.guard",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
