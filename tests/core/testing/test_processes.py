"""chromium_processes counts what a test started, not a browser that was already running (like the
session-wide ``browser`` fixture, which lives until the pytest session ends)."""

from __future__ import annotations

import asyncio

from webtask_core.browser import Browser, BrowserTab
from webtask_core.testing.processes import chromium_processes


async def _until_none_left(excluding: frozenset[int], timeout_s: float = 10.0) -> set[int]:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while (left := chromium_processes(excluding=excluding)) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    return left


async def test_excluding_the_browsers_running_before_counts_only_a_new_one(browser_session: BrowserTab):
    # The session browser has a tab open, so it runs a renderer below its main process too.
    assert browser_session.is_alive
    session_browser = chromium_processes()
    before = frozenset(chromium_processes(main_only=True))
    assert session_browser and before <= session_browser

    assert chromium_processes(excluding=before) == set()  # the session browser and its children left out

    leaked = await Browser.launch()
    try:
        await (await leaked.new_tab()).navigate("about:blank")
        new = chromium_processes(excluding=before)
        assert new and new.isdisjoint(session_browser)  # what this test started is counted...
        assert len(chromium_processes(main_only=True, excluding=before)) == 1
    finally:
        await leaked.close()
    assert await _until_none_left(before) == set()  # ...until it is closed
    assert before <= chromium_processes(main_only=True) and browser_session.is_alive  # left alone
