"""Transient faults inside a run: the step task retries, and a dead browser is relaunched."""

from __future__ import annotations

import pytest
from flow_helpers import (
    KillBrowserAt,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    login_task,
    read_task_runs,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)

from webtask_core.errors import PermanentModelError
from webtask_core.testing import MarketplaceListingPolicy, ReplayPolicy, ToolUse
from webtask_core.testing.request_view import latest_page, latest_url
from webtask_flows.run_flow import run_webtask
from webtask_flows.run_result import webtask_result


class OverloadAfter:
    """Answers with ``policy``; after answering request ``at``, queues 529s for the next requests:
    one more than the SDK retries, so the next step's model call fails and its task must retry."""

    def __init__(self, policy, at: int, faults: int = 3):
        self.policy, self.at, self.faults, self.calls = policy, at, faults, 0
        self.server = None

    def __call__(self, request):
        self.calls += 1
        if self.calls == self.at:
            self.server.inject("overloaded", times=self.faults)
        return self.policy(request)


async def test_overloaded_model_beyond_sdk_retries_retries_the_step_task(flow_env, shop, monkeypatch):
    script = [
        ToolUse("navigate", {"url": shop.url("/login")}),
        ToolUse("navigate", {"url": shop.url("/help")}),
        ToolUse("complete", {"feedback": "Read the help page."}),
    ]
    policy = OverloadAfter(ReplayPolicy(script), at=1)
    async with fake_model_env(policy, monkeypatch) as server:
        policy.server = server
        state = await run_webtask("Read the help page.", start_url=shop.url("/login"), max_steps=5,
                                  return_state=True)
        statuses = [exchange.status for exchange in server.exchanges]

    assert state.is_completed(), state.message
    assert statuses == [200, 529, 529, 529, 200, 200]  # step 2: one try + the SDK's two retries, then a retry
    result = await webtask_result(state)
    assert result.steps == 3 and result.step_retries == 1
    assert [t.attempts for t in result.step_timings] == [1, 2, 1]

    runs = await read_task_runs(state.state_details.flow_run_id, expected=3)
    assert [(run.name.split(" · ")[0], run.run_count, run.state.name) for run in runs] == [
        ("step 1", 1, "Completed"), ("step 2", 2, "Completed"), ("step 3", 1, "Completed")]
    assert runs[1].name == "step 2 · navigate " + shop.url("/help")  # named after the retry that worked


async def test_browser_killed_mid_run_is_relaunched_still_logged_in(flow_env, shop, shop_secret, monkeypatch):
    """Step 1 logs in. Chromium is killed while the model answers step 2: its navigation fails,
    the step task retries, relaunches Chromium with step 1's cookies at step 1's URL, and asks the
    model again, which now sees the shop logged in."""
    log_in = MarketplaceListingPolicy(login_only=True)
    script = ReplayPolicy([
        ToolUse("navigate", {"url": shop.url("/listings/new")}),  # request 2: Chromium is killed meanwhile
        ToolUse("navigate", {"url": shop.url("/listings/new")}),  # request 3: step 2 retried
        ToolUse("complete", {"feedback": "The new listing form is open."}),
    ])
    policy = KillBrowserAt(lambda request: log_in(request) if len(server.exchanges) == 1 else script(request), at=2)
    async with fake_model_env(policy, monkeypatch) as server:
        state = await run_webtask(login_task(shop.url("/login")), start_url=shop.url("/login"), max_steps=6,
                                  secrets=shop_secret, return_state=True)
        requests = server.requests

    assert policy.killed == 1
    assert state.is_completed(), state.message
    result = await webtask_result(state)
    assert result.browser_relaunches == 1 and result.step_retries == 1 and result.steps == 3
    assert [t.attempts for t in result.step_timings] == [1, 2, 1]
    assert len(requests) == 4  # step 2 asked the model twice; nothing was recorded twice
    assert latest_url(requests[2]) == shop.url("/listings")  # the relaunched browser went back there
    assert "Signed in as" in latest_page(requests[2])  # with the cookies of before the crash
    assert latest_url(requests[3]) == shop.url("/listings/new")
    runs = await read_task_runs(state.state_details.flow_run_id, expected=3)
    assert [(run.name.split(" · ")[0], run.run_count) for run in runs] == [("step 1", 1), ("step 2", 2), ("step 3", 1)]


async def test_permanent_model_error_fails_the_run_without_retrying(flow_env, shop, monkeypatch):
    async with fake_model_env(ReplayPolicy([]), monkeypatch) as server:
        server.inject("auth_error")
        state = await run_webtask("Open the shop.", start_url=shop.url("/login"), return_state=True)
        requests = len(server.requests)

    assert state.is_failed() and state.name == "Failed"
    assert requests == 1  # neither the SDK nor the step task retried a 401
    with pytest.raises(PermanentModelError):
        await webtask_result(state)
    runs = await read_task_runs(state.state_details.flow_run_id, expected=1)
    assert [(run.name, run.run_count, run.state.name) for run in runs] == [("step 1", 1, "Failed")]


def test_retry_condition_is_a_plain_function():
    import inspect

    from prefect.states import Failed

    from webtask_core.errors import ActionError, BrowserCrashedError, ModelTransientError
    from webtask_flows.steps import is_transient_failure, run_step, step_task

    assert inspect.isfunction(run_step.retry_condition_fn)  # Prefect never retries with a partial
    assert step_task(retries=2, retry_delay_s=0.01).retry_condition_fn is is_transient_failure
    assert run_step.cache_policy is not None and run_step.persist_result is False
    for error, retried in [(ModelTransientError("529"), True), (BrowserCrashedError("gone"), True),
                           (PermanentModelError("401"), False), (ActionError("no such id"), False),
                           (RuntimeError("bug"), False)]:
        assert is_transient_failure(run_step, None, Failed(data=error)) is retried, error
