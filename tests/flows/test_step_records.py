"""A step's records (its artifact, what the run spent) are written while the next step runs; one that
cannot be written still fails the run, as it did when the step task wrote it itself."""

from __future__ import annotations

from typing import Any

from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    read_artifacts,
    shop,  # noqa: F401 (fixture)
)

import webtask_flows.steps as steps_module
from webtask_core.testing import ReplayPolicy, ToolUse
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
