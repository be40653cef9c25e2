"""Temporary folders that name the process that made them, so what a killed process left behind
is removed the next time one starts.

A process that ends normally removes its own folders. One that is killed (SIGKILL, an out-of-memory
kill, a worker that died mid-batch) cannot, and a browser profile or a batch's photos left in the
temp dir every night add up. So a folder is named ``<prefix><pid>.<process start>-<random>``: a
later start removes those whose process is gone — including a PID the system has since given to a
new process, which the start time tells apart.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

__all__ = ["owned_temp_folder", "remove_stale_folders"]

logger = logging.getLogger(__name__)

_OWNER = re.compile(r"^(\d+)\.(\d+)-")


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), None where /proc has no answer."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # Field 22; the command name (field 2) may hold spaces, so count from its closing ")".
            return stat.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def _owner_tag() -> str:
    pid = os.getpid()
    return f"{pid}.{_start_time(pid) or 0}"


def owned_temp_folder(prefix: str, *, parent: str | Path | None = None) -> Path:
    """A new folder ``<prefix><pid>.<start>-XXXX`` in ``parent`` (default: the temp dir)."""
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{_owner_tag()}-", dir=parent))


def _is_running(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    now = _start_time(pid)
    # Where start times are unknown (no /proc), a live PID is taken to be the owner.
    return now is None or started == "0" or now == started


def remove_stale_folders(prefix: str, *, parent: str | Path | None = None) -> list[Path]:
    """Remove this prefix's folders whose owning process no longer runs; returns what was removed.

    Folders without an owner in their name (made by older versions) are left alone."""
    root = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    removed = []
    try:
        candidates = list(root.glob(f"{prefix}*"))
    except OSError as error:  # an unreadable temp dir is no reason to fail a start
        logger.warning("could not look for stale %s* folders in %s: %s", prefix, root, error)
        return []
    for folder in candidates:
        owner = _OWNER.match(folder.name[len(prefix):])
        if owner is None or not folder.is_dir() or _is_running(int(owner[1]), owner[2]):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder)
    if removed:
        logger.info("removed %d folder(s) left by processes that no longer run: %s", len(removed),
                    ", ".join(path.name for path in removed))
    return removed
