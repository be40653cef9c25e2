"""Launching and closing, crashes, storage state, and keeping a session on its allowed domains."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest
from browser_helpers import browser_main_process, chromium_pids, still_running, wait_until, wait_until_async

from webtask_core.browser import Browser, BrowserConfig
from webtask_core.browser.domains import DomainPolicy
from webtask_core.browser.tree_lines import text_lines
from webtask_core.errors import ActionError, BrowserCrashedError, ConfigError, TransientError


async def test_close_leaves_no_process_and_no_profile_folder(sites):
    before = chromium_pids()
    browser = await Browser.launch()
    session = await browser.new_tab()
    await session.navigate(sites.url("frames.html"))  # a renderer per site, and an out-of-process frame
    ours = chromium_pids() - before
    _, profile = browser_main_process(ours)
    assert len(ours) >= 3 and profile.is_dir()
    assert browser.is_alive and session.is_alive
    await browser.close()
    assert not browser.is_alive and not session.is_alive
    assert wait_until(lambda: not still_running(ours)), f"left running: {still_running(ours)}"
    assert profile.parent.name.startswith("webtask-browser-")  # all of Chromium's temp files in one folder
    assert not profile.parent.exists()
    await browser.close()  # closing twice is harmless


async def test_killed_browser_raises_browser_crashed_error_everywhere(sites):
    before = chromium_pids()
    browser = await Browser.launch()
    session = await browser.new_tab()
    await session.navigate(sites.url("dynamic.html"))
    await session.observe()
    ours = chromium_pids() - before
    main_pid, profile = browser_main_process(ours)
    os.kill(main_pid, signal.SIGKILL)
    assert await wait_until_async(lambda: not browser.is_alive)
    assert not session.is_alive
    with pytest.raises(BrowserCrashedError, match="not running"):
        await session.observe()
    with pytest.raises(BrowserCrashedError):
        await session.click("button-0")
    with pytest.raises(BrowserCrashedError):
        await session.navigate(sites.url("form.html"))
    with pytest.raises(BrowserCrashedError):
        await session.screenshot()
    with pytest.raises(BrowserCrashedError):
        await browser.new_tab()
    await browser.close()
    assert wait_until(lambda: not still_running(ours)), f"left running: {still_running(ours)}"
    assert not profile.parent.exists()


async def test_a_page_dying_under_an_action_is_a_crash_not_a_model_error(browser, sites):
    session = await browser.new_tab()
    try:
        await session.navigate(sites.url("dynamic.html"))
        await session.observe()
        await session._context.close()  # the context dies under the session, as in a crash
        with pytest.raises(BrowserCrashedError):
            await session.click("button-0")
    finally:
        await session.close()


async def test_storage_state_round_trip_into_a_new_session(browser, sites):
    first = await browser.new_tab()
    await first.navigate(sites.url("storage.html"))
    await first.observe()
    await first.click("button-0")
    state = await first.storage_state()
    await first.close()
    assert [(c["name"], c["value"]) for c in state["cookies"]] == [("session", "abc123")]
    assert state["origins"][0]["localStorage"] == [{"name": "draft", "value": "blue shoes"}]

    second = await browser.new_tab(storage_state=state)
    try:
        await second.navigate(sites.url("storage.html"))
        tree = (await second.observe()).tree
        assert 'cookie=session=abc123 draft=blue shoes' in text_lines(tree)
    finally:
        await second.close()
    fresh = await browser.new_tab()
    try:
        await fresh.navigate(sites.url("storage.html"))
        assert "cookie= draft=null" in text_lines((await fresh.observe()).tree)
    finally:
        await fresh.close()


async def test_bad_launch_and_session_parameters(browser, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(ConfigError, match="^headless: headed Chromium needs a display"):
        await Browser.launch(BrowserConfig(headless=False))
    with pytest.raises(ConfigError, match="executable_path"):
        await Browser.launch(BrowserConfig(executable_path="/nonexistent/chromium"))
    with pytest.raises(ValueError, match="viewport"):
        BrowserConfig(viewport=(10, 10))
    with pytest.raises(ConfigError, match="storage_state"):
        await browser.new_tab(storage_state="state.json")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="allowed_domains"):
        await browser.new_tab(allowed_domains="example.com")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not a host pattern"):
        await browser.new_tab(allowed_domains=["https://example.com/"])
    with pytest.raises(ConfigError, match="block_requests"):
        await browser.new_tab(block_requests=True)


def test_domain_patterns_match_hosts_and_ports():
    policy = DomainPolicy(["127.0.0.1", "*.example.com", "shop.test:8443"])
    assert policy.allows("http://127.0.0.1:5000/x")
    assert policy.allows("https://a.b.example.com/")
    assert not policy.allows("https://example.com/")  # the glob wants a subdomain
    assert policy.allows("https://shop.test:8443/")
    assert not policy.allows("https://shop.test/")  # port 443
    assert not policy.allows("http://localhost/")
    assert not policy.allows("file:///etc/passwd")
    assert policy.allows("about:blank") and policy.allows("data:text/html,hi")
    assert DomainPolicy(None).allows("http://anything.example/")


async def test_allowed_domains_block_foreign_navigations(browser, sites):
    session = await browser.new_tab(allowed_domains=["127.0.0.1"])
    other = sites.other
    blocked_message = "blocked: host not in allowed_domains [127.0.0.1]"
    try:
        await session.navigate(sites.url("domains.html"))
        requests_before = len(other.requests)
        with pytest.raises(ActionError) as caught:
            await session.navigate(other.url("tab_target.html"))
        assert str(caught.value) == f"navigation to {other.url('tab_target.html')} {blocked_message}"
        observation = await session.observe()
        ids = {e.text: e.id for e in observation.elements.values()}

        with pytest.raises(ActionError, match=f"^navigation to {other.url('tab_target.html')} blocked"):
            await session.click(ids["Foreign link"])
        assert session.url == sites.url("domains.html")

        with pytest.raises(ActionError, match=r"blocked \(reached through a redirect\)"):
            await session.click(ids["Redirecting link"])
        assert session.url == sites.url("domains.html")  # taken back off the foreign host

        await session.observe()
        with pytest.raises(ActionError, match="blocked"):
            await session.click(ids["Foreign new tab"])
        assert [tab.url for tab in (await session.observe()).tabs] == [sites.url("domains.html")]

        with pytest.raises(ActionError, match=f"^navigation to {other.url('submit')} blocked"):
            await session.click(ids["Post abroad"])
        assert session.url == sites.url("domains.html")

        # Only the page's own image reached it: the redirect was stopped at the redirect response.
        assert [path for path in other.requests[requests_before:] if path != "/pixel.gif"] == []
        assert session.blocked_navigations == [
            other.url("tab_target.html"), other.url("tab_target.html"), other.url("tab_target.html"),
            other.url("tab_target.html"), other.url("submit"),
        ]
        assert await session.click((await session.observe()).elements["a-0"].id) == (
            f"clicked a-0; page navigated to {sites.url('tab_target.html')}"
        )
    finally:
        await session.close()


async def test_block_requests_stops_foreign_subresources_too(browser, sites):
    port = sites.site.server.server_address[1]
    loose = await browser.new_tab(allowed_domains=[f"127.0.0.1:{port}"])
    strict = await browser.new_tab(allowed_domains=[f"127.0.0.1:{port}"], block_requests=True)
    try:
        before = sites.other.requests.count("/pixel.gif")
        await loose.navigate(sites.url("domains.html"))
        assert sites.other.requests.count("/pixel.gif") == before + 1
        await strict.navigate(sites.url("domains.html"))
        assert sites.other.requests.count("/pixel.gif") == before + 1
        with pytest.raises(ActionError, match="blocked"):
            await strict.navigate(f"http://127.0.0.1:{port + 1 if port < 65535 else port - 1}/")
    finally:
        await loose.close()
        await strict.close()


@pytest.mark.slow
async def test_a_page_stuck_in_a_loop_never_hangs_the_caller(sites):
    browser = await Browser.launch(BrowserConfig(action_timeout_s=0.5, settle_timeout_s=0.2))
    try:
        session = await browser.new_tab()
        await session.navigate(sites.url("dynamic.html"))
        await session.observe()
        await session.page.evaluate("setTimeout(() => { for (;;) {} }, 50)")
        await asyncio.sleep(0.3)  # let the loop start
        with pytest.raises(TransientError, match="did not respond within 2.5 s"):
            await session.observe()
        with pytest.raises(ActionError, match="^click button-0: the page did not respond within 2.9 s$"):
            await session.click("button-0")
        fresh = await browser.new_tab()  # the browser itself is fine
        await fresh.navigate(sites.url("tabs.html"))
        assert "a-0" in (await fresh.observe()).elements
    finally:
        await browser.close()
