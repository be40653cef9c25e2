"""What reading a listing back costs: time and model calls per listing, replayed and live.

On the demo marketplace with the scripted model answering after ``--latency`` seconds (0.5 s by
default), through ``Agent.do(readback=...)``:

1. live: ``--live`` listings the model lists; each read-back is one model call (the page read into the
   listing's fields) judged in code;
2. replayed: the first listing records the replay script (and, read back by the model, the listing
   page's templates), the next ``--listings`` replay it; each read-back is checked in code against the
   templates — no model call;
3. the same replayed listings without the read-back (``verify="off"``), interleaved with phase 2 so
   both see the same machine load: what a replayed listing takes without it.

Prints per phase the read-back's median time (open the listing's page, read it, judge it), its model
calls, and its share of a replayed listing's time (target: at most 5 %, and 0 model calls when
replayed); checks that every listing passed its read-back and was published once; then, with the
site storing what was typed otherwise (VAT added, quantity capped, title cut), that every listing —
replayed and live — ends a mismatch naming exactly those fields. Ends with one JSON line. The
default runs in about a minute.

    .venv/bin/python benchmarks/readback.py [--listings 6] [--live 2] [--latency 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from PIL import Image
from pydantic import SecretStr

from webtask_core import Agent
from webtask_core.browser import Browser, BrowserConfig
from webtask_core.readback import ReadBack
from webtask_core.replay import Replay, ScriptStore, script_key
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM, MarketplaceListingPolicy
from webtask_core.testing.marketplace import Alterations, Layout, Marketplace
from webtask_core.worker import WorkerOptions

PASSWORD = "demo-pass"
CATEGORIES = ["Women's Shoes", "Bags", "Jewelry", "Home", "Toys"]
CHECKED = ("sku", "title", "description", "price", "category", "condition", "quantity", "photos")


def fields(sku: str, number: int, site_url: str) -> dict[str, Any]:
    return {"sku": sku, "title": f"Item {sku} in very good condition, with its box and papers",
            "description": f"A fine item.\nNumber {number}.",
            "price": f"{10 + number}.50", "category": CATEGORIES[number % len(CATEGORIES)], "condition": "Good",
            "quantity": str(6 + number % 3), "photos": ["photo_1", "photo_2"][: 1 + number % 2], "username": "demo",
            "password": "{{secret:shop_password}}", "site_url": site_url}


async def list_one(llm: FakeLLM, browser: Browser, photos: list[Path], data: dict[str, Any], *,
                   store: ScriptStore | None, verify: str = "always") -> dict[str, Any]:
    before = len(llm.requests)
    started = time.perf_counter()
    tab = await browser.new_tab()
    try:
        agent = Agent(llm, browser=tab, options=WorkerOptions(secrets={"shop_password": SecretStr(PASSWORD)}),
                      resources={"photo_1": photos[0], "photo_2": photos[1]})
        replay = None if store is None else Replay(key=script_key("listing-task", "demo-marketplace"), params=data,
                                                   store=store, identifying=("sku", "title"))
        task = f"Create a listing, then report its URL.\n```json\n{json.dumps(data, indent=2)}\n```"
        result = await agent.do(task, max_steps=25, replay=replay, verify=verify,  # type: ignore[arg-type]
                                readback=ReadBack(fields={name: data[name] for name in CHECKED}))
    finally:
        await tab.close()
    readback = result.readback
    return {"sku": data["sku"], "status": result.status.value, "seconds": time.perf_counter() - started,
            "model_calls": len(llm.requests) - before, "replay": result.replay, "readback": readback.status,
            "method": readback.method, "readback_ms": readback.duration_ms, "readback_calls": readback.model_calls,
            "mismatched": sorted(check.field for check in readback.mismatches), "feedback": result.feedback}


def figures(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    readback_ms = statistics.median(row["readback_ms"] for row in rows) if rows else 0.0
    seconds = statistics.median(row["seconds"] for row in rows) if rows else 0.0
    calls = sum(row["readback_calls"] for row in rows) / max(1, len(rows))
    print(f"{name:>22}: {len(rows)} listing(s), median {seconds:.2f} s per listing, read-back median "
          f"{readback_ms:.0f} ms and {calls:.2f} model call(s) ({', '.join(sorted({row['method'] for row in rows}))})")
    return {"listings": len(rows), "seconds_per_listing": round(seconds, 3), "readback_ms": round(readback_ms, 1),
            "readback_model_calls_per_listing": round(calls, 2), "outcomes": [row["readback"] for row in rows]}


async def run(listings: int, live: int, latency_s: float) -> dict[str, Any]:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder, Marketplace(users={"demo": PASSWORD}, layout=Layout()) as shop:
        photos = [Path(folder) / "front.jpg", Path(folder) / "back.png"]
        Image.new("RGB", (800, 600), (200, 30, 90)).save(photos[0], "JPEG")
        Image.new("RGB", (600, 600), (20, 120, 200)).save(photos[1], "PNG")
        store = ScriptStore(LocalSessionStore(Path(folder) / "sessions"))
        llm = FakeLLM(MarketplaceListingPolicy(), latency_s=latency_s)
        browser = await Browser.launch(BrowserConfig())
        site = shop.url("/listings")
        try:
            live_rows = [await list_one(llm, browser, photos, fields(f"LIVE-{n}", n, site), store=None)
                         for n in range(1, live + 1)]
            recording = await list_one(llm, browser, photos, fields("REC-1", 0, site), store=store)
            replayed, without = [], []
            for number in range(1, listings + 1):
                replayed.append(await list_one(llm, browser, photos, fields(f"REP-{number}", number, site), store=store))
                without.append(await list_one(llm, browser, photos, fields(f"OFF-{number}", number, site), store=store,
                                              verify="off"))
            shop.set_alterations(Alterations.parse("vat,quantity,title"))
            altered = [await list_one(llm, browser, photos, fields(f"ALT-{n}", n, site), store=store)
                       for n in range(1, 3)]
            altered.append(await list_one(llm, browser, photos, fields("ALT-LIVE", 3, site), store=None))
        finally:
            await browser.close()
        published: dict[str, int] = {}
        for listing in shop.listings():
            published[listing.sku] = published.get(listing.sku, 0) + 1
    print(f"The recording: read back by the model ({recording['readback']}, {recording['readback_ms']:.0f} ms); "
          "its templates kept for the replays")
    live_figures = figures("live (model reads)", live_rows)
    replay_figures = figures("replayed (in code)", replayed)
    off_figures = figures("replayed, no read-back", [row | {"readback_ms": 0.0, "readback_calls": 0} for row in without])
    share = replay_figures["readback_ms"] / 1000 / max(replay_figures["seconds_per_listing"], 1e-9)
    share_of_off = replay_figures["readback_ms"] / 1000 / max(off_figures["seconds_per_listing"], 1e-9)
    passed = all(row["readback"] == "passed" and row["status"] == "completed" for row in
                 [*live_rows, recording, *replayed]) and all(row["readback"] == "skipped" for row in without)
    once = all(count == 1 for count in published.values()) and len(published) == live + 1 + 2 * listings + 3
    caught = all(row["status"] == "mismatch" and row["mismatched"] == ["price", "quantity", "title"] for row in altered)
    replayed_calls = sum(row["model_calls"] for row in replayed if row["replay"] == "replayed")
    print(f"A replayed listing's read-back takes {share:.1%} of its time ({share_of_off:.1%} of a replayed listing "
          f"without it; target at most 5 %) and {replay_figures['readback_model_calls_per_listing']:.0f} model calls "
          f"(the replayed listings made {replayed_calls} in all); a live one's takes "
          f"{live_figures['readback_ms']:.0f} ms and 1 model call. "
          f"{'Every listing passed its read-back' if passed else 'NOT every listing passed its read-back'}, "
          f"{'each published once' if once else 'NOT each published once'}; the site storing what was typed otherwise: "
          f"{'every listing a mismatch naming price, quantity, title' if caught else 'NOT every listing caught'} "
          f"({', '.join(row['method'] for row in altered)}).")
    return {"benchmark": "readback", "latency_s": latency_s, "load_average": load, "live": live_figures,
            "replayed": replay_figures, "replayed_without_readback": off_figures,
            "readback_share_of_replayed_listing": round(share, 4),
            "readback_share_of_replayed_listing_without_it": round(share_of_off, 4),
            "readback_model_calls_replayed": replay_figures["readback_model_calls_per_listing"],
            "readback_model_calls_live": live_figures["readback_model_calls_per_listing"],
            "all_passed": passed, "all_published_once": once, "alterations_caught": caught,
            "seconds": round(time.perf_counter() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listings", type=int, default=5, help="replayed listings (each beside one without read-back)")
    parser.add_argument("--live", type=int, default=2, help="live listings (the model reads their pages back)")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the scripted model takes per call")
    args = parser.parse_args()
    outcome = asyncio.run(run(args.listings, args.live, args.latency))
    print(json.dumps(outcome))
    if not (outcome["all_passed"] and outcome["all_published_once"] and outcome["alterations_caught"]):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
