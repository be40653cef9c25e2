"""One process, one browser, one login: a batch's listings are contexts of one shared Chromium and
start with the cookies of one login task; a Chromium killed mid-batch is relaunched once."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from flow_helpers import (
    chromium_pids,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    kill_chromium,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from test_batch_flow import login_requests, manifest_rows, params, requests_per_sku, write_photos
from test_run_webtask_shared import LaunchCounter, logins

from webtask_core.testing import MarketplaceListingPolicy
from webtask_core.testing.page_reader import is_read_back
from webtask_core.testing.request_view import latest_page, latest_url, task_json
from webtask_flows.listings.batch import batch_listing_upload
from webtask_flows.listings.login import LOGIN_RUN_NAME, login_session_key_for


def write_manifest(tmp_path: Path, prefix: str, count: int) -> str:
    rows = manifest_rows(count, prefix=prefix)
    write_photos(tmp_path, rows)
    manifest = tmp_path / f"{prefix}.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))
    return str(manifest)


class BrowserWatch:
    """Samples how many Chromium browser processes run at once while a batch runs (/proc)."""

    def __init__(self) -> None:
        self.most = 0
        self._task: asyncio.Task[None] | None = None

    async def _sample(self) -> None:
        while True:
            self.most = max(self.most, len(chromium_pids(main_only=True)))
            await asyncio.sleep(0.05)

    async def __aenter__(self) -> BrowserWatch:
        self._task = asyncio.create_task(self._sample())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def child_run_names(flow_run_id: Any) -> list[str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    async with get_client() as client:
        children = await client.read_flow_runs(flow_run_filter=FlowRunFilter(
            parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[flow_run_id])))
    return [run.name for run in children]


def on_login_page(request: dict[str, Any]) -> bool:
    return "/login" in latest_url(request) or 'name="password"' in latest_page(request)


@pytest.mark.slow
@pytest.mark.e2e
async def test_a_batch_runs_in_one_browser_and_logs_in_once(flow_env, shop, shop_secret, monkeypatch, tmp_path):
    counter = LaunchCounter(monkeypatch)
    manifest = write_manifest(tmp_path, "ONE", 4)
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        async with BrowserWatch() as watch:
            state = await batch_listing_upload(manifest=manifest, max_concurrency=2, **params(shop, tmp_path),
                                               return_state=True)
        requests = server.requests

    assert state.is_completed(), state.message
    assert len(counter.launches) == 1 and watch.most == 1  # one Chromium for the login and 4 listings
    assert len(counter.sessions) == 5 and len({id(s) for s in counter.sessions}) == 5  # a context each
    assert [len(shop.listing_by_sku(f"ONE-{n}")) for n in range(1, 5)] == [1, 1, 1, 1]

    # Logged in once: one POST /login, by the login task; no listing ever saw the log-in form.
    assert logins(shop) == 1
    login = login_requests(requests)
    assert len(login) == 2 and on_login_page(login[0]) and not on_login_page(login[1])
    listing_requests = [request for request in requests if not is_read_back(request) and "sku" in task_json(request)]
    assert listing_requests and not any(on_login_page(request) for request in listing_requests)
    per_sku = requests_per_sku(requests)
    assert set(per_sku) == {f"ONE-{n}" for n in range(1, 5)}

    # The login is a run-webtask subflow named "login" that saved the site's cookies under its key.
    key = login_session_key_for(shop.url("/listings"), "demo")
    stored = json.loads((flow_env.sessions / f"{key}.json").read_text())
    assert stored["storage_state"]["cookies"] and stored["session"]["status"] == "completed"
    assert sorted(await child_run_names(state.state_details.flow_run_id)) == ["ONE-1", "ONE-2", "ONE-3", "ONE-4",
                                                                             LOGIN_RUN_NAME]

    # The next batch reuses the stored login: no login task, no POST /login.
    second = write_manifest(tmp_path, "TWO", 2)
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        await batch_listing_upload(manifest=second, **params(shop, tmp_path))
        assert login_requests(server.requests) == [] and logins(shop) == 1
        # login_max_age_minutes=0: always a fresh login.
        third = write_manifest(tmp_path, "THREE", 1)
        await batch_listing_upload(manifest=third, login_max_age_minutes=0, **params(shop, tmp_path))
        assert len(login_requests(server.requests)) == 2 and logins(shop) == 2
    assert chromium_pids() == []


@pytest.mark.slow
@pytest.mark.e2e
async def test_listings_log_in_themselves_when_the_stored_login_was_revoked(flow_env, shop, shop_secret,
                                                                            monkeypatch, tmp_path):
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        await batch_listing_upload(manifest=write_manifest(tmp_path, "OLD", 1), **params(shop, tmp_path))
        assert logins(shop) == 1
        shop.reset(sign_out=True)  # the site forgets every session: the stored cookies look fine, but are not
        server.reset()
        state = await batch_listing_upload(manifest=write_manifest(tmp_path, "NEW", 2), **params(shop, tmp_path),
                                           return_state=True)
        requests = server.requests

    assert state.is_completed(), state.message
    assert login_requests(requests) == []  # the stored login looked usable, so no login task ran
    assert logins(shop) == 2  # each listing found itself logged out and logged in ("log in if needed")
    assert sum(on_login_page(request) for request in requests) == 2
    assert [len(shop.listing_by_sku(sku)) for sku in ("NEW-1", "NEW-2")] == [1, 1]


class AbortLogins:
    """The listing policy, except that it gives up on log-in tasks (task data without a SKU)."""

    def __init__(self) -> None:
        self.policy = MarketplaceListingPolicy()

    def __call__(self, request: dict[str, Any]) -> Any:
        from webtask_core.testing import Reply, ToolUse

        if "sku" not in task_json(request):
            return Reply(tool_uses=[ToolUse("abort", {"reason": "the login page did not load"})])
        return self.policy(request)


@pytest.mark.slow
@pytest.mark.e2e
async def test_a_failed_login_task_leaves_the_listings_to_log_in_themselves(flow_env, shop, shop_secret,
                                                                            monkeypatch, tmp_path, caplog):
    async with fake_model_env(AbortLogins(), monkeypatch) as server:
        state = await batch_listing_upload(manifest=write_manifest(tmp_path, "SOLO", 2), **params(shop, tmp_path),
                                           return_state=True)
        requests = server.requests

    assert state.is_completed(), state.message
    assert len(login_requests(requests)) == 1 and logins(shop) == 2
    assert any("The shared login ended Aborted" in record.getMessage() for record in caplog.records)
    key = login_session_key_for(shop.url("/listings"), "demo")
    stored = json.loads((flow_env.sessions / f"{key}.json").read_text())
    assert stored["session"]["status"] == "aborted"  # so the next batch tries to log in again


class KillWhenTwoInFlight:
    """The listing policy; holds the first listing's second model request until a second listing
    asks the model, then kills the shared Chromium: both listings are mid-task, each with a context
    in it. (The fake server answers each request in its own thread.)"""

    def __init__(self) -> None:
        self.policy = MarketplaceListingPolicy()
        self.requests: dict[str, int] = {}
        self.second_listing = threading.Event()
        self.lock = threading.Lock()
        self.killed = 0

    def __call__(self, request: dict[str, Any]) -> Any:
        sku = task_json(request).get("sku")
        if sku is not None:
            with self.lock:
                self.requests[sku] = self.requests.get(sku, 0) + 1
                first_listing_waits = len(self.requests) == 1 and self.requests[sku] == 2
                if len(self.requests) == 2 and not self.killed:
                    self.killed = kill_chromium()
                    self.second_listing.set()
            if first_listing_waits:
                self.second_listing.wait(timeout=30)
        return self.policy(request)


@pytest.mark.slow
@pytest.mark.e2e
async def test_a_killed_shared_browser_is_relaunched_and_the_batch_completes(flow_env, shop, shop_secret,
                                                                             monkeypatch, tmp_path):
    counter = LaunchCounter(monkeypatch)
    policy = KillWhenTwoInFlight()
    async with fake_model_env(policy, monkeypatch):
        state = await batch_listing_upload(manifest=write_manifest(tmp_path, "KILL", 3), max_concurrency=2,
                                           **params(shop, tmp_path), return_state=True)

    assert policy.killed == 1
    assert state.is_completed(), state.message
    assert len(counter.launches) == 2  # relaunched once, for both listings in flight
    assert len(counter.sessions) == 1 + 3 + 2  # the login, three listings, two contexts reopened
    assert [len(shop.listing_by_sku(f"KILL-{n}")) for n in range(1, 4)] == [1, 1, 1]
    assert logins(shop) == 1  # the reopened contexts kept their cookies
    assert chromium_pids() == []
