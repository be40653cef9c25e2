"""What a test leaves running: Chromium processes below this process, browser temp folders; and the CPU
time a benchmark's process tree used (Linux /proc)."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Set as AbstractSet
from pathlib import Path

__all__ = ["chromium_processes", "processes_using", "kill_processes", "browser_temp_folders", "tree_cpu_seconds",
           "cpu_by_part"]


def _stats() -> dict[int, list[str]]:
    """/proc/PID/stat of every process, the fields after the program name (state first)."""
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                stats[int(entry)] = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue  # it ended while we looked
    return stats


def _children(stats: dict[int, list[str]] | None = None, *, running_only: bool = True) -> dict[int, list[int]]:
    """Parent pid -> child pids (by default without zombies: they are not running)."""
    children: dict[int, list[int]] = {}
    for pid, fields in (_stats() if stats is None else stats).items():
        if not running_only or fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(pid)
    return children


def tree_cpu_seconds() -> float | None:
    """CPU seconds used so far by this process and every process below it, including the children
    they have already reaped (Chromium's closed renderers); None where there is no /proc."""
    if not os.path.isdir("/proc"):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    stats = _stats()
    children = _children(stats, running_only=False)  # an exited child's time counts until it is reaped
    total, stack = 0.0, [os.getpid()]
    while stack:
        pid = stack.pop()
        if pid in stats:  # utime, stime, cutime, cstime
            total += sum(int(value) for value in stats[pid][11:15]) / tick
        stack.extend(children.get(pid, []))
    return total


def _program(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read().split(b"\0", 1)[0].decode(errors="replace").rsplit("/", 1)[-1].lower()
    except (FileNotFoundError, ProcessLookupError):
        return ""


def chromium_processes(*, main_only: bool = False, excluding: AbstractSet[int] = frozenset()) -> set[int]:
    """Running Chromium processes started (directly or not) by this process; with ``main_only``
    just the browser processes, not their renderers and helpers.

    ``excluding``: processes to leave out together with everything below them. Pass the browsers
    that were already running when a test started (``chromium_processes(main_only=True)`` then; e.g.
    a session-wide browser fixture) to count only what the test itself started.
    """
    children = _children()
    found: set[int] = set()
    stack = [(os.getpid(), False)]
    while stack:
        pid, under_chromium = stack.pop()
        for child in children.get(pid, []):
            if child in excluding:
                continue
            is_chromium = "chrom" in _program(child)
            if is_chromium and not (main_only and under_chromium):
                found.add(child)
            stack.append((child, under_chromium or is_chromium))
    return found


def processes_using(folder: Path) -> set[int]:
    """Processes whose temp folder (TMPDIR) or command line lies inside ``folder``, wherever they are in
    the process tree: a Browser points Chromium's TMPDIR into its own folder, and every Chromium
    child inherits it, so this finds a test's browser processes even after they were orphaned, and
    not the browsers of other tests running at the same time."""
    marker = str(folder).encode()
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as file:
                environ = file.read()
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                cmdline = file.read()
            with open(f"/proc/{entry}/stat") as stat:
                state = stat.read().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue  # gone, or not ours to read
        if state == "Z":
            continue
        if b"TMPDIR=" + marker in environ or marker in cmdline:
            found.add(int(entry))
    return found


def kill_processes(pids: set[int]) -> int:
    """SIGKILL these processes (as a crash would); how many were still there to kill."""
    killed = 0
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            continue  # already gone
    return killed


def browser_temp_folders() -> set[Path]:
    """The per-Browser temporary folders that exist now (``webtask-browser-*`` in the temp dir)."""
    return set(Path(tempfile.gettempdir()).glob("webtask-browser-*"))


def _thread_cpu_seconds(tid: int, tick: int) -> float:
    try:
        with open(f"/proc/self/task/{tid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0  # the thread ended
    return (int(fields[11]) + int(fields[12])) / tick


def cpu_by_part(*, excluding_threads: AbstractSet[int] = frozenset()) -> dict[str, float] | None:
    """CPU seconds used so far, split by who used it: ``chromium`` (every Chromium process below this
    one, with the renderers they reaped), ``driver`` (the other child processes: Playwright's node
    driver) and ``python`` (this process's threads but ``excluding_threads``, native ids: a test
    server running in a thread of this process is not the code under measure), and ``reaped``: the
    children that ended and were reaped (a closed browser's driver and Chromium). None without /proc."""
    if not os.path.isdir("/proc"):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    python = sum(_thread_cpu_seconds(int(tid), tick) for tid in os.listdir("/proc/self/task")
                 if int(tid) not in excluding_threads)
    stats = _stats()
    children = _children(stats, running_only=False)
    # Children this process reaped already (a closed Browser's driver, with the Chromium it reaped).
    reaped = sum(int(value) for value in stats[os.getpid()][13:15]) / tick if os.getpid() in stats else 0.0
    parts = {"chromium": 0.0, "driver": 0.0, "python": python, "reaped": reaped}
    stack = [(child, False) for child in children.get(os.getpid(), [])]
    while stack:
        pid, under_chromium = stack.pop()
        if pid not in stats:
            continue
        is_chromium = under_chromium or "chrom" in _program(pid) or "headless_shell" in _program(pid)
        part = "chromium" if is_chromium else "driver"
        # A reaped child's time is in its parent's cutime/cstime: Chromium's closed renderers count.
        parts[part] += sum(int(value) for value in stats[pid][11:15]) / tick
        stack.extend((child, is_chromium) for child in children.get(pid, []))
    return parts
