"""Replay on real third-party applications: what an item costs once the task was recorded.

For one application (``--app``; its part lives in tests/apps: the site, the scripted model, the
items, the check of what it stored), through ``Agent.do(replay=...)`` with the scripted model
answering after ``--latency`` seconds: the first item is recorded live (the model decides every
step), the next ``--replayed`` items replay that script with their own values. The run sequence is
the one the app's replay test runs (tests/apps/replay_runs.py).

Prints a line per item (model calls, replay outcome, script revision, seconds, each handover), then
one JSON line: model calls per replayed item, seconds per replayed item against the live one, the
speed-up, the script's revision at the end, and whether the application stored every value right
(read from its own database). Replay's target (issue 25): 0 calls per replayed item, revision 1.
The default (1 live, 2 replayed) runs in about a minute on an idle machine; ``--full`` replays the
4 of the test.

    .venv/bin/python benchmarks/replay_apps.py --app wagtail|cartridge [--replayed 2] [--full] [--latency 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

# the apps' part, and tests/ for what it imports from there (child_processes: servers die with this process)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "apps"))

from cartridge_case import open_cartridge_case
from replay_runs import AppCase, ItemRun, run_items
from wagtail_case import open_wagtail_case

from webtask_core.browser import Browser, BrowserConfig
from webtask_core.replay import ScriptStore
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM

# An application: a context manager that starts it in a folder and yields its AppCase.
APPS: dict[str, Callable[[Path], AbstractContextManager[AppCase]]] = {
    "wagtail": open_wagtail_case,
    "cartridge": open_cartridge_case,
}


async def measure(case: AppCase, replayed: int, latency_s: float, folder: Path) -> dict[str, Any]:
    if replayed + 1 > len(case.items):
        raise SystemExit(f"{case.name} has {len(case.items)} items: at most {len(case.items) - 1} can replay")
    llm = FakeLLM(case.policy, latency_s=latency_s)
    store = ScriptStore(LocalSessionStore(folder / "sessions"))
    browser = await Browser.launch(BrowserConfig())
    try:
        runs = await run_items(case, llm, browser, store, folder / "files", case.items[: replayed + 1])
    finally:
        await browser.close()
    for run in runs:
        print(run.describe())
    problems = case.stored_problems(runs)
    for problem in problems:
        print(f"  stored wrong: {problem}", file=sys.stderr)
    return figures(case, runs, problems, latency_s)


def figures(case: AppCase, runs: list[ItemRun], problems: list[str], latency_s: float) -> dict[str, Any]:
    live, replayed = runs[0], runs[1:]
    replayed_s = statistics.mean(run.seconds for run in replayed) if replayed else 0.0
    return {
        "benchmark": "replay_apps", "app": case.name, "latency_s": latency_s, "load_average": round(os.getloadavg()[0], 2),
        "live": {"model_calls": live.model_calls, "seconds": round(live.seconds, 2), "replay": live.result.replay},
        "replayed": {
            "items": len(replayed),
            "model_calls_per_item": round(statistics.mean(run.model_calls for run in replayed), 2) if replayed else 0,
            "model_calls": [run.model_calls for run in replayed],
            # of those, the task's own (replay's handovers) and the read-back's (issue 26)
            "replay_calls": [run.replay_calls for run in replayed],
            "readback_calls": [run.readback_calls for run in replayed],
            "seconds_per_item": round(replayed_s, 2),
            "outcomes": [run.result.replay for run in replayed],
            "handovers_per_item": [len(run.result.replay_handovers) for run in replayed],
        },
        "speedup_replayed_vs_live": round(live.seconds / replayed_s, 2) if replayed_s else None,
        "script_revision": runs[-1].revision,
        "completed": all(run.result.ok for run in runs),
        "stored_right": not problems,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app", choices=sorted(APPS), default="wagtail", help="the application")
    parser.add_argument("--replayed", type=int, default=2, help="items replayed after the live recording")
    parser.add_argument("--full", action="store_true", help="replay 4 items, as the app's replay test does")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the scripted model takes per call")
    args = parser.parse_args()
    replayed = 4 if args.full else args.replayed
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="webtask-replay-apps-") as scratch:
        folder = Path(scratch)
        with APPS[args.app](folder / "site") as case:
            outcome = asyncio.run(measure(case, replayed, args.latency, folder))
    outcome["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(outcome))
    if not (outcome["completed"] and outcome["stored_right"]):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
