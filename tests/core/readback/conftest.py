"""Fixtures for the read-back tests: one real Chromium per module, a demo marketplace and photos per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from readback_helpers import make_photos

from webtask_core.browser import Browser, BrowserConfig
from webtask_core.testing.marketplace import Marketplace


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    launched = await Browser.launch(BrowserConfig())
    yield launched
    await launched.close()


@pytest.fixture
def shop() -> Iterator[Marketplace]:
    with Marketplace(users={"demo": "demo-pass"}, preview_delay_ms=100) as running:
        yield running


@pytest.fixture
def photos(tmp_path: Path) -> list[Path]:
    return make_photos(tmp_path)
