"""Fixtures for the tests against real third-party apps: the django-oscar shop (one per test
session: Django is configured once per process), the Wagtail shop and the Cartridge shop (each a
process of its own, one per test session) and a Chromium for the module."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from app_process import DjangoAppProcess
from cartridge_case import cartridge_site
from oscar_site.server import OscarSite
from wagtail_site.shop import shop_process

from webtask_core.browser import Browser, BrowserConfig


@pytest.fixture(scope="session")
def oscar_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OscarSite]:
    """The shop migrated (or copied from the cached migrated database), seeded and served."""
    with OscarSite(tmp_path_factory.mktemp("oscar-site")) as site:
        yield site


@pytest.fixture(scope="session")
def wagtail_shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DjangoAppProcess]:
    """The Wagtail site migrated (or copied from the cached migrated database), seeded and served."""
    with shop_process(tmp_path_factory.mktemp("wagtail-shop")) as shop:
        yield shop


@pytest.fixture(scope="session")
def cartridge_shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DjangoAppProcess]:
    """The Cartridge shop migrated (or copied from the cached migrated database), seeded and served."""
    with cartridge_site(tmp_path_factory.mktemp("cartridge-shop")) as shop:
        yield shop


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    launched = await Browser.launch(BrowserConfig())
    yield launched
    await launched.close()
