"""The drift suite's work folder and recordings (one per markup style and recording flavour, made
once per test session), and its table at the end of the run: printed when a drift case failed or
WEBTASK_DRIFT_TABLE=1."""

from __future__ import annotations

import os

import pytest
from drift_run import RESULTS, DriftEnv, markdown_table

from webtask_core.browser import Browser


@pytest.fixture(scope="session")
async def drift_env(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> DriftEnv:
    return DriftEnv(browser, tmp_path_factory.mktemp("replay-drift"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if RESULTS and (os.environ.get("WEBTASK_DRIFT_TABLE") == "1" or not all(item.passed for item in RESULTS)):
        terminalreporter.section("replay drift table")
        terminalreporter.write_line(markdown_table(RESULTS))
