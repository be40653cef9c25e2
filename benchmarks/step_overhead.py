"""How much time and context a step costs outside the model.

Runs the marketplace listing task (log in, search the SKU, fill the form, upload two photos, confirm,
publish, report) with the scripted MarketplaceListingPolicy behind the fake Messages API, so the
model costs nothing and what is left is ours: observing the page, acting, bookkeeping.

Prints, per step: time outside the model (observe + act + bookkeeping), its parts, the model input
tokens (fake server's estimate: ~4 characters a token, images by pixel count) and the share of that
request which is an identical prefix of the next one (what prompt caching can reuse), computed from
the recorded request bodies in tokens: tools → system → messages, block by block, a differing text
block counted up to its first differing character. Ends with one JSON line.

    .venv/bin/python benchmarks/step_overhead.py [--runs 3] [--screenshots both|on|off] [--scale 0.6]
                                                 [--trace compare|off|on] [--trace-runs 1]

With ``--trace compare`` (the default) one more pass runs with screenshots on and a Playwright trace
recorded as the flows record it (webtask_core.browser.tracing: screenshots and DOM snapshots, secrets
scrubbed when saved), and prints what the trace costs per step: the median time outside the model
against the untraced pass, the CPU of the process tree, and per run the time to save and scrub the
trace and its size.

Targets: median under 150 ms per step outside the model; prefix share above 80 % from step 3 on.
Wall times depend on what else the machine runs, so the load average at the start and the CPU time
the whole process tree (this process, the Playwright driver, Chromium) spent per step are printed too.

Part of a step's time is the site's: a click that loads a page waits for the new document's load
event. That part ("site load": from the main frame's navigation request to the page's load event,
as Playwright reports them) is printed per step, and "ours" is the time outside the model without it.
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
from pathlib import Path
from typing import Any

from PIL import Image
from playwright.async_api import BrowserContext, Page, Request
from pydantic import SecretStr

from webtask_core import Agent, WorkerStatus
from webtask_core.browser import Browser, BrowserConfig
from webtask_core.browser.tracing import TraceRecorder
from webtask_core.llm.anthropic import AnthropicLLM
from webtask_core.record import Step
from webtask_core.secrets import SecretValues
from webtask_core.testing import FakeAnthropicServer, MarketplaceListingPolicy
from webtask_core.testing.fake_anthropic_checks import estimate_tokens
from webtask_core.testing.marketplace import Marketplace
from webtask_core.testing.processes import tree_cpu_seconds
from webtask_core.worker import WorkerOptions

PASSWORD = "demo-pass"


def _task(site_url: str, sku: str) -> str:
    data = {
        "sku": sku, "title": "Blue suede shoes", "description": "Worn twice.\nSize 8.", "price": 45.0,
        "category": "Women's Shoes", "condition": "Like new", "photos": ["listing_image_1", "listing_image_2"],
        "username": "demo", "password": "{{secret:shop_password}}", "site_url": site_url,
    }
    return f"Create a listing with these two photos, then report its URL.\n```json\n{json.dumps(data, indent=2)}\n```"


def _blocks(request: dict[str, Any]) -> list[tuple[str, Any]]:
    """(role tag, block) in the order the API caches a prompt: tools, system, messages."""
    items: list[tuple[str, Any]] = [("tool", tool) for tool in request.get("tools") or []]
    items += [("system", block) for block in request.get("system") or []]
    for message in request["messages"]:
        for position, block in enumerate(message["content"]):
            items.append((f"{message['role']}:{'start' if position == 0 else 'cont'}", block))
    return [(tag, _strip_cache(block)) for tag, block in items]


def _strip_cache(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _strip_cache(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache(item) for item in value]
    return value


def prefix_share(request: dict[str, Any], following: dict[str, Any]) -> float:
    """Tokens of ``request`` that open ``following`` unchanged, over all tokens of ``request``."""
    ours, theirs = _blocks(request), _blocks(following)
    total = sum(estimate_tokens(block) for _, block in ours)
    shared = 0
    for (tag, block), (other_tag, other) in zip(ours, theirs):
        if (tag, block) == (other_tag, other):
            shared += estimate_tokens(block)
            continue
        if tag == other_tag and block.get("type") == other.get("type") == "text":
            a, b = block["text"], other["text"]
            same = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            shared += same // 4
        break
    return shared / total if total else 0.0


class _TimedLLM(AnthropicLLM):
    """The client, noting when each model call started and ended (time.monotonic())."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[float, float]] = []

    async def complete(self, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            return await super().complete(*args, **kwargs)
        finally:
            self.calls.append((started, time.monotonic()))


class _SiteLoads:
    """Page loads in one browser context: (navigation request seen, load event) per document."""

    def __init__(self, context: BrowserContext) -> None:
        self.loads: list[tuple[float, float]] = []
        self._started: dict[Page, float] = {}
        context.on("request", self._request)
        context.on("page", self._watch)
        for page in context.pages:
            self._watch(page)

    def _watch(self, page: Page) -> None:
        page.on("load", lambda: self._loaded(page))

    def _request(self, request: Request) -> None:
        if request.is_navigation_request() and request.frame.parent_frame is None:
            self._started[request.frame.page] = time.monotonic()

    def _loaded(self, page: Page) -> None:
        started = self._started.pop(page, None)
        if started is not None:
            self.loads.append((started, time.monotonic()))

    def within(self, start: float, end: float) -> float:
        """Seconds of page loading between `start` and `end`."""
        return sum(max(0.0, min(end, b) - max(start, a)) for a, b in self.loads)


def _site_ms_per_step(calls: list[tuple[float, float]], loads: _SiteLoads, ended: float) -> list[float]:
    """Per step, the page loading while it acted: from the end of its model call to the start of the
    next one (its observe has no navigation to wait for)."""
    bounds = [end for _, end in calls]
    nexts = [start for start, _ in calls[1:]] + [ended]
    return [1000 * loads.within(a, b) for a, b in zip(bounds, nexts)]


async def run(runs: int, screenshots: bool, scale: float = WorkerOptions().screenshot_scale,
              trace: bool = False) -> dict[str, Any]:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    steps: list[Step] = []
    site_ms: list[float] = []  # per step, in the order of `steps`
    shares: list[tuple[int, float]] = []  # (step index, share of that request reused by the next)
    tokens: list[tuple[int, int]] = []
    cache_read_share: list[float] = []
    fresh_per_task: list[int] = []
    trace_save_ms: list[float] = []
    trace_kb: list[float] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder, Marketplace(users={"demo": PASSWORD}) as shop:
        photos = [Path(folder) / "front.jpg", Path(folder) / "back.png"]
        Image.new("RGB", (800, 600), (200, 30, 90)).save(photos[0], "JPEG")
        Image.new("RGB", (600, 600), (20, 120, 200)).save(photos[1], "PNG")
        options = WorkerOptions(screenshots=screenshots, screenshot_scale=scale,
                                secrets={"shop_password": SecretStr(PASSWORD)})
        browser = await Browser.launch(BrowserConfig())
        cpu_before = tree_cpu_seconds()  # Chromium's start-up is not a step's
        cpu_after = None
        try:
            async with FakeAnthropicServer(MarketplaceListingPolicy()) as server:
                async with _TimedLLM(base_url=server.base_url, api_key="bench") as llm:
                    for number in range(runs):
                        server.reset()
                        llm.calls.clear()
                        tab = await browser.new_tab()  # a fresh context per run, as the Agent would
                        page = tab.page
                        assert page is not None
                        loads = _SiteLoads(page.context)
                        tracer = TraceRecorder(Path(folder) / f"trace-{number}",
                                               scrub=SecretValues({"shop_password": PASSWORD}).scrub)
                        if trace:
                            await tracer.start(tab)
                        try:
                            agent = Agent(llm, browser=tab, options=options,
                                          resources={"listing_image_1": photos[0], "listing_image_2": photos[1]})
                            result = await agent.do(_task(shop.url("/listings"), f"BENCH-{number}"), max_steps=25)
                            site_ms += _site_ms_per_step(llm.calls, loads, time.monotonic())
                        finally:
                            if trace:
                                saved = await tracer.stop(tab)
                                if saved is not None:
                                    trace_save_ms.append(tracer.save_ms)
                                    trace_kb.append(saved.stat().st_size / 1024)
                            await tab.close()
                        if result.status is not WorkerStatus.completed:
                            raise SystemExit(f"run {number} ended {result.status.value}: {result.feedback}")
                        session = agent.last_session
                        assert session is not None
                        steps += session.steps
                        requests = [e.request for e in server.exchanges if e.status == 200]
                        for step, request, following in zip(session.steps, requests, requests[1:]):
                            shares.append((step.index, prefix_share(request, following)))
                        for step in session.steps:
                            usage = step.usage
                            prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
                            tokens.append((step.index, prompt))
                            if step.index >= 3 and prompt:
                                cache_read_share.append(usage.cache_read_tokens / prompt)
                        # What a task pays at the full (or cache-write) price: everything not read from cache.
                        fresh_per_task.append(sum(s.usage.input_tokens + s.usage.cache_write_tokens for s in session.steps))
            cpu_after = tree_cpu_seconds()  # before Chromium exits (its time would leave the tree)
        finally:
            await browser.close()
    elapsed = time.perf_counter() - started
    cpu_per_step = (
        round(1000 * (cpu_after - cpu_before) / len(steps), 1) if cpu_before is not None and cpu_after is not None else None
    )

    outside = [s.timings.total_ms - s.timings.model_ms for s in steps]
    ours = [max(0.0, total - site) for total, site in zip(outside, site_ms, strict=True)]
    parts = {
        "observe": [s.timings.observe_ms for s in steps],
        "act": [s.timings.act_ms for s in steps],
        "bookkeeping": [s.timings.total_ms - s.timings.observe_ms - s.timings.model_ms - s.timings.act_ms
                        for s in steps],
        "model_call": [s.timings.model_ms for s in steps],
    }
    shown = (f"on at {scale:g} scale" if screenshots else "off") + (", Playwright trace recorded" if trace else "")
    print(f"{runs} run(s) of the marketplace listing task, {len(steps)} steps, screenshots {shown}, "
          f"{elapsed:.1f} s; load average {load if load is None else round(load, 1)} on {os.cpu_count()} cores\n")
    print(f"{'step':>4}  {'outside ms':>10}  {'observe':>8}  {'act':>8}  {'site load':>9}  {'ours':>8}  {'book':>6}  "
          f"{'in tokens':>9}  {'prefix→next':>11}")
    share_by_step = dict(shares[: len(steps) // runs])
    first_run = steps[: len(steps) // runs]
    for step, (_, prompt), site, own in zip(first_run, tokens, site_ms, ours):
        share = share_by_step.get(step.index)
        book = step.timings.total_ms - step.timings.observe_ms - step.timings.model_ms - step.timings.act_ms
        print(f"{step.index:>4}  {step.timings.total_ms - step.timings.model_ms:>10.1f}  "
              f"{step.timings.observe_ms:>8.1f}  {step.timings.act_ms:>8.1f}  {site:>9.1f}  {own:>8.1f}  "
              f"{book:>6.1f}  {prompt:>9}  "
              f"{'' if share is None else f'{share:.1%}':>11}")
    by_tool: dict[str, list[float]] = {}
    for step in steps:
        for call in step.tool_calls:
            if call.ok:
                by_tool.setdefault(call.name, []).append(call.duration_ms)
    tool_medians = {name: round(statistics.median(values), 1) for name, values in sorted(by_tool.items())}
    print("\nmedian ms per tool call (browser action + settle, site latency included):")
    print("  " + ", ".join(f"{name} {ms}" for name, ms in tool_medians.items()))
    late_shares = [share for index, share in shares if index >= 3]
    figures = {
        "runs": runs,
        "steps": len(steps),
        "screenshots": screenshots,
        "screenshot_scale": scale if screenshots else None,
        "load_average": None if load is None else round(load, 2),
        "cpu_ms_per_step": cpu_per_step,
        "median_outside_model_ms": round(statistics.median(outside), 1),
        "p90_outside_model_ms": round(sorted(outside)[int(0.9 * (len(outside) - 1))], 1),
        "median_site_load_ms": round(statistics.median(site_ms), 1),
        "median_ours_ms": round(statistics.median(ours), 1),
        "median_parts_ms": {name: round(statistics.median(values), 1) for name, values in parts.items()},
        "median_tool_call_ms": tool_medians,
        "median_input_tokens_per_step": int(statistics.median(t for _, t in tokens)),
        "uncached_input_tokens_per_task": int(statistics.median(fresh_per_task)),
        "min_prefix_share_from_step_3": round(min(late_shares), 3) if late_shares else None,
        "median_prefix_share_from_step_3": round(statistics.median(late_shares), 3) if late_shares else None,
        "median_cache_read_share_from_step_3": round(statistics.median(cache_read_share), 3)
        if cache_read_share else None,
        "seconds": round(elapsed, 1),
    }
    if trace:
        figures["trace_save_ms_per_run"] = round(statistics.median(trace_save_ms), 1) if trace_save_ms else None
        figures["trace_kb_per_run"] = round(statistics.median(trace_kb), 1) if trace_kb else None
    print(f"\nmedian outside the model: {figures['median_outside_model_ms']} ms per step "
          f"(target < 150); parts: {figures['median_parts_ms']}; CPU of the whole process tree "
          f"{cpu_per_step} ms per step")
    print(f"of which the site's page loads: median {figures['median_site_load_ms']} ms; ours without them: "
          f"median {figures['median_ours_ms']} ms per step")
    print(f"prefix share from step 3: min {figures['min_prefix_share_from_step_3']}, median "
          f"{figures['median_prefix_share_from_step_3']} (target > 0.8); fake cache read share "
          f"{figures['median_cache_read_share_from_step_3']}; input tokens not read from cache per task "
          f"{figures['uncached_input_tokens_per_task']}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--screenshots", choices=("both", "on", "off"), default="both")
    parser.add_argument("--scale", type=float, default=WorkerOptions().screenshot_scale,
                        help="size of the model's screenshot relative to the viewport (default: the worker's)")
    parser.add_argument("--trace", choices=("compare", "off", "on"), default="compare",
                        help="compare: one more pass with a Playwright trace (screenshots on); on: trace every pass")
    parser.add_argument("--trace-runs", type=int, default=1, help="runs of the traced pass with --trace compare")
    args = parser.parse_args()
    modes = {"both": (True, False), "on": (True,), "off": (False,)}[args.screenshots]
    results = {}
    for screenshots in modes:
        results["screenshots_on" if screenshots else "screenshots_off"] = asyncio.run(
            run(args.runs, screenshots, args.scale, trace=args.trace == "on"))
        print()
    if args.trace == "compare":
        traced = asyncio.run(run(args.trace_runs, True, args.scale, trace=True))
        baseline = results.get("screenshots_on") or asyncio.run(run(args.trace_runs, True, args.scale))
        cost = {
            "median_outside_model_ms_untraced": baseline["median_outside_model_ms"],
            "median_outside_model_ms_traced": traced["median_outside_model_ms"],
            "extra_ms_per_step": round(traced["median_outside_model_ms"] - baseline["median_outside_model_ms"], 1),
            "cpu_ms_per_step_untraced": baseline["cpu_ms_per_step"],
            "cpu_ms_per_step_traced": traced["cpu_ms_per_step"],
            "save_ms_per_run": traced["trace_save_ms_per_run"],
            "kb_per_run": traced["trace_kb_per_run"],
            "kb_per_step": round(traced["trace_kb_per_run"] * traced["runs"] / traced["steps"], 1)
            if traced["trace_kb_per_run"] else None,
        }
        print(f"\nPlaywright trace: {cost['extra_ms_per_step']:+} ms per step outside the model (median "
              f"{cost['median_outside_model_ms_traced']} vs {cost['median_outside_model_ms_untraced']} untraced), CPU "
              f"{cost['cpu_ms_per_step_traced']} vs {cost['cpu_ms_per_step_untraced']} ms per step; saving and "
              f"scrubbing it {cost['save_ms_per_run']} ms per run, {cost['kb_per_run']} KB per run "
              f"({cost['kb_per_step']} KB per step)")
        results["trace"] = cost
        print()
    sys.stdout.flush()
    print(json.dumps({"benchmark": "step_overhead", **results}))


if __name__ == "__main__":
    main()
