"""`webtask run` as a user runs it in a terminal (a subprocess whose stderr rich treats as one): the
live status, a transient model error retried instead of ending the run, and Ctrl+C."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from webtask_core.testing import FakeAnthropicServer, ReplayPolicy, Reply, ToolUse
from webtask_core.testing.page_site import PageSite
from webtask_core.testing.processes import processes_using

WEBTASK = str(Path(sys.executable).with_name("webtask"))
PAGE = "<h1>Shop</h1><button onclick=\"document.body.append('clicked')\">Sell</button>"


@pytest.fixture
def temp() -> Iterator[Path]:
    """The command's TMPDIR: its browser's folder and processes are found by it. Short: Chromium's
    socket path inside it must stay under the 108 bytes a Unix socket allows (tmp_path is longer)."""
    folder = Path(tempfile.mkdtemp(prefix="wt-cli-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def run_env(server: FakeAnthropicServer, temp: Path) -> dict[str, str]:
    return {**os.environ, "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "test",
            "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1",  # rich draws the live status as on a terminal
            "TMPDIR": str(temp)}


def plain(text: str) -> str:
    """What the terminal shows, without its escape codes."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


@pytest.mark.slow
def test_run_retries_a_transient_model_error_and_shows_each_step_live(temp: Path):
    policy = ReplayPolicy([
        Reply(text="Selling.", tool_uses=[ToolUse("click", {"element_id": "button-0"})]),
        ToolUse("complete", {"feedback": "Clicked Sell."}),
    ])
    with PageSite(pages={"/": PAGE}) as site, FakeAnthropicServer(policy) as server:
        server.inject("overloaded", times=3)  # more than the SDK's two retries: the step itself is retried
        done = subprocess.run([WEBTASK, "run", "Click Sell.", "--url", site.url("/"), "--max-steps", "4"],
                              env=run_env(server, temp), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["status"] == "completed"
    said = plain(done.stderr)
    assert "step 1 failed: model API returned 529" in said and "retry 1 of 2 in 0.5 s" in said
    assert "step 1/4 waiting for the model · 0 tokens" in said
    assert re.search(r"step 1/4 acting click\(element_id='button-0'\) · [1-9][\d,]* tokens", said)
    assert re.search(r"step 2/4 waiting for the model · [1-9][\d,]* tokens", said)
    assert "completed: Clicked Sell. (2 steps" in said


@pytest.mark.slow
def test_ctrl_c_stops_the_task_closes_the_browser_and_exits_130_without_a_traceback(temp: Path):
    with PageSite(pages={"/": PAGE}) as site, FakeAnthropicServer(latency_s=60) as server:
        # Its own process group, signalled as a whole, as a terminal does on Ctrl+C (Chromium included).
        process = subprocess.Popen([WEBTASK, "run", "Click Sell.", "--url", site.url("/")], env=run_env(server, temp),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 60
        while not server.requests and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server.requests, "the model was never asked"
        os.killpg(process.pid, signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr[-3000:]
    said = plain(stderr)
    assert said.rstrip().endswith("interrupted: the task was stopped and the browser closed"), said[-2000:]
    assert "Traceback" not in said and "exception" not in said.lower() and stdout == ""
    assert processes_using(temp) == set() and not list(temp.glob("webtask-browser-*"))
