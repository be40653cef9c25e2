"""The two hooks a batch uses: ``login_session_key`` (start with a stored login's cookies, read only)
and ``SharedBrowser`` (every run's context in one Chromium, inherited by in-process subflows)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from flow_helpers import (
    OUTPUT_SCHEMA,
    chromium_pids,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    listing_task,
    login_task,
    make_photos,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from prefect import flow

from webtask_core.browser import Browser
from webtask_core.browser.runtime import BrowserRuntime, SharedBrowser, active_shared_browser
from webtask_core.errors import ConfigError
from webtask_core.testing import MarketplaceListingPolicy, ReplayPolicy, Reply, ToolUse
from webtask_core.testing.request_view import latest_page, latest_url
from webtask_flows.run_flow import run_webtask
from webtask_flows.run_result import webtask_result


def logins(shop: Any) -> int:
    return sum(1 for record in shop.request_log if record.method == "POST" and record.path == "/login")


class LaunchCounter:
    """Counts Chromium launches and browser contexts (a spy around the real methods)."""

    def __init__(self, monkeypatch: Any):
        self.launches: list[Browser] = []
        self.sessions: list[Any] = []
        launch, new_tab = Browser.launch.__func__, Browser.new_tab  # type: ignore[attr-defined]

        async def counting_launch(cls: type[Browser], config: Any = None) -> Browser:
            browser = await launch(cls, config)
            self.launches.append(browser)
            return browser

        async def counting_new_tab(browser: Browser, *args: Any, **kwargs: Any) -> Any:
            session = await new_tab(browser, *args, **kwargs)
            self.sessions.append(session)
            return session

        monkeypatch.setattr(Browser, "launch", classmethod(counting_launch))
        monkeypatch.setattr(Browser, "new_tab", counting_new_tab)


async def _log_in_under(key: str, shop: Any, shop_secret: dict[str, str]) -> None:
    state = await run_webtask(login_task(shop.url("/listings")), start_url=shop.url("/listings"),
                              session_key=key, secrets=shop_secret, return_state=True)
    assert state.is_completed(), state.message


async def test_login_session_key_starts_logged_in_and_leaves_the_stored_login_alone(
        flow_env, shop, shop_secret, monkeypatch, tmp_path):
    photos = make_photos(tmp_path / "photos")
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        await _log_in_under("shop-login", shop, shop_secret)
        stored = flow_env.sessions / "shop-login.json"
        before = stored.read_bytes()
        assert logins(shop) == 1
        login_requests = len(server.requests)

        state = await run_webtask(
            listing_task(shop.url("/listings")), start_url=shop.url("/listings"),
            resources={"listing_image_1": str(photos[0]), "listing_image_2": str(photos[1])},
            output_schema=OUTPUT_SCHEMA, secrets=shop_secret, login_session_key="shop-login", return_state=True,
        )
        requests = server.requests[login_requests:]

    assert state.is_completed(), state.message
    assert logins(shop) == 1  # the listing never logged in: it started with the stored cookies
    assert latest_url(requests[0]) == shop.url("/listings") and "Signed in as" in latest_page(requests[0])
    assert not any('name="password"' in latest_page(request) for request in requests)
    assert "<previous_tasks>" not in json.dumps(requests[0]["messages"])  # no conversation carried
    assert stored.read_bytes() == before  # read only: nothing saved back
    assert sorted(path.name for path in flow_env.sessions.iterdir()) == ["shop-login.json"]
    assert len(shop.listing_by_sku("BOOT-001")) == 1


async def test_a_missing_login_key_only_warns_and_the_task_logs_in_itself(flow_env, shop, shop_secret,
                                                                          monkeypatch, caplog):
    async with fake_model_env(MarketplaceListingPolicy(login_only=True), monkeypatch):
        state = await run_webtask(login_task(shop.url("/listings")), start_url=shop.url("/listings"),
                                  secrets=shop_secret, login_session_key="never-saved", return_state=True)
    assert state.is_completed(), state.message
    assert logins(shop) == 1
    assert any("No stored login 'never-saved'" in record.getMessage() for record in caplog.records)
    assert not flow_env.sessions.exists() or list(flow_env.sessions.iterdir()) == []


@pytest.mark.parametrize(("kwargs", "problem"), [
    ({"login_session_key": "../escape"}, "login_session_key: '../escape' must be"),
    ({"login_session_key": "same", "session_key": "same"}, "login_session_key: is the session_key itself"),
])
async def test_bad_login_session_keys_fail_before_the_browser(flow_env, shop, monkeypatch, kwargs, problem):
    async with fake_model_env(ReplayPolicy([]), monkeypatch) as server:
        state = await run_webtask("Open the shop.", start_url=shop.url("/login"), return_state=True, **kwargs)
        assert server.requests == []
    with pytest.raises(ConfigError) as caught:
        await webtask_result(state)
    assert str(caught.value).startswith(problem)
    assert shop.request_log == []


@flow(name="two-tasks-sharing-a-browser")
async def two_tasks(site_url: str) -> list[Any]:
    """A parent flow like the batch: the runs are in-process subflows, awaited concurrently."""
    async with SharedBrowser() as shared:
        states = await asyncio.gather(*(
            run_webtask(f"Task {name}.", start_url=site_url, return_state=True) for name in ("A", "B")
        ))
        alive_after_the_runs = shared.is_alive
    return [states, shared.launches, alive_after_the_runs, shared.is_alive]


async def test_subflows_open_their_contexts_in_the_one_shared_browser(flow_env, shop, monkeypatch):
    counter = LaunchCounter(monkeypatch)
    seen: list[int] = []

    def note_browsers_then_complete(request: dict[str, Any]) -> Any:
        seen.append(len(chromium_pids(main_only=True)))
        return Reply(tool_uses=[ToolUse("complete", {"feedback": "done"})])

    async with fake_model_env(note_browsers_then_complete, monkeypatch):
        states, launches, alive_after_the_runs, alive_after_the_block = await two_tasks(shop.url("/help"))

    assert all(state.is_completed() for state in states)
    assert launches == 1 and len(counter.launches) == 1 and seen == [1, 1]
    assert len(counter.sessions) == 2 and len({id(s) for s in counter.sessions}) == 2  # a context each
    assert alive_after_the_runs  # the runs closed their contexts, not the shared browser
    assert not alive_after_the_block and chromium_pids() == []  # leaving the block closed it


async def test_a_shared_browser_belongs_to_its_event_loop(flow_env):
    async with SharedBrowser() as shared:
        assert active_shared_browser() is shared and BrowserRuntime().shared is shared

        def elsewhere() -> Any:  # a run on another event loop must launch its own browser
            async def look() -> Any:
                return active_shared_browser()
            return asyncio.run(look())

        assert await asyncio.to_thread(elsewhere) is None
    assert active_shared_browser() is None
    with pytest.raises(RuntimeError, match="entered once"):
        async with shared:
            pass
