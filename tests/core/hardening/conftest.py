"""Fixtures for the hardening tests: one Chromium per module, a marketplace, local sites on 127.0.0.1/.2."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from hardening_helpers import SHOP_PASSWORD

from webtask_core.browser import Browser, BrowserConfig
from webtask_core.testing.marketplace import Marketplace


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    launched = await Browser.launch(BrowserConfig(action_timeout_s=3.0))
    yield launched
    await launched.close()


@pytest.fixture
def shop() -> Iterator[Marketplace]:
    with Marketplace(users={"demo": SHOP_PASSWORD}, preview_delay_ms=100) as running:
        yield running
