"""Batch throughput: listings per minute at max_concurrency 1, 2 and 4, through the real flow.

The demo marketplace, the scripted offline model answering every call after a fixed delay
(``--latency``, 0.5 s like a fast real model), and ``batch-listing-upload`` on Prefect's embedded
server. Each concurrency level gets a fresh ledger, a fresh session store and an empty marketplace,
so every listing runs and every level logs in once (the batch's shared login task, then one
Chromium with a context per listing). Memory is sampled while the batch runs: the PSS of this
process plus every Chromium process it started; "per concurrent listing" is the growth of the peak
from 1 to the highest concurrency, divided by the extra listings in flight. Model requests are
counted per listing and for the login task.

    .venv/bin/python benchmarks/batch_throughput.py            # 4 listings per level (1-2 minutes)
    .venv/bin/python benchmarks/batch_throughput.py --full     # the 20 listings of the target
    .venv/bin/python benchmarks/batch_throughput.py --growth 100   # memory over 100 listings (~6-14 min)

``--growth N`` runs one batch of N listings at the highest level instead and prints how much the
memory grew from early in the batch (the median between 10 % and 20 % of its time, once the first
listings warmed the browser) to its end while all listings are still in flight (the median between
80 % and 90 %: in the last tenth the batch drains and its renderers close): target at most 50 MiB over 100.
It is also measured by listings finished (samples taken as the shop's count of listings grows: the
second tenth of the listings against the ninth), where the renderers in flight are sampled at the same
point of a listing's cycle instead of wherever a time window fell.
The batch replays (``replay=True``, as a production batch that learned the flow runs): the first
listing records, the rest replay, so a hundred listings take minutes, not half an hour.

Each level also counts the Prefect API calls per listing (``prefect_calls.py``: by route, the spend-label
writes among them), and the machine's idle and stolen CPU while it ran (``host_cpu``: on a VM whose host
takes 20-35 % of the CPU a level runs a third slower; compare levels that ran under alike shares). Ends
with one line of JSON. Target: at least 2.5x from concurrency 1 to 4 on a 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

# 20 listings at three levels take several minutes on 2 cores: 4 by default, --full for 20.
DEFAULT_LISTINGS, FULL_LISTINGS = 4, 20


def _private_prefect() -> None:
    """A throwaway Prefect home and the embedded server; set before Prefect is imported."""
    if not os.environ.get("PREFECT_API_URL"):
        os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="webtask-bench-prefect-")
        os.environ["PREFECT_SERVER_ALLOW_EPHEMERAL_MODE"] = "true"
        os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")  # more on a busy machine
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "ERROR")


def _host_cpu() -> list[int]:
    """The machine's CPU time so far by kind (/proc/stat: user nice system idle iowait irq softirq steal)."""
    try:
        with open("/proc/stat") as stat:
            return [int(value) for value in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return []


def _host_shares(before: list[int], after: list[int]) -> dict[str, float]:
    """Idle and stolen shares of the machine's CPU between two readings, in %: a VM's host taking
    CPU (steal) slows a level as much as the code does, so a level's figure is read beside it."""
    if len(before) < 8 or len(after) < 8:
        return {}
    spent = [b - a for a, b in zip(before, after)]
    total = sum(spent) or 1
    return {"idle_pct": round(100 * (spent[3] + spent[4]) / total, 1), "steal_pct": round(100 * spent[7] / total, 1)}


def _pss_kb(pid: int) -> int:
    """Proportional set size: shared pages split between the processes sharing them, so the
    Chromium processes of one browser add up to what they really use (RSS would count the shared
    libraries once per process)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0


class MemorySampler:
    """Peak memory (PSS, MiB) of this process plus its Chromium processes, sampled in a thread; with
    ``finished`` (how many listings the batch finished so far), also one sample per listing finished."""

    def __init__(self, interval_s: float = 0.25, finished: Callable[[], int] | None = None):
        self.interval_s = interval_s
        self.finished = finished
        self.by_listing: list[tuple[int, dict[str, float]]] = []  # (listings finished, the parts then)
        self.peak_mib = 0.0
        self.peak_chromium = 0
        self.samples: list[tuple[float, float]] = []  # (seconds since the start, MiB)
        self.parts: list[tuple[float, dict[str, float]]] = []  # the same, by part: Python, Chromium's browser, the rest
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from webtask_core.testing.processes import chromium_processes

        me = os.getpid()
        started = time.perf_counter()
        while not self._stop.is_set():
            browsers = chromium_processes(main_only=True)
            python_kb, chromium = _pss_kb(me), {pid: _pss_kb(pid) for pid in chromium_processes()}
            total_kb = python_kb + sum(chromium.values())
            at = time.perf_counter() - started
            self.peak_mib = max(self.peak_mib, total_kb / 1024)
            self.samples.append((at, total_kb / 1024))
            browser_kb = sum(kb for pid, kb in chromium.items() if pid in browsers)
            self.parts.append((at, {"python": python_kb / 1024, "browser": browser_kb / 1024,
                                    "renderers_and_helpers": (sum(chromium.values()) - browser_kb) / 1024,
                                    "chromium_processes": float(len(chromium))}))
            self.peak_chromium = max(self.peak_chromium, len(chromium_processes(main_only=True)))
            done = self.finished() if self.finished is not None else 0
            if done > (self.by_listing[-1][0] if self.by_listing else 0):
                self.by_listing.append((done, {**self.parts[-1][1], "total": total_kb / 1024}))
            self._stop.wait(self.interval_s)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def between(self, start: float, end: float, part: str | None = None) -> float:
        """The median MiB sampled between two fractions of the run's time (0.1, 0.2: its second tenth),
        of everything or of one ``part``."""
        last = self.samples[-1][0] if self.samples else 0.0
        inside = sorted(mib for at, mib in self.samples if start * last <= at <= end * last) if part is None else \
            sorted(parts[part] for at, parts in self.parts if start * last <= at <= end * last)
        return round(inside[len(inside) // 2], 1) if inside else 0.0

    def growth(self, part: str) -> float:
        return round(self.between(0.8, 0.9, part) - self.between(0.1, 0.2, part), 1)

    def growth_by_listing(self, count: int, part: str) -> float:
        """The same growth, sampled when a listing finished: the median of the samples while the
        batch's second tenth of listings finished against its ninth (a renderer in flight or not is
        then the same point of a listing's cycle, not wherever a time window happened to fall)."""
        def median(start: float, end: float) -> float:
            inside = sorted(parts[part] for done, parts in self.by_listing if start * count < done <= end * count)
            return inside[len(inside) // 2] if inside else 0.0

        return round(median(0.8, 0.9) - median(0.1, 0.2), 1)


class RunTimes:
    """Every listing's ``WebtaskResult`` as the batch reads it (its step timings: where a listing's
    time went), kept by wrapping ``webtask_flows.run_result.webtask_result`` while a level runs."""

    def __init__(self) -> None:
        self.results: list = []

    def __enter__(self) -> RunTimes:
        import webtask_flows.run_result as run_result

        self._module, self._original = run_result, run_result.webtask_result

        async def keeping(state: object) -> object:
            outcome = await self._original(state)
            self.results.append(outcome)
            return outcome

        run_result.webtask_result = keeping  # runs.py imports it at each call
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._module.webtask_result = self._original

    def seconds_per_listing(self, wall_s: float, concurrency: int) -> dict[str, float]:
        """Where a listing's wall time went, averaged over the level's listings: the run-webtask run
        (its steps: observe, model, act, the step task around them; the rest of the run: opening the
        tab, the read-back, closing) and what the batch spent around each run (its share of the
        level's wall time with ``concurrency`` in flight, minus the run)."""
        runs = self.results
        if not runs:
            return {}
        count = len(runs)

        def mean(value: Callable[[object], float]) -> float:
            return round(sum(value(run) for run in runs) / count, 2)

        def steps(field: str) -> Callable[[object], float]:
            return lambda run: sum(getattr(t, field) for t in run.step_timings) / 1000.0  # type: ignore[attr-defined]

        run_s = mean(lambda run: run.duration_s)  # type: ignore[attr-defined]
        step_task_s, step_s, artifact_s = mean(steps("task_ms")), mean(steps("step_ms")), mean(steps("artifact_ms"))
        return {
            "wall_in_flight": round(wall_s * concurrency / count, 2), "run": run_s,
            "steps": step_task_s, "observe": mean(steps("observe_ms")), "model": mean(steps("model_ms")),
            "act": mean(steps("act_ms")),
            # the step task beyond Worker.step: Prefect's task run, the snapshot, naming (and, before they
            # were written beside the next step, the step's artifact and spend record)
            "step_task_beyond_worker": round(step_task_s - step_s, 2),
            "step_records": artifact_s,  # writing them, wherever it happened
            "run_outside_steps": round(run_s - step_task_s, 2),  # tab, start page, read-back, trace, artifacts
            "batch_around_run": round(wall_s * concurrency / count - run_s, 2),  # subflow start/end, ledger, login's share
        }


def _is_task(request: dict) -> bool:
    """A request of the worker (its first message holds the task), not of the read-back."""
    from webtask_core.testing.request_view import task_text

    try:
        task_text(request)
    except ValueError:
        return False
    return True


async def _run_level(concurrency: int, count: int, shop: object, model: object, manifest: Path,
                     workdir: Path, replay: bool = False) -> dict:
    from webtask_core.testing.request_view import task_json
    from webtask_flows.listings.batch import batch_listing_upload, batch_results

    shop.reset(sign_out=True)  # type: ignore[attr-defined]
    model.reset()  # type: ignore[attr-defined]
    os.environ["WEBTASK_SESSION_STORE"] = str(workdir / f"sessions-{concurrency}")  # no login carried over
    from prefect_calls import PrefectCalls

    from webtask_core.testing.processes import cpu_by_part

    cpu_before, host_before = cpu_by_part() or {}, _host_cpu()
    with PrefectCalls() as calls, RunTimes() as times, \
            MemorySampler(finished=lambda: len(shop.listings())) as memory:  # type: ignore[attr-defined]
        started = time.perf_counter()
        state = await batch_listing_upload(
            manifest=str(manifest), site_url=shop.url("/listings"), username="demo",  # type: ignore[attr-defined]
            password_secret="webtask-bench-shop-password", max_concurrency=concurrency,
            ledger=str(workdir / f"ledger-{concurrency}"), return_state=True, replay=replay,
        )
        seconds = time.perf_counter() - started
    cpu_after, host = cpu_by_part() or {}, _host_shares(host_before, _host_cpu())
    results = await batch_results(state)
    completed = sum(1 for r in results if r.status == "completed")
    steps = sum(r.steps for r in results)
    requests = model.requests  # type: ignore[attr-defined]
    tasks = [task_json(request) for request in requests if _is_task(request)]
    readback = len(requests) - len(tasks)  # the read-back's look at the published page (readback/reader.py)
    login = sum(1 for task in tasks if "sku" not in task)
    logins = sum(1 for r in shop.request_log if r.method == "POST" and r.path == "/login")  # type: ignore[attr-defined]
    return {
        "concurrency": concurrency, "listings": count, "completed": completed, "seconds": round(seconds, 2),
        "listings_per_minute": round(60.0 * completed / seconds, 2), "steps": steps,
        "model_requests_per_listing": round((len(tasks) - login) / max(count, 1), 2),
        "login_requests": login, "readback_requests": readback, "site_logins": logins,
        "peak_pss_mib": round(memory.peak_mib, 1), "peak_browsers": memory.peak_chromium,
        "early_pss_mib": memory.between(0.1, 0.2), "end_pss_mib": memory.between(0.8, 0.9),
        "growth_mib_by_part": {part: memory.growth(part) for part in ("python", "browser", "renderers_and_helpers")},
        # more renderers in flight in one window than the other is most of a renderers' "growth"
        "chromium_processes_more_at_end": memory.growth("chromium_processes"),
        "python_early_mib": memory.between(0.1, 0.2, "python"),
        # the same, sampled as listings finished (a renderer's exit and the next one's start are then aligned)
        "growth_mib_by_listing": {part: memory.growth_by_listing(count, part)
                                  for part in ("total", "python", "browser", "renderers_and_helpers")},
        "chromium_processes_more_at_end_by_listing": memory.growth_by_listing(count, "chromium_processes"),
        # CPU seconds per listing: Chromium's processes, the other child processes (Playwright's
        # driver, Prefect's server) and this process (the flow, the marketplace, the fake model).
        "seconds_per_listing": times.seconds_per_listing(seconds, concurrency),
        "host_cpu": host,  # idle and stolen while the level ran
        "cpu_s_per_listing": {part: round((cpu_after[part] - cpu_before[part]) / max(count, 1), 2) for part in cpu_after},
        # Prefect API calls per listing made by this process (the batch, its runs, their steps; the
        # login task's share included), the flow runs' spend-label writes among them (prefect_calls.py)
        "prefect_api_calls_per_listing": calls.per_listing(count),
    }


async def main(count: int, levels: list[int], latency_s: float, growth: bool = False) -> dict:
    from prefect.blocks.system import Secret

    from webtask_core.testing import FakeAnthropicServer, MarketplaceListingPolicy
    from webtask_core.testing.marketplace import Marketplace
    from webtask_flows.listings.demo import write_demo_manifest

    workdir = Path(tempfile.mkdtemp(prefix="webtask-bench-"))
    manifest = write_demo_manifest(workdir, count)
    await Secret(value="demo-pass").asave("webtask-bench-shop-password", overwrite=True)  # starts Prefect
    async with Marketplace(users={"demo": "demo-pass"}) as shop, \
            FakeAnthropicServer(MarketplaceListingPolicy(), latency_s=latency_s) as model:
        os.environ["ANTHROPIC_BASE_URL"], os.environ["ANTHROPIC_API_KEY"] = model.base_url, "bench"
        rows = []
        for concurrency in levels:
            row = await _run_level(concurrency, count, shop, model, manifest, workdir, replay=growth)
            rows.append(row)
            print(f"max_concurrency={concurrency}: {row['completed']}/{count} listings in {row['seconds']} s "
                  f"= {row['listings_per_minute']} listings/min ({row['steps']} steps, "
                  f"{row['model_requests_per_listing']} model requests per listing + {row['login_requests']} "
                  f"for the login, {row['site_logins']} POST /login); peak memory {row['peak_pss_mib']} MiB (PSS) "
                  f"with {row['peak_browsers']} Chromium browser process(es); CPU per listing {row['cpu_s_per_listing']} s "
                  f"(the machine's CPU {row['host_cpu']}); "
                  f"seconds per listing {row['seconds_per_listing']}; Prefect API calls per listing "
                  f"{row['prefect_api_calls_per_listing']}",
                  flush=True)
    if growth:
        row = rows[-1]
        # Python's part: what the allocator still holds for freed objects (returned by malloc_trim) or
        # what is really kept (a leak stays after it). This process also serves the marketplace.
        import ctypes
        import gc

        gc.collect()
        before_trim = _pss_kb(os.getpid()) / 1024
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        row["python_after_batch_mib"] = round(before_trim, 1)
        row["python_after_trim_mib"] = round(_pss_kb(os.getpid()) / 1024, 1)
        grew = round(row["end_pss_mib"] - row["early_pss_mib"], 1)
        print(f"memory over {count} listings at concurrency {row['concurrency']}: {row['early_pss_mib']} MiB early, "
              f"{row['end_pss_mib']} MiB at the end: grew {grew} MiB (target <= 50 MiB); by part {row['growth_mib_by_part']} "
              f"({row['chromium_processes_more_at_end']:+g} Chromium processes at the end); sampled as listings "
              f"finished: grew {row['growth_mib_by_listing']['total']} MiB, by part {row['growth_mib_by_listing']} "
              f"({row['chromium_processes_more_at_end_by_listing']:+g} Chromium processes); "
              f"this Python process {row['python_early_mib']} MiB early, {row['python_after_batch_mib']} MiB after the "
              f"batch, {row['python_after_trim_mib']} MiB once malloc_trim returned what the allocator kept")
        return {"benchmark": "batch_memory_growth", "model_latency_s": latency_s, "levels": rows,
                "listings": count, "growth_mib": grew, "growth_mib_by_listing": row["growth_mib_by_listing"]["total"],
                "target_growth_mib": 50}
    first, last = rows[0], rows[-1]
    speedup = round(last["listings_per_minute"] / first["listings_per_minute"], 2)
    extra = last["concurrency"] - first["concurrency"]
    per_listing = round((last["peak_pss_mib"] - first["peak_pss_mib"]) / extra, 1) if extra else None
    print(f"speed-up {first['concurrency']} -> {last['concurrency']}: {speedup}x (target >= 2.5x); "
          f"memory per extra concurrent listing: {per_listing} MiB "
          f"(base at concurrency {first['concurrency']}: {first['peak_pss_mib']} MiB)")
    return {"benchmark": "batch_throughput", "model_latency_s": latency_s, "levels": rows,
            "listings_per_minute": {str(row["concurrency"]): row["listings_per_minute"] for row in rows},
            "speedup": speedup, "target_speedup": 2.5, "mib_per_concurrent_listing": per_listing}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listings", type=int, default=DEFAULT_LISTINGS)
    parser.add_argument("--full", action="store_true", help=f"{FULL_LISTINGS} listings per level")
    parser.add_argument("--levels", default="1,2,4", help="max_concurrency values, comma-separated")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the scripted model takes per call")
    parser.add_argument("--growth", type=int, default=0, metavar="N",
                        help="one batch of N listings at the highest level: how much memory grows over it")
    args = parser.parse_args()
    _private_prefect()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # prefect_calls
    levels = [int(v) for v in args.levels.split(",")]
    if args.growth:
        outcome = asyncio.run(main(args.growth, levels[-1:], args.latency, growth=True))
    else:
        outcome = asyncio.run(main(FULL_LISTINGS if args.full else args.listings, levels, args.latency))
    print(json.dumps(outcome))
