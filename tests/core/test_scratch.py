"""Temporary folders name their owning process; a later start removes the ones whose process is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from webtask_core.scratch import owned_temp_folder, remove_stale_folders


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_folders_of_dead_processes_are_removed_and_live_ones_kept(tmp_path: Path):
    mine = owned_temp_folder("webtask-browser-", parent=tmp_path)
    (mine / "profile").mkdir()
    assert mine.name.startswith(f"webtask-browser-{os.getpid()}.")
    dead = tmp_path / f"webtask-browser-{dead_pid()}.12345-abcd"
    (dead / "Default").mkdir(parents=True)
    # A live PID whose process started at another time: the PID was reused, the owner is gone.
    reused = tmp_path / f"webtask-browser-{os.getpid()}.1-wxyz"
    reused.mkdir()
    unowned = tmp_path / "webtask-browser-oldstyle"  # made by an older version: not ours to judge
    unowned.mkdir()
    other_prefix = tmp_path / f"webtask-resources-{dead_pid()}.1-abcd"
    other_prefix.mkdir()

    removed = remove_stale_folders("webtask-browser-", parent=tmp_path)

    assert sorted(removed) == sorted([dead, reused])
    assert mine.is_dir() and unowned.is_dir() and other_prefix.is_dir()
    assert not dead.exists() and not reused.exists()


def test_a_missing_temp_dir_is_no_error(tmp_path: Path):
    assert remove_stale_folders("webtask-browser-", parent=tmp_path / "nope") == []
