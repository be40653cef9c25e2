"""What Prefect costs per step: the same listing task through ``Agent.do`` and through ``run-webtask``.

Both runs list an item on the demo marketplace (log in, search the SKU, fill the form, upload two
photos, confirm, publish, report) with the scripted MarketplaceListingPolicy behind the fake Messages
API answering at once, so the model costs nothing. The flow runs against Prefect's test server,
started by this script (private PREFECT_HOME, ~10 s).

Prints per step of the flow run: Worker.step, and what the step task added around it (the Prefect
task run, the storage-state snapshot, the step artifact); then the added time per step two ways —
measured inside each step task, and as the whole-run difference to Agent.do spread over the steps
(this one includes per-run costs: session lock, resources, artifacts, result persistence, and
browser noise). Ends with one JSON line.

    .venv/bin/python benchmarks/flow_overhead.py [--runs 1]

Target: under 100 ms per step added inside the step task.
"""

from __future__ import annotations

import os
import tempfile

# Before Prefect is imported: a private Prefect home, no analytics, never a real model.
_HOME = tempfile.mkdtemp(prefix="wt-bench-")
os.environ["PREFECT_HOME"] = os.path.join(_HOME, "prefect")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ["WEBTASK_OFFLINE"] = "1"
os.environ["WEBTASK_SESSION_STORE"] = os.path.join(_HOME, "sessions")
os.environ["ANTHROPIC_API_KEY"] = "bench-key"

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from PIL import Image  # noqa: E402
from pydantic import SecretStr  # noqa: E402

from webtask_core import Agent, WorkerStatus  # noqa: E402
from webtask_core.llm.anthropic import AnthropicLLM  # noqa: E402
from webtask_core.testing import FakeAnthropicServer, MarketplaceListingPolicy, ReplayPolicy, ToolUse  # noqa: E402
from webtask_core.testing.marketplace import Marketplace  # noqa: E402
from webtask_core.worker import WorkerOptions  # noqa: E402

PASSWORD = "bench-pass"
SECRET_BLOCK = "webtask-bench-shop-password"
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"listing_url": {"type": "string"}, "sku": {"type": "string"}},
    "required": ["listing_url", "sku"],
}


def _task(site_url: str, sku: str) -> str:
    data = {
        "sku": sku, "title": "Blue suede shoes", "description": "Worn twice.\nSize 8.", "price": 45.0,
        "category": "Women's Shoes", "condition": "Like new", "photos": ["listing_image_1", "listing_image_2"],
        "username": "demo", "password": "{{secret:shop_password}}", "site_url": site_url,
    }
    return f"Create a listing with these two photos, then report its URL.\n```json\n{json.dumps(data, indent=2)}\n```"


def _photos(folder: Path) -> dict[str, str]:
    front, back = folder / "front.jpg", folder / "back.png"
    Image.new("RGB", (640, 480), (200, 30, 90)).save(front, "JPEG")
    Image.new("RGB", (400, 400), (20, 120, 200)).save(back, "PNG")
    return {"listing_image_1": str(front), "listing_image_2": str(back)}


async def _agent_run(server: FakeAnthropicServer, shop: Marketplace, resources: dict[str, str], sku: str) -> dict[str, Any]:
    options = WorkerOptions(secrets={"shop_password": SecretStr(PASSWORD)})
    started = time.perf_counter()
    async with AnthropicLLM(base_url=server.base_url, api_key="bench") as llm:
        async with Agent(llm, start_url=shop.url("/listings"), resources=resources, options=options) as agent:
            result = await agent.do(_task(shop.url("/listings"), sku), max_steps=20, output_schema=OUTPUT_SCHEMA)
            steps = agent.last_session.steps if agent.last_session else []
    total = time.perf_counter() - started
    if result.status is not WorkerStatus.completed:
        raise SystemExit(f"Agent.do did not complete: {result.feedback}")
    return {"total_s": total, "steps": result.steps, "step_ms": [s.timings.total_ms for s in steps]}


async def _flow_run(shop: Marketplace, resources: dict[str, str], sku: str) -> dict[str, Any]:
    from webtask_flows.run_flow import run_webtask

    started = time.perf_counter()
    result = await run_webtask(
        _task(shop.url("/listings"), sku), start_url=shop.url("/listings"), resources=resources, max_steps=20,
        session_key=f"bench-{sku.lower()}", output_schema=OUTPUT_SCHEMA, secrets={"shop_password": SECRET_BLOCK},
    )
    total = time.perf_counter() - started
    return {"total_s": total, "steps": result.steps, "timings": [t.model_dump() for t in result.step_timings]}


async def _warm_up(server: FakeAnthropicServer, shop: Marketplace) -> None:
    """One tiny run each way, so imports, the flow's registration and client set-up are not measured."""
    from webtask_flows.run_flow import run_webtask

    server.policy = ReplayPolicy([ToolUse("complete", {"feedback": "warm"})] * 2)
    async with AnthropicLLM(base_url=server.base_url, api_key="bench") as llm:
        async with Agent(llm, start_url=shop.url("/login")) as agent:
            await agent.do("Warm up.", max_steps=2)
    await run_webtask("Warm up.", start_url=shop.url("/login"), max_steps=2)


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 1) if values else 0.0


async def main(runs: int) -> dict[str, Any]:
    from prefect.blocks.system import Secret
    from prefect.testing.utilities import prefect_test_harness

    started = time.perf_counter()
    photos_dir = Path(tempfile.mkdtemp(prefix="photos-", dir=_HOME))
    resources = _photos(photos_dir)
    with prefect_test_harness(server_startup_timeout=60), Marketplace(users={"demo": PASSWORD}, preview_delay_ms=100) as shop:
        harness_s = time.perf_counter() - started
        await Secret(value=PASSWORD).asave(SECRET_BLOCK, overwrite=True)
        async with FakeAnthropicServer(MarketplaceListingPolicy(), latency_s=0.0) as server:
            os.environ["ANTHROPIC_BASE_URL"] = server.base_url
            await _warm_up(server, shop)
            server.policy = MarketplaceListingPolicy()
            agent_runs, flow_runs = [], []
            for run in range(runs):
                agent_runs.append(await _agent_run(server, shop, resources, f"AGENT-{run}"))
                flow_runs.append(await _flow_run(shop, resources, f"FLOW-{run}"))

    timings = [t for run in flow_runs for t in run["timings"]]
    inside = [t["task_ms"] - t["step_ms"] for t in timings]
    prefect_only = [t["task_ms"] - t["step_ms"] - t["snapshot_ms"] - t["artifact_ms"] for t in timings]
    steps = sum(run["steps"] for run in flow_runs)
    whole_run = (sum(r["total_s"] for r in flow_runs) - sum(r["total_s"] for r in agent_runs)) * 1000.0 / max(1, steps)
    agent_step = [ms for run in agent_runs for ms in run["step_ms"]]

    print(f"Prefect test server started in {harness_s:.1f} s; {runs} listing run(s) each way, {steps} flow steps")
    print(f"{'step':>4} {'Worker.step':>12} {'task total':>11} {'added':>7} {'snapshot':>9} {'artifact':>9} {'Prefect':>8}  (ms)")
    for t, prefect_ms in zip(timings, prefect_only, strict=True):
        print(f"{t['index']:>4} {t['step_ms']:>12.0f} {t['task_ms']:>11.0f} {t['task_ms'] - t['step_ms']:>7.0f} "
              f"{t['snapshot_ms']:>9.0f} {t['artifact_ms']:>9.0f} {prefect_ms:>8.0f}")
    print(f"Agent.do: {statistics.mean(r['total_s'] for r in agent_runs):.2f} s per run, "
          f"median Worker.step {_median(agent_step)} ms")
    print(f"run-webtask: {statistics.mean(r['total_s'] for r in flow_runs):.2f} s per run, "
          f"median Worker.step {_median([t['step_ms'] for t in timings])} ms")
    print(f"Added per step inside the step task: median {_median(inside)} ms, mean {statistics.mean(inside):.1f} ms "
          f"(Prefect task run alone: median {_median(prefect_only)} ms) — target < 100 ms")
    print(f"Whole-run difference spread over the steps: {whole_run:.0f} ms per step "
          "(includes per-run costs and browser noise)")
    return {
        "benchmark": "flow_overhead",
        "runs": runs,
        "steps": steps,
        "added_ms_per_step_median": _median(inside),
        "added_ms_per_step_mean": round(statistics.mean(inside), 1),
        "prefect_task_ms_per_step_median": _median(prefect_only),
        "snapshot_ms_median": _median([t["snapshot_ms"] for t in timings]),
        "artifact_ms_median": _median([t["artifact_ms"] for t in timings]),
        "whole_run_added_ms_per_step": round(whole_run, 1),
        "agent_run_s": round(statistics.mean(r["total_s"] for r in agent_runs), 2),
        "flow_run_s": round(statistics.mean(r["total_s"] for r in flow_runs), 2),
        "target_ms": 100,
        "meets_target": _median(inside) < 100,
        "total_s": round(time.perf_counter() - started, 1),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="listing runs each way (default 1)")
    arguments = parser.parse_args()
    try:
        summary = asyncio.run(main(arguments.runs))
    finally:
        shutil.rmtree(_HOME, ignore_errors=True)
    sys.stdout.flush()
    print(json.dumps(summary))
