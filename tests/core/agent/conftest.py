"""Fixtures for the agent-loop tests: one real Chromium per module, a fresh tab and marketplace per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from agent_helpers import USERS, make_photos

from webtask_core.browser import Browser, BrowserConfig, BrowserTab
from webtask_core.testing.marketplace import Marketplace


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    launched = await Browser.launch(BrowserConfig(action_timeout_s=3.0))
    yield launched
    await launched.close()


@pytest.fixture
async def tab(browser: Browser) -> AsyncIterator[BrowserTab]:
    session = await browser.new_tab()
    yield session
    await session.close()


@pytest.fixture
def shop() -> Iterator[Marketplace]:
    with Marketplace(users=USERS, preview_delay_ms=150) as running:
        yield running


@pytest.fixture
def photos(tmp_path: Path) -> list[Path]:
    return make_photos(tmp_path)
