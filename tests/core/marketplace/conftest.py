"""Fixtures for driving the demo marketplace with Playwright directly (not the project's browser layer)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from PIL import Image
from playwright.async_api import Browser, Page, async_playwright
from shop_helpers import log_in

from webtask_core.browser.chromium import CHROMIUM_ARGS, find_chromium
from webtask_core.testing.marketplace import Marketplace

USERS = {"demo": "demo-pass"}


@pytest.fixture(scope="module")
async def chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=find_chromium(), args=list(CHROMIUM_ARGS), headless=True
        )
        yield browser
        await browser.close()


@pytest.fixture
def shop() -> Iterator[Marketplace]:
    with Marketplace(users=USERS) as running:
        yield running


@pytest.fixture
async def page(chromium: Browser) -> AsyncIterator[Page]:
    context = await chromium.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(5000)
    yield await context.new_page()
    await context.close()


@pytest.fixture
async def logged_in(page: Page, shop: Marketplace) -> Page:
    await log_in(page, shop)
    return page


@pytest.fixture
def photos(tmp_path: Path) -> list[Path]:
    """Two small real images: a JPEG and a PNG."""
    jpeg = tmp_path / "front.jpg"
    Image.new("RGB", (64, 48), (200, 30, 90)).save(jpeg, "JPEG")
    png = tmp_path / "back side.png"
    Image.new("RGB", (40, 40), (20, 120, 200)).save(png, "PNG")
    return [jpeg, png]
