"""Every kind of bad model reply becomes an error the model sees on the next step; nothing crashes."""

from __future__ import annotations

from agent_helpers import ListingOutput, error_results, fake_model, last_user_texts

from webtask_core import Agent, WorkerStatus
from webtask_core.history import StuckThresholds
from webtask_core.testing import ReplayPolicy, Reply, ToolUse
from webtask_core.worker import WorkerOptions

GOOD_OUTPUT = {"listing_url": "http://shop/listings/1", "sku": "SHOE-001"}

# (fault injected for this step or None, what the next request must show the model)
EXPECTED = [
    ("unknown_tool", "unknown tool 'not_a_tool_1'; the tools are: navigate, click"),
    (None, "invalid input for click: element_id: Field required"),
    (None, "invalid input for click: element_id: Input should be a valid string (got 5)"),
    (None, "button-99"),
    (None, "unknown resource 'nope'; available resources: none"),
    (None, "invalid output: sku: Field required"),
    (None, "complete refused: call set_output with a valid output first"),
    ("no_tool_call", "Your last reply called no tool"),
    ("empty", "Your last reply was empty"),
    ("malformed_input", "input for click must be a JSON object of its parameters, got a string"),
]

SCRIPT = [  # what the policy says on the steps it is asked (fault-only steps never reach it)
    ToolUse("click", {}),
    ToolUse("click", {"element_id": 5}),
    ToolUse("click", {"element_id": "button-99"}),
    ToolUse("upload", {"element_id": "input-0", "resources": ["nope"]}),
    Reply(tool_uses=[ToolUse("set_output", {"listing_url": "x"}), ToolUse("complete", {"feedback": "done"})]),
    ToolUse("complete", {"feedback": "done"}),
    ToolUse("click", {"element_id": "button-2"}),  # corrupted into a string by the malformed_input fault
    Reply(tool_uses=[ToolUse("set_output", GOOD_OUTPUT), ToolUse("complete", {"feedback": "done"})]),
]


async def test_bad_replies_are_errors_the_model_sees_next_step(tab, shop):
    async with fake_model(ReplayPolicy(SCRIPT)) as (server, llm):
        # The page never changes here: keep the unchanged-page stop out of the way.
        options = WorkerOptions(stuck=StuckThresholds(page_threshold=20))
        agent = Agent(llm, browser=tab, start_url=shop.url("/login"), options=options)
        agent.set_task("Report the listing.", max_steps=20, output_schema=ListingOutput)
        for number, (fault, _) in enumerate(EXPECTED):
            if fault:
                server.inject(fault)
            step, finished = await agent.run_step()
            assert not finished and step.index == number + 1
            assert step.error or not step.tool_calls[0].ok, step
        step, finished = await agent.run_step()
        requests = server.requests

    assert finished and agent.last_result.status is WorkerStatus.completed
    assert agent.last_result.output == ListingOutput(**GOOD_OUTPUT)
    for number, (_, expected) in enumerate(EXPECTED):
        shown = error_results(requests[number + 1]) + last_user_texts(requests[number + 1])
        assert any(expected in text for text in shown), (number, expected, shown)
    # a failed set_output skips the complete after it, and says so
    assert any("not run: an earlier call in this turn (set_output) failed" in text
               for text in error_results(requests[6]))
    # the history block carries the last error too
    assert "Last error (step 10): click" in last_user_texts(requests[10])[-1]
