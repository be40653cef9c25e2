"""Which Chromium a launch runs: the headless shell for headless runs when installed, else the full browser."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import browser_main_process, chromium_pids

from webtask_core.browser import Browser, ChromiumNotFound, find_chromium


def _program(folder: Path, name: str) -> str:
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def only_path(tmp_path, monkeypatch):
    """PATH holding only tmp_path; no override and no Playwright-managed browsers."""
    monkeypatch.delenv("WEBTASK_CHROMIUM_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "none"))
    return tmp_path


def test_headless_runs_take_the_headless_shell_and_headed_ones_the_browser(only_path):
    browser = _program(only_path, "chromium")
    shell = _program(only_path, "chromium-headless-shell")
    assert find_chromium(headless=True) == shell
    assert find_chromium() == browser  # a headed run needs the full browser


def test_without_a_headless_shell_headless_runs_take_the_browser(only_path):
    browser = _program(only_path, "chromium")
    assert find_chromium(headless=True) == browser


def test_the_override_wins_over_the_headless_shell(only_path, monkeypatch):
    _program(only_path, "chromium-headless-shell")
    chosen = _program(only_path, "my-chrome")
    monkeypatch.setenv("WEBTASK_CHROMIUM_PATH", chosen)
    assert find_chromium(headless=True) == chosen


def test_no_chromium_at_all_says_what_to_install(only_path):
    with pytest.raises(ChromiumNotFound, match="apt-get install chromium"):
        find_chromium(headless=True)


async def test_a_headless_launch_runs_the_executable_find_chromium_chose(sites):
    expected = os.path.realpath(find_chromium(headless=True))
    before = chromium_pids()
    browser = await Browser.launch()
    try:
        tab = await browser.new_tab()
        await tab.navigate(sites.url("form.html"))
        assert (await tab.observe()).elements  # it renders the page and finds its controls
        pid, _ = browser_main_process(chromium_pids() - before)
        running = os.path.realpath(f"/proc/{pid}/exe")
        # Debian's /usr/bin names are shell wrappers around /usr/lib/chromium's binaries of the same name.
        assert Path(running).name == Path(expected).name
    finally:
        await browser.close()
