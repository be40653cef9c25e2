"""Agent resources and browser lifecycle."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_helpers import fake_model

from webtask_core import Agent, WorkerStatus
from webtask_core.errors import ConfigError, ResourceError
from webtask_core.testing import ReplayPolicy, ToolUse


def test_agent_resources_are_validated_and_task_resources_win(photos: list[Path], tmp_path: Path):
    agent = Agent(llm=None)  # type: ignore[arg-type]  # no model call here
    agent.add_resource("listing_image_1", photos[0])
    assert agent.get_resource("listing_image_1").path == photos[0].resolve()
    with pytest.raises(ResourceError, match="no file"):
        agent.add_resource("gone", tmp_path / "missing.jpg")
    with pytest.raises(ResourceError, match="not a file"):
        agent.set_resources({"folder": tmp_path})
    assert agent.resources == ["listing_image_1"]  # a failed set_resources changes nothing
    agent.set_resources({"a": photos[0], "b": photos[1]})
    ctx = agent.set_task("Upload.", resources={"b": photos[0]})
    assert ctx.resources.lookup("b").path == photos[0].resolve() and ctx.resources.names() == ["a", "b"]
    agent.clear_resources()
    assert agent.resources == [] and agent.get_resource("a") is None
    with pytest.raises(ConfigError, match="browser"):
        Agent(llm=None, browser=object())  # type: ignore[arg-type]


async def test_async_with_launches_its_own_browser_and_always_closes_it(shop):
    async with fake_model(ReplayPolicy([ToolUse("click", {"element_id": "button-99"})])) as (_, llm):
        with pytest.raises(RuntimeError, match="boom"):
            async with Agent(llm, start_url=shop.url("/login")) as agent:
                browser = agent._runtime._own_browser  # the Chromium the agent launched
                result = await agent.do("Log in.", max_steps=1)
                assert result.status is WorkerStatus.max_steps
                assert "button-99" in result.feedback
                raise RuntimeError("boom")
    assert browser is not None and not browser.is_alive and agent._runtime._own_browser is None


async def test_a_given_session_stays_open(tab, shop):
    async with fake_model(ReplayPolicy([ToolUse("complete", {"feedback": "done"})])) as (_, llm):
        async with Agent(llm, browser=tab, start_url=shop.url("/login")) as agent:
            await agent.do("Look.")
    assert tab.is_alive
