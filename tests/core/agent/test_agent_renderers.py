"""A batch of listings in one browser leaves no renderer behind: once every listing's tab closed, the
browser's processes are its own again (no renderer of a finished listing keeps running, holding its
memory, while the browser serves the next batch). Measured on the running browser, not after it closed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_agent_replay import list_with_replay, listing, scripts_in

from webtask_core import WorkerStatus
from webtask_core.browser import Browser
from webtask_core.testing import FakeLLM, MarketplaceListingPolicy
from webtask_core.testing.processes import chromium_processes

pytestmark = pytest.mark.slow


def _renderers(excluding: frozenset[int]) -> set[int]:
    """The renderer processes of the browsers this test started."""
    found = set()
    for pid in chromium_processes(excluding=excluding):
        try:
            # Chromium rewrites its command line into one string: look for the flag within it
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            continue  # exited meanwhile
        if b"--type=renderer" in command:
            found.add(pid)
    return found


async def _until_no_renderer(excluding: frozenset[int], timeout_s: float = 10.0) -> set[int]:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while (left := _renderers(excluding)) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    return left


async def test_a_batch_in_one_browser_leaves_no_renderer_behind(shop, photos, tmp_path):
    others = frozenset(chromium_processes(main_only=True))  # a session-wide browser is not this test's
    browser = await Browser.launch()
    try:
        store, llm = scripts_in(tmp_path), FakeLLM(MarketplaceListingPolicy())
        first = await list_with_replay(llm, browser, shop, photos, store, listing("RND-1", shop))
        assert first.status is WorkerStatus.completed, first.feedback
        during: list[int] = []

        async def one(sku: str) -> WorkerStatus:
            result = await list_with_replay(llm, browser, shop, photos, store, listing(sku, shop))
            during.append(len(_renderers(others)))
            return result.status

        # Three listings at once (replayed), then three more: what a batch at concurrency 3 does.
        for wave in (("RND-2", "RND-3", "RND-4"), ("RND-5", "RND-6", "RND-7")):
            assert await asyncio.gather(*(one(sku) for sku in wave)) == [WorkerStatus.completed] * 3
        assert max(during) >= 1  # the count sees renderers while listings run

        assert await _until_no_renderer(others) == set()
        assert browser.is_alive and chromium_processes(main_only=True, excluding=others)  # the browser still runs
        assert [len(shop.listing_by_sku(f"RND-{n}")) for n in range(1, 8)] == [1] * 7
    finally:
        await browser.close()
