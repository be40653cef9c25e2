"""Browser round trips per replayed listing: what replay asks of Chromium beyond the actions themselves.

Every request this process sends to Playwright's driver passes through one function of its client
(``Connection.send_message_to_server``); this benchmark wraps it and counts each message by the
Playwright method (``Frame.evaluate``, ``Page.screenshot``, ``Mouse.move``...) and by the innermost
``webtask_core`` function that asked for it (``stabilise._next_frame``, ``motion.settle_motion``...).
Fire-and-forget messages (``__waitInfo__``: a waiter's log line, no reply) are counted apart.

On the demo marketplace (the scripted model, no latency), one listing records the script, then
``--listings`` listings replay it; the counts are per replayed listing (their mean), with the replayed
steps, and for comparison the hand-written Playwright listing on the same path (``hand_listing.py``).
Ends with one JSON line.

    .venv/bin/python benchmarks/round_trips.py [--listings 3] [--top 25]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hand_listing import hand_listing
from PIL import Image
from playwright._impl.connection import Connection
from replay import PASSWORD, fields, list_one

from webtask_core.browser import Browser, BrowserConfig
from webtask_core.replay import Replay, ScriptStore, script_key
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM, MarketplaceListingPolicy
from webtask_core.testing.marketplace import Layout, Marketplace

_FIRE_AND_FORGET = {"__waitInfo__"}


class RoundTrips:
    """Counts the messages this process sends to Playwright's driver, by method and by asker."""

    def __init__(self) -> None:
        self.by_method: Counter[str] = Counter()
        self.by_caller: Counter[str] = Counter()
        self.one_way = 0
        self.events: Counter[str] = Counter()  # messages the driver sent on its own: events, objects made
        self.sent_bytes = 0  # the asked messages' parameters as JSON (scripts sent whole weigh here)

    @property
    def total(self) -> int:
        return sum(self.by_method.values())

    def reset(self) -> None:
        self.by_method.clear()
        self.by_caller.clear()
        self.events.clear()
        self.one_way = 0
        self.sent_bytes = 0

    @contextmanager
    def counting(self) -> Iterator[RoundTrips]:
        original = Connection.send_message_to_server
        counter = self

        def counted(connection: Connection, owner: Any, method: str, params: Any, options: Any) -> Any:
            if method in _FIRE_AND_FORGET:
                counter.one_way += 1
            else:
                counter.by_method[f"{owner._type}.{method}"] += 1
                counter.by_caller[_asker()] += 1
                counter.sent_bytes += len(json.dumps(params, default=str))
            return original(connection, owner, method, params, options)

        dispatch = Connection.dispatch

        def received(connection: Connection, message: dict[str, Any]) -> None:
            if not message.get("id"):
                method = message.get("method") or "?"
                if method == "__create__":
                    method += ":" + str((message.get("params") or {}).get("type"))
                else:
                    owner = connection._objects.get(message.get("guid") or "")
                    method = f"{getattr(owner, '_type', '?')}.{method}"
                counter.events[method] += 1
            dispatch(connection, message)

        Connection.send_message_to_server = counted  # type: ignore[method-assign]
        Connection.dispatch = received  # type: ignore[method-assign]
        try:
            yield self
        finally:
            Connection.send_message_to_server = original  # type: ignore[method-assign]
            Connection.dispatch = dispatch  # type: ignore[method-assign]


# The asker of each task's messages when the task's own stack holds none of ours: a coroutine of
# Playwright's wrapped in a task by ``asyncio.wait_for`` or ``gather`` is asked for by who made the task.
_TASK_ASKERS: dict[asyncio.Task[Any], str] = {}


def _asker(depth: int = 2) -> str:
    """The innermost webtask_core function on the stack (or of the task's creator): who asked."""
    frame = sys._getframe(depth)
    while frame is not None:
        path = frame.f_code.co_filename
        if "webtask_core" in path:
            return f"{Path(path).stem}.{frame.f_code.co_name}"
        frame = frame.f_back  # type: ignore[assignment]
    task = asyncio.current_task()
    return _TASK_ASKERS.get(task, "not ours (events, the benchmark)") if task is not None else "no task"


def _remember_asker(loop: asyncio.AbstractEventLoop, coro: Any, **options: Any) -> asyncio.Task[Any]:
    task = asyncio.Task(coro, loop=loop, **options)
    _TASK_ASKERS[task] = _asker(depth=1)
    task.add_done_callback(lambda done: _TASK_ASKERS.pop(done, None))
    return task


def _per(counter: Counter[str], listings: int, top: int) -> dict[str, float]:
    return {key: round(count / listings, 1) for key, count in counter.most_common(top)}


async def run(listings: int, top: int) -> dict[str, Any]:
    asyncio.get_running_loop().set_task_factory(_remember_asker)
    counter = RoundTrips()
    with tempfile.TemporaryDirectory() as folder, Marketplace(users={"demo": PASSWORD}, layout=Layout()) as shop:
        photos = [Path(folder) / "front.jpg", Path(folder) / "back.png"]
        Image.new("RGB", (800, 600), (200, 30, 90)).save(photos[0], "JPEG")
        Image.new("RGB", (600, 600), (20, 120, 200)).save(photos[1], "PNG")
        store = ScriptStore(LocalSessionStore(Path(folder) / "sessions"))
        llm = FakeLLM(MarketplaceListingPolicy(), latency_s=0.0)
        browser = await Browser.launch(BrowserConfig())
        rows = []
        try:
            with counter.counting():
                for number in range(listings + 1):
                    data = fields(f"RT-{number:03d}", number + 2, shop.url("/listings"))  # photos 1, 2, 1...
                    if number == 1:
                        counter.reset()  # the first listing records the script: not counted
                    rows.append(await list_one(llm, browser, photos, data, Replay(
                        key=script_key("listing-task", "demo-marketplace"), params=data, store=store,
                        identifying=("sku", "title"))))
                replayed = RoundTrips()
                replayed.by_method, replayed.by_caller, replayed.one_way, replayed.events = (
                    Counter(counter.by_method), Counter(counter.by_caller), counter.one_way, Counter(counter.events))
                replayed.sent_bytes = counter.sent_bytes
                counter.reset()
                for number in range(listings):
                    data = fields(f"HD-{number:03d}", number + 3, shop.url("/listings"))
                    await hand_listing(browser._browser, photos, data, password=PASSWORD,  # type: ignore[arg-type]
                                       path="recorded")
                by_hand, hand_events = counter.total / listings, sum(counter.events.values()) / listings
        finally:
            await browser.close()
            asyncio.get_running_loop().set_task_factory(None)
    outcomes = [row["replay"] for row in rows]
    steps = [row["model_calls"] for row in rows]
    per_listing = replayed.total / listings
    print(f"outcomes {outcomes}, model calls {steps}")
    print(f"round trips per replayed listing: {per_listing:.1f} (by hand on the same path: {by_hand:.1f}); "
          f"one-way messages {replayed.one_way / listings:.1f}; "
          f"{replayed.sent_bytes / listings / 1024:.0f} KiB of parameters sent per replayed listing")
    print(f"messages the driver sent unasked (events, objects it made) per replayed listing: "
          f"{sum(replayed.events.values()) / listings:.1f} (by hand: {hand_events:.1f})")
    for key, value in _per(replayed.events, listings, top).items():
        print(f"  {value:7.1f}  {key}")
    print("by method:")
    for key, value in _per(replayed.by_method, listings, top).items():
        print(f"  {value:7.1f}  {key}")
    print("by asker:")
    for key, value in _per(replayed.by_caller, listings, top).items():
        print(f"  {value:7.1f}  {key}")
    return {"benchmark": "round_trips", "listings": listings, "outcomes": outcomes,
            "round_trips_per_replayed_listing": round(per_listing, 1),
            "kib_sent_per_replayed_listing": round(replayed.sent_bytes / listings / 1024, 1),
            "round_trips_per_hand_listing": round(by_hand, 1),
            "events_per_replayed_listing": round(sum(replayed.events.values()) / listings, 1),
            "events_per_hand_listing": round(hand_events, 1), "events": _per(replayed.events, listings, top),
            "by_method": _per(replayed.by_method, listings, top), "by_asker": _per(replayed.by_caller, listings, top),
            "load_average": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listings", type=int, default=3, help="replayed listings counted (after the recording)")
    parser.add_argument("--top", type=int, default=25, help="rows by method and by asker")
    args = parser.parse_args()
    outcome = asyncio.run(run(args.listings, args.top))
    print(json.dumps(outcome))
    if any(kind != "replayed" for kind in outcome["outcomes"][1:]):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
