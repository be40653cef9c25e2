"""Driving a BrowserTab the way the model does: tool calls through the default ToolRegistry."""

from __future__ import annotations

import itertools
from typing import Any

from webtask_core.browser import BrowserTab, Observation
from webtask_core.llm.types import ToolCall
from webtask_core.resources import ResourceSet
from webtask_core.tools import OutputSpec, StepState, ToolContext, ToolRegistry

_ids = itertools.count()


class ToolDriver:
    """Runs one tool call at a time, as one reply of the model, and returns (ok, message)."""

    def __init__(self, session: BrowserTab):
        self.session = session
        self.registry = ToolRegistry.default()

    async def call(self, name: str, **arguments: Any) -> tuple[bool, str]:
        ctx = ToolContext(tab=self.session, resources=ResourceSet(), output_spec=OutputSpec(), state=StepState())
        [outcome] = await self.registry.run_calls(
            [ToolCall(id=f"call-{next(_ids)}", name=name, input=arguments)], ctx, page_url=self.session.url
        )
        return outcome.ok, outcome.message

    async def ok(self, name: str, **arguments: Any) -> str:
        """The message of a call that must succeed."""
        ok, message = await self.call(name, **arguments)
        assert ok, f"{name}({arguments}) failed: {message}"
        return message

    async def error(self, name: str, **arguments: Any) -> str:
        """The message of a call that must fail (an error tool result, the loop goes on)."""
        ok, message = await self.call(name, **arguments)
        assert not ok, f"{name}({arguments}) should have failed but said: {message}"
        return message

    async def open(self, url: str) -> Observation:
        await self.ok("navigate", url=url)
        return await self.session.observe()
