"""Print the drift suite's table without pytest: ``python -m tests.core.replay_drift.table [CASE ...]``
(from the repository root, in its .venv). ``--style label|span`` keeps one markup style; names keep
those cases; ``--model-only`` runs the model alone on each changed site, without replay. The same
cases and judge as ``test_replay_drift.py``; exits 1 when any run failed."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ["WEBTASK_OFFLINE"] = "1"  # as tests/conftest.py: nothing reaches a real model
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers are imported as pytest imports them

from drift_cases import case_runs
from drift_run import DriftEnv, markdown_table

from webtask_core.browser import Browser, BrowserConfig


async def main(names: list[str], style: str | None, model_only: bool) -> int:
    runs = [(case, s) for case, s in case_runs() if (not names or case.name in names) and (style is None or s == style)]
    if not runs:
        print("no case matches", file=sys.stderr)
        return 2
    started = time.perf_counter()
    browser = await Browser.launch(BrowserConfig())
    outcomes = []
    try:
        with tempfile.TemporaryDirectory(prefix="replay-drift-") as folder:
            env = DriftEnv(browser, Path(folder))
            for case, case_style in runs:
                outcome = await env.run(case, case_style, replay=not model_only)
                print(f"{outcome.verdict:5.5} {case.name} [{case_style}] {outcome.seconds:.1f}s", file=sys.stderr)
                outcomes.append(outcome)
    finally:
        await browser.close()
    print(markdown_table(outcomes))
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0 if all(outcome.passed for outcome in outcomes) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--style", choices=("label", "span"))
    parser.add_argument("--model-only", action="store_true",
                        help="no replay: the model alone on each changed site (checks the site, the model and the judge)")
    arguments = parser.parse_args()
    sys.exit(asyncio.run(main(arguments.cases, arguments.style, arguments.model_only)))
