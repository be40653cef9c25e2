"""Helpers for the browser tests: finding our own Chromium processes through /proc."""

from __future__ import annotations

import asyncio
import os
import time
from collections import defaultdict
from pathlib import Path


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _is_running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is already dead


def descendant_pids(root: int | None = None) -> set[int]:
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        children[int(stat.rsplit(")", 1)[1].split()[1])].append(int(entry))
    found: set[int] = set()
    stack = [root or os.getpid()]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def chromium_pids() -> set[int]:
    """Running Chromium processes started (indirectly) by this test process."""
    return {
        pid for pid in descendant_pids()
        if _is_running(pid) and any("chrom" in part for part in _cmdline(pid)[:1])
    }


def browser_main_process(pids: set[int]) -> tuple[int, Path]:
    """The Chromium browser process among `pids` and its --user-data-dir (the temporary profile)."""
    for pid in pids:
        args = _cmdline(pid)
        if any(arg.startswith("--type=") for arg in args):
            continue
        for arg in args:
            if arg.startswith("--user-data-dir="):
                return pid, Path(arg.split("=", 1)[1])
    raise AssertionError(f"no Chromium browser process among {sorted(pids)}")


def wait_until(condition, timeout_s: float = 10.0) -> bool:
    """Poll `condition` until it holds or `timeout_s` passes (process exit is asynchronous)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def still_running(pids: set[int]) -> set[int]:
    return {pid for pid in pids if _is_running(pid)}


async def wait_until_async(condition, timeout_s: float = 10.0) -> bool:
    """Like wait_until, but lets the event loop run (Playwright's events arrive on it)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()
