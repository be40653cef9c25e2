"""The drift suite's work folder and recordings (one per markup style and recording flavour, made
once per test session), and its table at the end of the run: printed when a drift case failed or
WEBTASK_DRIFT_TABLE=1. Under pytest-xdist a worker runs the cases and sends its table to the
controller, which prints it."""

from __future__ import annotations

import os

import pytest
from drift_run import RESULTS, DriftEnv, markdown_table

from webtask_core.browser import Browser


@pytest.fixture(scope="session")
async def drift_env(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> DriftEnv:
    return DriftEnv(browser, tmp_path_factory.mktemp("replay-drift"))


def _table_wanted() -> bool:
    return bool(RESULTS) and (os.environ.get("WEBTASK_DRIFT_TABLE") == "1" or not all(item.passed for item in RESULTS))


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)  # set in an xdist worker only
    if output is not None and _table_wanted():  # tests/conftest.py prints it in the controller
        output.setdefault("sections", []).append(("replay drift table", markdown_table(RESULTS)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _table_wanted() and not hasattr(terminalreporter.config, "workeroutput"):
        terminalreporter.section("replay drift table")
        terminalreporter.write_line(markdown_table(RESULTS))
