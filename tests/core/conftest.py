"""Shared fixtures for tests/core: one real Chromium per test session, a fresh context per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from webtask_core.browser import Browser, BrowserConfig, BrowserTab


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    """A launched headless Chromium, shared by the whole test session."""
    launched = await Browser.launch(BrowserConfig())
    yield launched
    await launched.close()


@pytest.fixture
async def browser_session(browser: Browser) -> AsyncIterator[BrowserTab]:
    """A fresh BrowserContext with one tab, closed after the test."""
    session = await browser.new_tab()
    yield session
    await session.close()
