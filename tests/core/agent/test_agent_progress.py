"""Agent(progress=...): what each step is doing as it happens, retries included."""

from __future__ import annotations

from agent_helpers import fake_model

from webtask_core import Agent, WorkerStatus
from webtask_core.progress import Phase, Progress
from webtask_core.testing import ReplayPolicy, ToolUse


async def test_progress_tells_each_phase_the_call_running_the_tokens_and_a_retry(browser, shop):
    script = [ToolUse("navigate", {"url": shop.url("/login")}), ToolUse("complete", {"feedback": "done"})]
    seen: list[Progress] = []
    async with fake_model(ReplayPolicy(script)) as (server, llm):
        server.inject("overloaded", times=3)  # one try and the SDK's two retries: then the agent retries
        agent = Agent(llm, browser=browser, retry_delay_s=0.01, progress=seen.append)
        try:
            result = await agent.do("Open the log-in page.", max_steps=3)
        finally:
            await agent.close()
    assert result.status is WorkerStatus.completed
    assert [(p.step, p.phase) for p in seen] == [
        (1, Phase.observing), (1, Phase.thinking), (1, Phase.retrying),
        (1, Phase.observing), (1, Phase.thinking), (1, Phase.acting),
        (2, Phase.observing), (2, Phase.thinking), (2, Phase.acting),
    ]
    assert all(p.max_steps == 3 for p in seen)
    assert "529" in seen[2].detail and "retry 1 of 2" in seen[2].detail
    assert seen[5].detail == f"navigate(url={shop.url('/login')!r})" and seen[8].detail == "complete(feedback='done')"
    # Tokens grow: none before the first answer, this step's reply counted while it acts.
    assert seen[1].tokens == 0 < seen[5].tokens == seen[6].tokens < seen[8].tokens == result.usage.total_tokens
