"""The session carried between runs with one session key: cookies, last URL, and the conversation."""

from __future__ import annotations

import json

import pytest
from flow_helpers import (
    SHOP_PASSWORD,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    login_task,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)

from webtask_core.errors import SessionFormatError
from webtask_core.testing import MarketplaceListingPolicy
from webtask_core.testing.request_view import latest_page, latest_url, task_text
from webtask_flows.run_flow import run_webtask
from webtask_flows.run_result import webtask_result


async def test_second_run_is_still_logged_in_and_sees_the_first(flow_env, shop, shop_secret, monkeypatch):
    first_task = login_task(shop.url("/login"))
    async with fake_model_env(MarketplaceListingPolicy(login_only=True), monkeypatch) as server:
        first = await run_webtask(first_task, start_url=shop.url("/login"), session_key="shop-demo",
                                  secrets=shop_secret, return_state=True)
        first_requests = len(server.requests)
        # No start_url: the second run opens where the first ended, with its cookies.
        second = await run_webtask("Check that we are still logged in.\n```json\n"
                                   + json.dumps({"username": "demo", "password": "{{secret:shop_password}}"})
                                   + "\n```", session_key="shop-demo", secrets=shop_secret, return_state=True)
        request = server.requests[first_requests]  # the second run's first model request

    assert first.is_completed() and second.is_completed(), (first.message, second.message)
    assert first_requests == 2  # log in, then see the listings and complete
    assert latest_url(request) == shop.url("/listings")  # not bounced to /login: the cookie came along
    assert "Signed in as" in latest_page(request)
    assert task_text(request).startswith("Check that we are still logged in.")
    messages = json.dumps(request["messages"])
    assert "<previous_tasks>" in messages and "Log in to the marketplace." in messages
    assert SHOP_PASSWORD not in json.dumps(request)

    stored_text = (flow_env.sessions / "shop-demo.json").read_text()
    assert SHOP_PASSWORD not in stored_text  # the conversation and the final page keep placeholders
    stored = json.loads(stored_text)
    assert stored["last_url"] == shop.url("/listings") and stored["storage_state"]["cookies"]
    assert [t["task"] for t in stored["session"]["previous_tasks"]] == [first_task]
    result = await webtask_result(second)
    assert result.session_key == "shop-demo" and result.steps == 1


@pytest.mark.parametrize("content", [b"{not json", json.dumps({"schema_version": 99, "session": {}}).encode()])
async def test_corrupt_stored_session_fails_before_the_browser_and_is_left_alone(flow_env, shop, monkeypatch,
                                                                                 content):
    flow_env.sessions.mkdir(parents=True)
    file = flow_env.sessions / "broken-key.json"
    file.write_bytes(content)
    async with fake_model_env(MarketplaceListingPolicy(login_only=True), monkeypatch) as server:
        state = await run_webtask("Log in.", start_url=shop.url("/login"), session_key="broken-key",
                                  return_state=True)
        requests = server.requests

    assert state.is_failed() and state.name == "Failed"
    assert "broken-key" in state.message and str(file) in state.message
    with pytest.raises(SessionFormatError):
        await webtask_result(state)
    assert requests == [] and shop.request_log == []  # no model call, no page opened
    assert file.read_bytes() == content


async def test_two_runs_with_one_key_take_turns(flow_env, shop, monkeypatch):
    import asyncio

    from webtask_core.testing import ReplayPolicy, ToolUse

    done = ToolUse("complete", {"feedback": "done"})
    async with fake_model_env(ReplayPolicy([done, done]), monkeypatch) as server:
        results = await asyncio.gather(*(
            run_webtask(f"Task {name}.", start_url=shop.url("/login"), session_key="shared-key")
            for name in ("A", "B")
        ))
        first, second = (json.dumps(request["messages"]) for request in server.requests)

    assert all(result.ok for result in results)
    # The run that went second loaded the session the first one saved: they did not interleave.
    assert "<previous_tasks>" not in first and "<previous_tasks>" in second
    earlier = "Task A." if task_text(server.requests[1]) == "Task B." else "Task B."
    assert earlier in second
