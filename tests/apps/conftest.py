"""Fixtures for the tests against real third-party apps: the django-oscar shop (one per test
session: Django is configured once per process) and a Chromium for the module."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from oscar_site.server import OscarSite

from webtask_core.browser import Browser, BrowserConfig


@pytest.fixture(scope="session")
def oscar_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OscarSite]:
    """The shop migrated (or copied from the cached migrated database), seeded and served."""
    with OscarSite(tmp_path_factory.mktemp("oscar-site")) as site:
        yield site


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    launched = await Browser.launch(BrowserConfig())
    yield launched
    await launched.close()
