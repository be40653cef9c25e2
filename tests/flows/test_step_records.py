"""A step's records (its artifact, what the run spent) are written while the next step runs; one that
cannot be written still fails the run, as it did when the step task wrote it itself."""

from __future__ import annotations

import asyncio
from typing import Any

from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    read_artifacts,
    shop,  # noqa: F401 (fixture)
)

import webtask_flows.steps as steps_module
from webtask_core.testing import ReplayPolicy, Reply, ToolUse
from webtask_flows import run_webtask


async def test_a_step_record_that_cannot_be_written_fails_the_run_and_names_why(flow_env, shop, monkeypatch):
    publish = steps_module.publish_step_artifact

    async def refusing_step_2(step: Any, **kwargs: Any) -> Any:
        if step.index == 2:
            raise RuntimeError("the artifact store refused step 2")
        return await publish(step, **kwargs)

    monkeypatch.setattr(steps_module, "publish_step_artifact", refusing_step_2)
    script = [ToolUse("navigate", {"url": shop.url("/help")}), ToolUse("navigate", {"url": shop.url("/login")}),
              ToolUse("navigate", {"url": shop.url("/help")}), ToolUse("complete", {"feedback": "Done."})]
    async with fake_model_env(ReplayPolicy(script), monkeypatch):
        state = await run_webtask("Read the help page twice.", start_url=shop.url("/login"), return_state=True)
    assert state.is_failed() and "the artifact store refused step 2" in (state.message or "")
    written = [a for a in await read_artifacts(str(state.state_details.flow_run_id)) if a.type == "markdown"]
    assert any((a.description or "").startswith("Step 1 ") for a in written)  # the one before it was written


async def test_a_run_failing_at_a_step_still_writes_the_step_before_s_artifact(flow_env, shop, monkeypatch):
    """The model API refuses the second call (401, not retried): the run fails at step 2 while step 1's
    artifact may still be on its way; it is written before the run ends."""
    publish = steps_module.publish_step_artifact

    async def slow_step_1(step: Any, **kwargs: Any) -> Any:
        if step.index == 1:
            await asyncio.sleep(1.0)  # still being written when step 2 fails
        return await publish(step, **kwargs)

    class RefusedAfterOneStep:
        server: Any = None

        def __call__(self, request: dict[str, Any]) -> Reply:
            self.server.inject("auth_error")
            return Reply(tool_uses=[ToolUse("navigate", {"url": shop.url("/help")})])

    monkeypatch.setattr(steps_module, "publish_step_artifact", slow_step_1)
    policy = RefusedAfterOneStep()
    async with fake_model_env(policy, monkeypatch) as server:
        policy.server = server
        state = await run_webtask("Read the help page.", start_url=shop.url("/login"), return_state=True)
    assert state.is_failed()
    written = [a for a in await read_artifacts(str(state.state_details.flow_run_id)) if a.type == "markdown"]
    assert any((a.description or "").startswith("Step 1 ") for a in written)
