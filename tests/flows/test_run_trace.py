"""A Playwright trace per run: kept when the task did not complete (or always with WEBTASK_TRACE=on),
in a folder or beside the pictures on S3 with a presigned link, linked from the summary with the
command that opens it, each step's actions grouped under it, and no secret readable in it."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import httpx
import pytest
from flow_helpers import (
    SHOP_PASSWORD,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    login_task,
    read_artifacts,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)

from webtask_core.errors import ConfigError
from webtask_core.testing import MarketplaceListingPolicy, ReplayPolicy, Reply, ToolUse
from webtask_flows import run_webtask, webtask_result


def login_then_abort() -> Any:
    """Logs in (typing the password through its placeholder), then gives up."""
    log_in = MarketplaceListingPolicy(login_only=True)

    def policy(request: dict[str, Any]) -> Reply:
        reply = log_in(request)
        if reply.tool_uses and reply.tool_uses[0].name == "complete":
            return Reply(tool_uses=[ToolUse("abort", {"reason": "the item is out of stock"})])
        return reply

    return policy


def trace_events(zip_bytes: bytes) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as trace:
        members = {name: trace.read(name) for name in trace.namelist()}
    events = [json.loads(line) for line in members["trace.trace"].decode().splitlines() if line.strip()]
    return events, members


def step_actions(events: list[dict[str, Any]]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Step group title -> the actions (method, params) recorded under it."""
    groups = {e["callId"]: e["title"] for e in events if e.get("type") == "before" and e.get("method") == "tracingGroup"}
    actions: dict[str, list[tuple[str, dict[str, Any]]]] = {title: [] for title in groups.values()}
    for event in events:
        if event.get("type") == "before" and event.get("parentId") in groups:
            actions[groups[event["parentId"]]].append((event["method"], event.get("params") or {}))
    return actions


async def test_an_aborted_run_keeps_its_trace_with_every_step_and_no_secret(flow_env, shop, shop_secret, monkeypatch):
    monkeypatch.delenv("WEBTASK_TRACE", raising=False)  # the default: retain-on-failure (the suite turns it off)
    monkeypatch.setenv("WEBTASK_TRACE_FILM_STRIP", "on")  # with its film strip (off by default)
    async with fake_model_env(login_then_abort(), monkeypatch):
        state = await run_webtask(login_task(shop.url("/login")), start_url=shop.url("/login"), max_steps=5,
                                  secrets=shop_secret, return_state=True)
    assert state.name == "Aborted"
    result = await webtask_result(state)
    flow_run_id = str(state.state_details.flow_run_id)
    assert result.trace == str((flow_env.traces / flow_run_id / "trace.zip").resolve())

    (summary,) = [a for a in await read_artifacts(flow_run_id) if a.key is None and a.type == "markdown"
                  and "webtask aborted" in a.data]
    assert f"`playwright show-trace {result.trace}`" in summary.data

    events, members = trace_events(Path(result.trace).read_bytes())
    actions = step_actions(events)
    assert list(actions) == ["step 1", "step 2"]
    fills = [params for method, params in actions["step 1"] if method == "fill"]
    assert [fill["value"] for fill in fills] == ["demo", "{{secret:shop_password}}"]  # the password's placeholder
    assert any(method == "mouseClick" for method, _ in actions["step 1"])  # the click on "Log in" (press + release)
    assert any(name.startswith("screencast/") for name in members)  # the film strip
    # Not in the actions, the DOM snapshots, the login POST, anywhere: as typed, URL- or JSON-encoded.
    for form in {SHOP_PASSWORD, quote(SHOP_PASSWORD), quote_plus(SHOP_PASSWORD), json.dumps(SHOP_PASSWORD)[1:-1]}:
        assert not [name for name, data in members.items() if form.encode() in data], form


async def test_a_clean_run_keeps_none_unless_asked_and_on_s3_links_it(flow_env, shop, monkeypatch, s3_endpoint,
                                                                       s3_client, s3_bucket):
    monkeypatch.delenv("WEBTASK_TRACE", raising=False)
    script = [ToolUse("navigate", {"url": shop.url("/help")}), ToolUse("complete", {"feedback": "Read it."})]
    async with fake_model_env(ReplayPolicy(script), monkeypatch):
        state = await run_webtask("Read the help page.", start_url=shop.url("/login"), return_state=True)
    assert state.is_completed() and (await webtask_result(state)).trace is None
    assert not flow_env.traces.exists()  # retain-on-failure: a clean run's trace is dropped

    # Always kept, beside the step pictures on S3, linked by a presigned URL.
    monkeypatch.delenv("WEBTASK_TRACE_STORE")
    monkeypatch.setenv("WEBTASK_TRACE", "on")
    monkeypatch.setenv("WEBTASK_SCREENSHOT_STORE", f"s3://{s3_bucket}/pictures")
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    async with fake_model_env(ReplayPolicy(script), monkeypatch):
        state = await run_webtask("Read the help page.", start_url=shop.url("/login"), return_state=True)
    result = await webtask_result(state)
    flow_run_id = str(state.state_details.flow_run_id)
    assert result.trace is not None and result.trace.startswith(s3_endpoint)
    keys = [item["Key"] for item in s3_client.list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert f"pictures/{flow_run_id}/trace.zip" in keys
    async with httpx.AsyncClient() as http:
        downloaded = (await http.get(result.trace)).content
    actions = step_actions(trace_events(downloaded)[0])
    assert ("goto", shop.url("/help")) in [(m, p.get("url")) for m, p in actions["step 1"]]


async def test_a_run_that_raised_keeps_its_trace_and_says_where(flow_env, shop, monkeypatch):
    """No summary follows a run that failed with an error (here the model API refused the second
    call): the trace is kept all the same, and an artifact of the run gives the command."""
    monkeypatch.delenv("WEBTASK_TRACE", raising=False)

    class RefusedAfterOneStep:
        server: Any = None

        def __call__(self, request: dict[str, Any]) -> Reply:
            self.server.inject("auth_error")  # the next call is refused (401): not retried
            return Reply(tool_uses=[ToolUse("navigate", {"url": shop.url("/help")})])

    policy = RefusedAfterOneStep()
    async with fake_model_env(policy, monkeypatch) as server:
        policy.server = server
        state = await run_webtask("Read the help page.", start_url=shop.url("/login"), return_state=True)
    assert state.is_failed() and state.name == "Failed"
    flow_run_id = str(state.state_details.flow_run_id)
    trace = flow_env.traces / flow_run_id / "trace.zip"
    (note,) = [a for a in await read_artifacts(flow_run_id) if a.type == "markdown"
               and "Playwright trace of the failed run" in a.data]
    assert f"playwright show-trace {trace.resolve()}" in note.data and "PermanentModelError" in note.data
    assert note.task_run_id is None  # the run's own, not its failed step's
    actions = step_actions(trace_events(trace.read_bytes())[0])
    assert [method for method, _ in actions["step 1"]].count("goto") == 1 and "step 2" in actions


async def test_without_the_film_strip_a_kept_trace_still_has_every_action_and_snapshot(flow_env, shop, shop_secret,
                                                                                       monkeypatch):
    """The default: no film strip (WEBTASK_TRACE_FILM_STRIP unset)."""
    monkeypatch.delenv("WEBTASK_TRACE", raising=False)
    monkeypatch.delenv("WEBTASK_TRACE_FILM_STRIP", raising=False)
    async with fake_model_env(login_then_abort(), monkeypatch):
        state = await run_webtask(login_task(shop.url("/login")), start_url=shop.url("/login"), max_steps=5,
                                  secrets=shop_secret, return_state=True)
    assert state.name == "Aborted"
    events, members = trace_events(Path((await webtask_result(state)).trace).read_bytes())
    assert list(step_actions(events)) == ["step 1", "step 2"]
    assert not [name for name in members if name.startswith("screencast/")]
    assert b'"screencast-frame"' not in members["trace.trace"]
    snapshots = [e for e in events if e.get("type") == "frame-snapshot"]
    assert snapshots and any("Log in" in json.dumps(e) for e in snapshots)  # the pages, as DOM snapshots


@pytest.mark.parametrize("name, value", [("WEBTASK_TRACE", "sometimes"), ("WEBTASK_TRACE_STORE", "s3:///nobucket"),
                                         ("WEBTASK_TRACE_FILM_STRIP", "maybe")])
async def test_a_bad_trace_setting_fails_before_the_browser_starts(flow_env, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=name):
        await run_webtask("Open the shop.", start_url="http://127.0.0.1:9/")
