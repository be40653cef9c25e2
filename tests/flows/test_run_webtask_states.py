"""Aborted and max-steps runs: named Failed states, their results for callers, events, the alert."""

from __future__ import annotations

from pathlib import Path

import pytest
from flow_helpers import (
    WebhookReceiver,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    listing_task,
    read_events_for,
    read_flow_run,
    shop,  # noqa: F401 (fixture)
)
from prefect import flow

from webtask_core.record import WorkerStatus
from webtask_core.testing import MarketplaceListingPolicy, ReplayPolicy, ToolUse
from webtask_flows.automations import create_automation_from_file, create_webhook_block
from webtask_flows.run_flow import run_webtask
from webtask_flows.run_result import WebtaskFailed, WebtaskResult, webtask_result

AUTOMATION_FILE = Path(__file__).parents[2] / "deployments" / "automations" / "webtask-aborted.yaml"


@flow
async def parent(task: str, start_url: str, max_steps: int) -> dict:
    """What a batch flow does: run the task as a subflow and read its result whatever its state."""
    state = await run_webtask(task, start_url=start_url, max_steps=max_steps, session_key="parent-key",
                              return_state=True)
    result = await webtask_result(state)
    return {"state": state.name, "message": state.message, "flow_run_id": str(state.state_details.flow_run_id),
            "result": result.model_dump(mode="json")}


async def test_aborted_run_ends_failed_aborted_and_its_result_reaches_the_parent(flow_env, shop, monkeypatch):
    task = listing_task(shop.url("/listings"), sku="SKU-NOPE")
    async with fake_model_env(MarketplaceListingPolicy(abort_on_sku=["SKU-NOPE"]), monkeypatch):
        seen = await parent(task, shop.url("/login"), 10)

    reason = "told to abort the listing of SKU SKU-NOPE"
    assert seen["state"] == "Aborted" and seen["message"] == reason
    assert seen["result"]["status"] == "aborted" and seen["result"]["feedback"] == reason
    assert seen["result"]["steps"] == 1 and seen["result"]["session_key"] == "parent-key"

    # Through the API, as after run_deployment: the state and the persisted result.
    flow_run = await read_flow_run(seen["flow_run_id"])
    assert flow_run.state.type.value == "FAILED" and flow_run.state.name == "Aborted"
    assert flow_run.state.message == reason and "Traceback" not in flow_run.state.message
    assert (await webtask_result(flow_run.state)).feedback == reason

    (event,) = await read_events_for(f"webtask.task.{seen['flow_run_id']}")
    assert event.event == "webtask.task.aborted"
    assert event.payload["reason"] == reason and event.payload["task"] == task
    assert event.payload["session_key"] == "parent-key" and event.payload["steps_used"] == 1


async def test_max_steps_run_ends_failed_maxsteps_and_a_direct_call_raises_with_the_result(flow_env, shop,
                                                                                          monkeypatch):
    script = [ToolUse("navigate", {"url": shop.url("/help")}), ToolUse("scroll", {"direction": "down"})]
    async with fake_model_env(ReplayPolicy(script), monkeypatch):
        with pytest.raises(WebtaskFailed) as caught:
            await run_webtask("Read the help page forever.", start_url=shop.url("/login"), max_steps=2)

    result = caught.value.result
    assert isinstance(result, WebtaskResult) and result.status is WorkerStatus.max_steps
    assert result.steps == 2 and str(caught.value) == f"MaxSteps: {result.feedback}"
    flow_run = await read_flow_run(result.flow_run_id)
    assert flow_run.state.name == "MaxSteps" and flow_run.state.message == result.feedback
    assert "stopped after 2 steps" in result.feedback
    (event,) = await read_events_for(f"webtask.task.{result.flow_run_id}")
    assert event.event == "webtask.task.max-steps" and event.payload["max_steps"] == 2


async def test_completed_run_emits_its_event(flow_env, shop, monkeypatch):
    async with fake_model_env(ReplayPolicy([ToolUse("complete", {"feedback": "Nothing to do."})]), monkeypatch):
        result = await run_webtask("Do nothing.", start_url=shop.url("/login"))
    assert isinstance(result, WebtaskResult) and result.ok and result.feedback == "Nothing to do."
    flow_run = await read_flow_run(result.flow_run_id)
    assert flow_run.state.name == "Completed" and flow_run.state.message == "Nothing to do."
    (event,) = await read_events_for(f"webtask.task.{result.flow_run_id}")
    assert event.event == "webtask.task.completed"


async def test_an_aborted_run_fires_the_alert_automation(flow_env, shop, monkeypatch):
    with WebhookReceiver() as webhook:
        await create_webhook_block("webtask-flow-alerts", webhook.url)
        await create_automation_from_file(AUTOMATION_FILE, notification_block="custom-webhook/webtask-flow-alerts")
        task = listing_task(shop.url("/listings"), sku="SKU-ALERT")
        async with fake_model_env(MarketplaceListingPolicy(abort_on_sku=["SKU-ALERT"]), monkeypatch):
            state = await run_webtask(task, start_url=shop.url("/login"), return_state=True)
        assert state.name == "Aborted"
        posts = await webhook.wait_for(lambda post: "SKU-ALERT" in post["body"])

    assert len(posts) == 1, "no alert reached the webhook within 60 s"
    assert "Reason: told to abort the listing of SKU SKU-ALERT" in posts[0]["body"]
    assert str(state.state_details.flow_run_id) in posts[0]["body"]
