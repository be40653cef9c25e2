"""Test-session guards: never reach a real model, never use the user's Prefect home."""

from __future__ import annotations

import os
import tempfile
from typing import Any

import pytest

# Set before anything imports anthropic or prefect.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("ANTHROPIC_BASE_URL", None)
os.environ["WEBTASK_OFFLINE"] = "1"  # AnthropicLLM refuses any non-loopback base_url
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="webtask-test-prefect-"))
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")


# Sections of the terminal summary a pytest-xdist worker sends (the drift suite's table): the
# controller collects no test, so only this root conftest runs in it and prints them.
_WORKER_SECTIONS: list[tuple[str, str]] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _WORKER_SECTIONS.extend(tuple(section) for section in getattr(node, "workeroutput", {}).get("sections", []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for title, text in _WORKER_SECTIONS:
        terminalreporter.section(title)
        terminalreporter.write_line(text)
