"""``webtask demo``: the offline batch-listing demo, on any machine with Python and a Chromium.

It starts the demo marketplace on 127.0.0.1, writes a manifest of a few listings with drawn product
photos into a local folder, and runs ``batch-listing-upload`` on Prefect's embedded server with the
scripted offline model (Claude when ``ANTHROPIC_API_KEY`` is set), showing each listing's progress
live. One listing (the last) is priced above the batch's approval rule, so its run pauses for a
person's approval before Publish; the demo answers that form through the Prefect API, as the UI's
Resume button does (demo_person.py). At the end: the summary, where to look, and one JSON line for
scripts.

Prefect reads its settings when imported, so :func:`prepare_environment` runs first and every
Prefect import here is inside a function.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from webtask_core.testing.demo_extra import require_demo_extra
from webtask_flows.listings.demo_person import DEMO_APPROVAL_PRICE, DEMO_APPROVAL_RULE, DemoReviewer

__all__ = [
    "prepare_environment", "DemoOptions", "run_demo", "write_demo_manifest", "require_demo_extra", "DEMO_USER",
    "DEMO_PASSWORD",
]

DEMO_USER, DEMO_PASSWORD = "demo", "demo-pass"
DEMO_SECRET_BLOCK = "webtask-demo-shop-password"
_POLL_S = 0.5


def prepare_environment() -> dict[str, str]:
    """Prefect settings for the demo, set before Prefect is imported; returns what was set.

    Without ``PREFECT_API_URL`` the demo uses Prefect's embedded (ephemeral) server, with a private
    ``PREFECT_HOME`` (``~/.webtask/demo/prefect``) unless one is configured, so it never touches
    your own profiles; ``prefect server start`` with that home shows the demo's runs afterwards.
    """
    chosen: dict[str, str] = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    if not os.environ.get("PREFECT_API_URL"):
        if not os.environ.get("PREFECT_HOME"):
            chosen["PREFECT_HOME"] = str(Path.home() / ".webtask" / "demo" / "prefect")
        chosen["PREFECT_SERVER_ALLOW_EPHEMERAL_MODE"] = "true"
        chosen["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "120"
    chosen.setdefault("PREFECT_LOGGING_LEVEL", os.environ.get("PREFECT_LOGGING_LEVEL", "WARNING"))
    for name, value in chosen.items():
        os.environ[name] = value
    # SQLite cannot create its database file in a folder that does not exist yet.
    Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser().mkdir(parents=True, exist_ok=True)
    return chosen


@dataclass
class DemoOptions:
    listings: int = 4
    concurrency: int = 2
    workdir: Path | None = None  # default: a temporary folder, removed at the end
    keep_open: bool = False  # keep the marketplace up until Ctrl+C
    latency_s: float = 0.0  # the scripted model's answer delay
    replay: bool = True  # the first listing records the flow, the rest replay it without the model
    approval: bool = True  # the last listing waits for a person's approval, which the demo gives


APPROVAL_PRICE = "640.00"  # the price of the listing that needs approval (above DEMO_APPROVAL_PRICE)


def write_demo_manifest(folder: Path, count: int, *, pricey_last: bool = False) -> Path:
    """``folder/manifest.jsonl`` and ``folder/photos/*.jpg`` (relative paths in the manifest);
    ``pricey_last``: the last listing costs :data:`APPROVAL_PRICE` (it will need approval)."""
    from webtask_flows.listings.etl_example import sample_products

    (folder / "photos").mkdir(parents=True, exist_ok=True)
    lines = []
    for row, photos in sample_products(count):
        for relative, content in zip(row["photos"], photos):
            (folder / relative).write_bytes(content)
        lines.append(json.dumps(row))
    if pricey_last:
        row = json.loads(lines[-1])
        lines[-1] = json.dumps({**row, "price": APPROVAL_PRICE})
    manifest = folder / "manifest.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    return manifest


async def _watch(console: Any, run_name: str, skus: list[str], titles: dict[str, str], shop: Any,
                 done: asyncio.Event, reviewer: DemoReviewer) -> None:
    """Redraw a table of the listings (state, steps, URL) from the Prefect API until ``done``; a
    listing run paused for a person is shown to ``reviewer``."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterId,
        FlowRunFilterName,
        FlowRunFilterParentFlowRunId,
    )
    from rich.live import Live

    rows: dict[str, tuple[str | None, int]] = dict.fromkeys(skus, ("waiting", 0))
    async with get_client() as client:
        with Live(_table(rows, titles, shop), console=console, refresh_per_second=4, transient=False) as live:
            parent_id = None
            while True:
                finished = done.is_set()  # one more poll after the batch ended, for the final states
                if parent_id is None:
                    parents = await client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[run_name])))
                    parent_id = parents[0].id if parents else None
                if parent_id is not None:
                    children = await client.read_flow_runs(
                        flow_run_filter=FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[parent_id])))
                    steps: dict[Any, int] = {}
                    if children:  # one call for every listing's step task runs
                        task_runs = await client.read_task_runs(
                            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run.id for run in children])))
                        for task_run in task_runs:
                            steps[task_run.flow_run_id] = steps.get(task_run.flow_run_id, 0) + 1
                    for run in children:
                        await reviewer.look(client, run)
                        if run.name in rows:
                            rows[run.name] = (run.state.name if run.state else "Pending", steps.get(run.id, 0))
                live.update(_table(rows, titles, shop))
                if finished:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(done.wait(), timeout=_POLL_S)
    console.print()


def _table(rows: dict[str, tuple[str | None, int]], titles: dict[str, str], shop: Any) -> Any:
    from rich.table import Table

    table = Table(title="batch-listing-upload", expand=False)
    for column in ("SKU", "title", "state", "steps", "listed at"):
        table.add_column(column)
    for sku, (state, steps) in rows.items():
        listed = shop.listing_by_sku(sku)
        colour = {"Completed": "green", "Running": "yellow", "Failed": "red", "Aborted": "red",
                  "Paused": "magenta"}.get(state or "", "dim")
        table.add_row(sku, titles[sku], f"[{colour}]{state}[/{colour}]", str(steps or ""),
                      urlsplit(listed[0].url).path if listed else "")
    return table


def _summary(results: list[Any]) -> Any:
    from rich.table import Table

    table = Table(title="Summary")
    for column in ("SKU", "status", "steps", "model calls", "replay", "read back", "tokens", "listing URL"):
        table.add_column(column)
    for result in results:
        colour = "green" if result.status == "completed" else "red"
        table.add_row(result.sku, f"[{colour}]{result.status}[/{colour}]", str(result.steps),
                      str(result.model_calls), result.replay, result.readback or "-", str(result.tokens),
                      result.listing_url or result.feedback[:60])
    return table


def _token_line(results: list[Any]) -> str:
    """What the listings cost in input tokens, on average: fresh input against cache reads."""
    ran = [result for result in results if result.tokens and not result.skipped]
    if not ran:
        return "No listing called the model in this run."
    fresh = sum(result.uncached_input_tokens for result in ran) / len(ran)
    cached = sum(result.usage.cache_read_tokens for result in ran) / len(ran)
    output = sum(result.usage.output_tokens for result in ran) / len(ran)
    return (f"Tokens per listing: {fresh / 1000:.1f}k fresh input, {cached / 1000:.1f}k input read from the prompt "
            f"cache (billed at about a tenth), {output / 1000:.1f}k output")


async def run_demo(console: Any, options: DemoOptions) -> dict[str, Any]:
    """Run the demo; returns the JSON-able outcome (also printed as the last line by the CLI)."""
    from prefect.blocks.system import Secret

    from webtask_core.testing import FakeAnthropicServer, MarketplaceListingPolicy
    from webtask_core.testing.marketplace import Marketplace
    from webtask_flows.listings.artifacts import cost_line, model_calls_line
    from webtask_flows.listings.batch import batch_listing_upload, batch_results
    from webtask_flows.listings.spend import read_batch_spend

    started = time.perf_counter()
    owned_workdir = options.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="webtask-demo-")) if options.workdir is None else Path(options.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    use_claude = bool(os.environ.get("ANTHROPIC_API_KEY"))
    # The demo's sessions and replay scripts stay in its own folder unless a store is configured.
    own_store = not os.environ.get("WEBTASK_SESSION_STORE")
    if own_store:
        os.environ["WEBTASK_SESSION_STORE"] = str(workdir / "sessions")
    own_traces = not os.environ.get("WEBTASK_TRACE_STORE")  # and the Playwright traces of listings that failed
    if own_traces:
        os.environ["WEBTASK_TRACE_STORE"] = str(workdir / "traces")
    try:
        manifest = write_demo_manifest(workdir, options.listings, pricey_last=options.approval)
        rows = [json.loads(line) for line in manifest.read_text().splitlines()]
        titles = {row["sku"]: row["title"] for row in rows}
        console.print(f"[bold]Manifest[/bold]: {manifest} ({len(rows)} listings, photos in {workdir / 'photos'})",
                      soft_wrap=True)
        async with Marketplace(users={DEMO_USER: DEMO_PASSWORD}) as shop:
            console.print(f"[bold]Marketplace[/bold]: {shop.url('/listings')} (log in as {DEMO_USER} / {DEMO_PASSWORD})",
                          soft_wrap=True)
            fake = None if use_claude else FakeAnthropicServer(MarketplaceListingPolicy(), latency_s=options.latency_s)
            if fake is not None:
                fake.start()
                os.environ["ANTHROPIC_BASE_URL"], os.environ["ANTHROPIC_API_KEY"] = fake.base_url, "offline-demo"
            console.print("[bold]Model[/bold]: " + ("Claude (ANTHROPIC_API_KEY is set)" if fake is None
                                                    else f"the scripted offline model at {fake.base_url}"))
            try:
                console.print("[dim]Starting Prefect (the embedded server takes a few seconds)...[/dim]")
                await Secret(value=DEMO_PASSWORD).asave(DEMO_SECRET_BLOCK, overwrite=True)
                run_name = f"demo-{int(time.time())}"
                done = asyncio.Event()
                reviewer = DemoReviewer(console)
                if options.approval:
                    console.print(f"[bold]Approval[/bold]: listings above {DEMO_APPROVAL_PRICE} wait for a person "
                                  f"before Publish ({rows[-1]['sku']} is at {APPROVAL_PRICE}); the demo answers "
                                  "the form through the Prefect API, as the UI does", soft_wrap=True)
                watcher = asyncio.create_task(_watch(console, run_name, list(titles), titles, shop, done, reviewer))
                try:
                    state = await batch_listing_upload.with_options(flow_run_name=run_name)(
                        manifest=str(manifest), site_url=shop.url("/listings"), username=DEMO_USER,
                        password_secret=DEMO_SECRET_BLOCK, max_concurrency=options.concurrency,
                        ledger=str(workdir / "ledger"), replay=options.replay, return_state=True,
                        approve_if=DEMO_APPROVAL_RULE if options.approval else None,
                        human={"timeout_s": 300, "poll_s": 1} if options.approval else None,
                    )
                finally:
                    done.set()
                    await watcher
                results = await batch_results(state)
                spend = await read_batch_spend(str(state.state_details.flow_run_id))  # the login's calls too
                console.print(_summary(results))
                console.print(_token_line(results))
                console.print(cost_line(results, spend).strip(), markup=False)
                if options.replay:
                    console.print(model_calls_line(results) or "No listing used replay.")
                reviewer.report(results)
                outcome = {
                    "status": "completed" if state.is_completed() else "failed",
                    "message": state.message,
                    "seconds": round(time.perf_counter() - started, 1),
                    "listings": [r.model_dump(mode="json", include={"sku", "status", "listing_url", "steps", "tokens",
                                                                    "usage", "model_calls", "replayed_steps", "replay",
                                                                    "readback"})
                                 for r in results],
                    "marketplace": [{"sku": item.sku, "url": item.url, "photos": len(item.photos)} for item in shop.listings()],
                    "person": [answer.as_json() for answer in reviewer.answered],
                }
                _where_to_look(console, shop, state)
                if options.keep_open:
                    console.print("[bold]The marketplace stays up until you press Ctrl+C.[/bold]")
                    await _wait_forever()
                return outcome
            finally:
                if fake is not None:
                    fake.stop()
    finally:
        if own_store:
            os.environ.pop("WEBTASK_SESSION_STORE", None)
        if own_traces:
            os.environ.pop("WEBTASK_TRACE_STORE", None)
        if owned_workdir:
            shutil.rmtree(workdir, ignore_errors=True)


async def _wait_forever() -> None:
    with contextlib.suppress(asyncio.CancelledError, KeyboardInterrupt):
        await asyncio.Event().wait()


def _where_to_look(console: Any, shop: Any, state: Any) -> None:
    from prefect.settings import PREFECT_API_URL, PREFECT_HOME
    from prefect.utilities.urls import url_for

    colour = "green" if state.is_completed() else "red"
    console.print(f"[{colour}]batch-listing-upload: {state.name}[/{colour}] — {state.message}")
    # soft_wrap: URLs and the command stay on one line, so they can be copied.
    console.print(f"Listings page: {shop.url('/listings')} (log in as {DEMO_USER} / {DEMO_PASSWORD}; "
                  "the marketplace stops when the demo ends unless you pass --keep-open)", soft_wrap=True)
    if PREFECT_API_URL.value():
        # The UI's address, not the API's: PREFECT_UI_URL, else the API URL without its /api.
        run_url = url_for("flow-run", obj_id=state.state_details.flow_run_id)
        console.print(f"Prefect UI: the batch run is at {run_url}", soft_wrap=True)
    else:
        console.print("Prefect UI: run", soft_wrap=True)
        # The venv's own prefect: a new user has not activated the virtual environment.
        prefect_bin = Path(sys.executable).with_name("prefect")
        console.print(f"  [bold]PREFECT_HOME={PREFECT_HOME.value()} {prefect_bin} server start[/bold]", soft_wrap=True)
        console.print("and open http://127.0.0.1:4200 to see the batch, each listing's run and their artifacts",
                      soft_wrap=True)
