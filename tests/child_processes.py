"""A server a test starts dies with the test process: a run killed from outside (CI's time limit, a
killed pytest-xdist worker, Ctrl+C twice) must not leave a Prefect server or a Django app running —
one left from a killed run was still serving an hour later. Linux's parent-death signal does it;
elsewhere the tests' own teardown is all there is."""

from __future__ import annotations

import ctypes
import signal
import sys

__all__ = ["die_with_parent"]

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """``preexec_fn`` for ``subprocess.Popen``: SIGTERM to the child when the thread that started it
    ends — start servers from the test's own thread, never from a worker thread."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
