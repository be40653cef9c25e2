"""How a task ends: max_steps, abort, and the stuck warning followed by the hard stop."""

from __future__ import annotations

from agent_helpers import fake_model, last_user_texts

from webtask_core import Agent, WorkerStatus
from webtask_core.testing import ReplayPolicy, Reply, ToolUse


def always(*uses: ToolUse):
    def policy(request: dict) -> Reply:
        return Reply(text="Trying again.", tool_uses=list(uses))

    return policy


async def test_a_model_that_never_completes_ends_with_max_steps(tab, shop):
    async with fake_model(always(ToolUse("scroll", {"direction": "down"}))) as (server, llm):
        agent = Agent(llm, browser=tab, start_url=shop.url("/login"))
        result = await agent.do("Find the help page.", max_steps=3)
        requests = server.requests
    assert result.status is WorkerStatus.max_steps
    assert result.steps == 3 and len(requests) == 3
    assert result.feedback.startswith("stopped after 3 steps without completing the task")
    assert "LAST step" in last_user_texts(requests[-1])[-1]
    assert agent.last_session.steps[-1].ended is WorkerStatus.max_steps


async def test_a_model_that_aborts_ends_aborted_with_its_reason(tab, shop):
    reason = "The log-in page shows a CAPTCHA."
    async with fake_model(ReplayPolicy([ToolUse("abort", {"reason": reason})])) as (_server, llm):
        agent = Agent(llm, browser=tab, start_url=shop.url("/login"))
        result = await agent.do("Log in.")
    assert result.status is WorkerStatus.aborted
    assert result.feedback == reason and result.steps == 1 and result.output is None


async def test_a_repeated_failing_click_warns_then_stops_the_run(tab, shop):
    async with fake_model(always(ToolUse("click", {"element_id": "button-99"}))) as (server, llm):
        agent = Agent(llm, browser=tab, start_url=shop.url("/login"))
        result = await agent.do("Log in.", max_steps=20)
        requests = server.requests
    assert result.status is WorkerStatus.aborted
    assert result.feedback.startswith("stuck: click button-99 failed 6 times: ")
    assert "button-99" in result.feedback[len("stuck: click button-99 failed 6 times: "):]
    assert len(requests) == 6
    histories = [last_user_texts(request)[-1] for request in requests]
    assert not any("STUCK" in history for history in histories[:3])
    assert "`click button-99` has failed 3 times" in histories[3]  # seen the step after the 3rd failure
    assert agent.last_session.steps[3].warnings
