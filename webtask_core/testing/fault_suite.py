"""Full tasks through ``Agent.do`` while things go wrong, and how each run ended.

Every case lists one item on the demo marketplace (log in with a secret, search the SKU, fill the
form, upload two photos, publish) with a scripted model, while one kind of fault is injected at
points drawn from the case's seed:

- ``model_burst``: runs of 429 / 529 / 500 answers from the model API;
- ``model_timeout``: model answers that stall past the client's timeout;
- ``malformed``: a batch of generated bad replies (see :mod:`malformed`) before the real ones;
- ``browser_killed``: the Chromium process SIGKILLed while the model is thinking;
- ``page_never_loads`` / ``navigation_timeout`` / ``page_script_hangs``: the model is led to a page
  that never finishes, never answers, or whose script spins forever (from 10 ms after it loads, so
  the first look after the navigation already meets it: once a race CI's load won), then back.

A run *recovered* when the listing exists exactly once; it *ended cleanly* when it stopped aborted or
out of steps with a reason, or raised a webtask error that says what failed (retries used up); any
other exception, a hang, an invalid request sent to the model API or a duplicate listing is a
*crash*. After each run, Chromium processes and browser temp folders it left are counted.

The cases run against the demo marketplace, so this module needs the ``demo`` extra.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from webtask_core.errors import ConfigError, PermanentModelError, WebtaskError
from webtask_core.testing.demo_extra import require_demo_extra

require_demo_extra("the fault harness (webtask_core.testing.fault_suite)")

from .hostile_site import HostileSite  # noqa: E402 - after the check, so a missing package names the extra
from .malformed import malformed_replies  # noqa: E402
from .processes import chromium_processes, kill_processes, processes_using  # noqa: E402
from .replies import Reply, ToolUse  # noqa: E402
from .request_view import last_tool_results, latest_url  # noqa: E402

__all__ = [
    "AGENT_FAULTS", "FaultCase", "CaseResult", "SuiteEnv", "agent_cases", "run_agent_case", "classify",
    "request_problems", "summary", "table", "listing_task", "leftovers", "FaultyModel", "fault_schedule",
    "malformed_seen", "malformed_seen_in_requests",
]

AGENT_FAULTS = ("model_burst", "model_timeout", "malformed", "browser_killed", "page_never_loads",
                "navigation_timeout", "page_script_hangs")
_DETOURS = {"page_never_loads": "/partial", "navigation_timeout": "/never", "page_script_hangs": "/busy?after=10"}
_ERROR_KINDS = ("rate_limit", "overloaded", "server_error")
_TOOL_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
Outcome = Literal["recovered", "aborted", "crashed"]


class FaultCase(BaseModel):
    kind: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.seed}"


class CaseResult(BaseModel):
    case: str
    kind: str
    layer: str = "agent"
    outcome: Outcome
    status: str  # completed | aborted | max_steps, or the error's type
    reason: str
    steps: int = 0
    seconds: float = 0.0
    leaked_processes: int = 0
    leaked_folders: int = 0
    malformed_replies: int = 0
    malformed_seen_as_errors: int = 0


@dataclass
class SuiteEnv:
    """What the cases share: the marketplace, two photos, the misbehaving site, the shop password."""

    shop: Any  # a running webtask_core.testing.marketplace.Marketplace
    photos: list[Path]
    site: HostileSite
    password: str
    username: str = "demo"
    malformed_per_run: int = 25
    case_timeout_s: float = 120.0


def agent_cases(*, full: bool, seed: int = 0, malformed_runs: int | None = None) -> list[FaultCase]:
    """The cases to run: one of each kind by default; more seeds with ``full`` (five malformed batches:
    with ``SuiteEnv.malformed_per_run=40``, 200 generated replies)."""
    repeats = {"model_burst": 3, "model_timeout": 2, "malformed": 5, "browser_killed": 2,
               "page_never_loads": 1, "navigation_timeout": 1, "page_script_hangs": 1} if full else {
               "model_burst": 1, "model_timeout": 1, "malformed": 1, "browser_killed": 1,
               "page_never_loads": 1, "navigation_timeout": 1, "page_script_hangs": 1}
    if malformed_runs is not None:
        repeats["malformed"] = malformed_runs
    return [FaultCase(kind=kind, seed=seed * 100 + number) for kind in AGENT_FAULTS for number in range(repeats[kind])]


def listing_task(site_url: str, sku: str, username: str) -> str:
    data = {
        "sku": sku, "title": "Fault-tolerant boots", "description": "Listed while things broke.", "price": 45,
        "category": "Women's Shoes", "condition": "Like new", "photos": ["listing_image_1", "listing_image_2"],
        "username": username, "password": "{{secret:shop_password}}", "site_url": site_url,
    }
    return f"List this item on the marketplace and report its URL.\n```json\n{json.dumps(data, indent=2)}\n```"


class FaultyModel:
    """The scripted listing model, with the case's fault worked into its answers.

    Malformed replies come first, one per request (with ``real_every=n``, every n-th request gets a
    real answer in between, so the page moves on: for a caller whose stuck detection stays on).
    """

    def __init__(self, case: FaultCase, site: HostileSite, base: Callable[[dict[str, Any]], Reply], *,
                 malformed: int = 25, real_every: int | None = None):
        self.case, self.site, self.base = case, site, base
        self.rng = random.Random(case.seed)
        self.calls = 0
        self.killed = 0
        self.before_pids: set[int] = chromium_processes(main_only=True)
        self.malformed = malformed_replies(malformed, seed=case.seed) if case.kind == "malformed" else []
        self.real_every = real_every
        self.malformed_used = 0
        self.malformed_calls: list[int] = []  # request numbers answered with a malformed reply
        self.fault_at = self.rng.randint(2, 5)
        self.detour_from = ""

    def __call__(self, request: dict[str, Any]) -> Reply:
        self.calls += 1
        if self.malformed_used < len(self.malformed) and not (self.real_every and self.calls % self.real_every == 0):
            self.malformed_used += 1
            self.malformed_calls.append(self.calls)
            return self.malformed[self.malformed_used - 1]
        if self.case.kind == "browser_killed" and self.calls == self.fault_at:
            # Kill the case's own Chromium while "the model is thinking": its reply then fails to act.
            self.killed += kill_processes(chromium_processes(main_only=True) - self.before_pids)
        if self.case.kind in _DETOURS:
            if self.calls == self.fault_at:
                self.detour_from = latest_url(request)
                target = self.site.url(_DETOURS[self.case.kind])
                return Reply(text="The page asks me to look here first.", tool_uses=[ToolUse("navigate", {"url": target})])
            if self.detour_from and latest_url(request).startswith(self.site.origin):
                back, self.detour_from = self.detour_from, ""
                return Reply(text="Back to the shop.", tool_uses=[ToolUse("navigate", {"url": back})])
        return self.base(request)


def fault_schedule(case: FaultCase) -> dict[int, str]:
    """Request index -> injected fault, for the model-side kinds."""
    rng = random.Random(case.seed * 7919 + 1)
    schedule: dict[int, str] = {}
    if case.kind == "model_burst":
        start = rng.randint(0, 3)
        for _ in range(rng.randint(1, 2)):
            for offset in range(rng.randint(1, 5)):  # one step survives 3 SDK tries x 3 step tries
                schedule[start + offset] = rng.choice(_ERROR_KINDS)
            start += rng.randint(8, 14)
    elif case.kind == "model_timeout":
        for index in rng.sample(range(1, 10), rng.randint(1, 2)):
            schedule[index] = "slow"
    return schedule


def request_problems(requests: Iterable[dict[str, Any]]) -> list[str]:
    """What the Messages API would refuse that the fake server does not check: duplicate or malformed
    tool_use ids and names in the conversation the worker sent back."""
    problems: list[str] = []
    for number, request in enumerate(requests):
        ids: set[str] = set()
        for message in request.get("messages", []):
            for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
                if block.get("type") != "tool_use":
                    continue
                call_id, name = block.get("id"), block.get("name")
                if not isinstance(call_id, str) or not _TOOL_ID.match(call_id) or call_id in ids:
                    problems.append(f"request {number}: bad or repeated tool_use id {str(call_id)[:40]!r}")
                if not isinstance(name, str) or not _TOOL_NAME.match(name):
                    problems.append(f"request {number}: bad tool_use name {str(name)[:40]!r}")
                ids.add(str(call_id))
    return problems


def classify(status: str | None, reason: str, error: BaseException | None) -> tuple[Outcome, str, str]:
    """(outcome, status, reason) of a finished run; ``status`` None when it raised ``error``."""
    if error is None:
        if status == "completed":
            return "recovered", status, reason
        if status in ("aborted", "max_steps") and reason.strip():
            return "aborted", status, reason
        return "crashed", str(status), f"ended {status} without a reason"
    kind = type(error).__name__
    if isinstance(error, asyncio.TimeoutError):
        return "crashed", "hang", "the run did not end within its time limit"
    if isinstance(error, ConfigError) or (isinstance(error, PermanentModelError) and error.status_code == 400):
        return "crashed", kind, str(error)  # valid input, valid requests: neither should happen
    if isinstance(error, WebtaskError) and str(error).strip():
        return "aborted", kind, str(error)
    return "crashed", kind, f"unhandled {kind}: {error}"


async def run_agent_case(case: FaultCase, env: SuiteEnv) -> CaseResult:
    """Run one case through ``Agent.do``; never raises for what the case does."""
    started = time.perf_counter()
    # A private temp folder for the case: whatever it leaves there (browser profiles...) is its own.
    private = Path(tempfile.mkdtemp(prefix="wtfault-", dir="/tmp" if Path("/tmp").is_dir() else None))
    previous_tempdir, tempfile.tempdir = tempfile.tempdir, str(private)
    try:
        return await _run_agent_case(case, env, started, private)
    finally:
        tempfile.tempdir = previous_tempdir
        shutil.rmtree(private, ignore_errors=True)


async def _run_agent_case(
    case: FaultCase, env: SuiteEnv, started: float, private: Path
) -> CaseResult:
    from webtask_core.agent import Agent
    from webtask_core.browser import BrowserConfig
    from webtask_core.history import StuckThresholds
    from webtask_core.llm.anthropic import AnthropicLLM
    from webtask_core.worker import WorkerOptions

    from .fake_anthropic import FakeAnthropicServer
    from .policies import MarketplaceListingPolicy

    sku = f"FLT-{case.kind.replace('_', '-').upper()}-{case.seed}"
    base = MarketplaceListingPolicy(max_failed_turns=10**6 if case.kind == "malformed" else 3)
    model = FaultyModel(case, env.site, base, malformed=env.malformed_per_run)
    relaxed = StuckThresholds(page_threshold=env.malformed_per_run + 8, action_threshold=env.malformed_per_run)
    stuck = relaxed if case.kind == "malformed" else StuckThresholds()
    options = WorkerOptions(screenshots=case.kind != "malformed", stuck=stuck)
    timeout_s = 1.0 if case.kind == "model_timeout" else 15.0
    status: str | None = None
    reason, steps, error, session = "", 0, None, None
    async with FakeAnthropicServer(model, slow_s=timeout_s * 2) as server:
        server.fault_policy = fault_schedule(case).get
        async with AnthropicLLM(base_url=server.base_url, api_key="test", max_retries=2, timeout_s=timeout_s) as llm:
            agent = Agent(
                llm,
                browser_config=BrowserConfig(action_timeout_s=1.5, navigation_timeout_s=2.5, settle_timeout_s=1.0),
                start_url=env.shop.url("/login"), secrets={"shop_password": env.password},
                allowed_domains=["127.0.0.1"], resources={"listing_image_1": env.photos[0], "listing_image_2": env.photos[1]},
                options=options, step_retries=2, retry_delay_s=0.05,
            )
            try:
                result = await asyncio.wait_for(
                    agent.do(listing_task(env.shop.url("/listings"), sku, env.username),
                             max_steps=env.malformed_per_run + 20 if case.kind == "malformed" else 20),
                    timeout=env.case_timeout_s,
                )
                status, reason, steps = result.status.value, result.feedback, result.steps
                session = agent.last_session
            except Exception as caught:  # noqa: BLE001 - the point is to classify whatever escapes
                error = caught
            finally:
                try:
                    await agent.close()
                except Exception as caught:  # noqa: BLE001
                    error = error or caught
        requests = server.requests
    outcome, status_text, reason = classify(status, reason, error)
    problems = request_problems(requests)
    if problems and outcome != "crashed":
        outcome, reason = "crashed", "; ".join(problems[:3])
    listings = len(env.shop.listing_by_sku(sku))
    if (outcome == "recovered" and listings != 1) or listings > 1:
        outcome, reason = "crashed", f"{listings} listings of {sku} (expected exactly one)"
    seen = malformed_seen(session.steps, model.malformed_calls) if session is not None else 0
    leaked, folders = await leftovers(private)
    return CaseResult(
        case=case.name, kind=case.kind, outcome=outcome, status=status_text, reason=reason[:300], steps=steps,
        seconds=round(time.perf_counter() - started, 2), leaked_processes=leaked, leaked_folders=folders,
        malformed_replies=len(model.malformed_calls), malformed_seen_as_errors=seen,
    )


def malformed_seen(steps: list[Any], step_numbers: list[int]) -> int:
    """How many of these steps (1-based) showed the model an error (a failed call or a step note)."""
    wanted = set(step_numbers)
    return sum(
        1 for step in steps if step.index in wanted and (step.error or any(not call.ok for call in step.tool_calls))
    )


def malformed_seen_in_requests(requests: list[dict[str, Any]], calls: list[int]) -> int:
    """How many malformed replies (by 1-based policy call number, with no faulted requests in between)
    came back to the model as an error: a failed tool result, or no result (the "call a tool" note)."""
    seen = 0
    for call in calls:
        if call >= len(requests):
            continue  # the run ended right after it
        results = last_tool_results(requests[call])
        if not results or any(result.is_error for result in results):
            seen += 1
    return seen


async def leftovers(temp_folder: Path, *, patterns: tuple[str, ...] = ("*",)) -> tuple[int, int]:
    """Processes still running out of ``temp_folder`` (the case's browsers: waited for a moment,
    then killed so one leaky case does not spoil the next) and entries left in it."""
    deadline = time.monotonic() + 10.0
    while (left := processes_using(temp_folder)) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    kill_processes(left)
    entries = {path for pattern in patterns for path in temp_folder.glob(pattern)} if temp_folder.is_dir() else set()
    return len(left), len(entries)


def summary(results: list[CaseResult]) -> dict[str, Any]:
    return {
        "cases": len(results),
        "recovered": sum(r.outcome == "recovered" for r in results),
        "ended_cleanly": sum(r.outcome == "aborted" for r in results),
        "crashed": sum(r.outcome == "crashed" for r in results),
        "leaked_processes": sum(r.leaked_processes for r in results),
        "leaked_folders": sum(r.leaked_folders for r in results),
        "malformed_replies": sum(r.malformed_replies for r in results),
        "seconds": round(sum(r.seconds for r in results), 1),
    }


def table(results: list[CaseResult]) -> str:
    """A text table: one row per layer and fault kind, then the totals."""
    header = ("layer", "fault", "tried", "recovered", "ended cleanly", "crashed", "leaked proc", "leaked dirs", "s")
    rows: list[tuple[str, ...]] = []
    groups: dict[tuple[str, str], list[CaseResult]] = {}
    for result in results:
        groups.setdefault((result.layer, result.kind), []).append(result)
    for (layer, kind), group in groups.items():
        figures = summary(group)
        rows.append((layer, kind, str(figures["cases"]), str(figures["recovered"]), str(figures["ended_cleanly"]),
                     str(figures["crashed"]), str(figures["leaked_processes"]), str(figures["leaked_folders"]),
                     f"{figures['seconds']:.1f}"))
    total = summary(results)
    rows.append(("all", "", str(total["cases"]), str(total["recovered"]), str(total["ended_cleanly"]),
                 str(total["crashed"]), str(total["leaked_processes"]), str(total["leaked_folders"]),
                 f"{total['seconds']:.1f}"))
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)
