"""How runs started in this process signal the flow that started them. Prefect-free and generic: a
batch (or any parent flow) uses them, ``run-webtask`` answers them.

- **Starts, one at a time.** Starting a subflow run costs Prefect a few API writes (the parent's
  tracking task run, the flow run, its Running state). Against Prefect's SQLite server, writes made
  at the same moment get ``SQLITE_BUSY``, the API answers 503 and the client backs off 2, 4, 8 s: five
  trivial subflows started together took 2.5-6.5 s to get going, one after another 0.13 s each
  (Prefect 3.8, 2 cores). So :class:`SubflowStarts` starts one run, waits until its body runs
  (``run-webtask`` calls :func:`note_run_started` once it holds its session lock, its first API
  write) or it ended, then starts the next; the runs themselves overlap as before. The parent's own
  API writes (a progress artifact) take the same turn (:meth:`SubflowStarts.exclusive`). A turn lasts
  at most ``turn_s`` (1 s): a start not going by then is most often one whose write got a 503: Prefect's
  client sleeps 2, 4, 8 s before it tries again, writing nothing; held for it, the turn kept every
  other start waiting (3.2 s a start on average, 15 s at worst, 4 listings at a time on 2 cores).
- **A session still being saved.** A parent that starts a run which will save a session (a site
  login) can :func:`announce_session` its future; runs started in that block that read the key
  (``login_session_key``) start at once — flow run, downloads — and :func:`wait_for_announced_session`
  just before they need it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["SubflowStarts", "note_run_started", "announce_session", "wait_for_announced_session"]

T = TypeVar("T")

_STARTED: ContextVar[asyncio.Event | None] = ContextVar("webtask_run_started", default=None)


def note_run_started() -> None:
    """Called by a flow's body: the batch that started it may start the next run now."""
    started = _STARTED.get()
    if started is not None:
        started.set()


# A start whose writes are answered gets going in 0.1-0.9 s (4 listings at a time on 2 cores).
START_TURN_S = 1.0


class SubflowStarts:
    """``await starts.run(lambda: some_flow(..., return_state=True))``: one start at a time, each
    for at most ``turn_s`` seconds."""

    def __init__(self, turn_s: float = START_TURN_S) -> None:
        self._lock = asyncio.Lock()
        self._turn_s = turn_s

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Hold off starts while the caller writes to the API (waits for a start under way)."""
        async with self._lock:
            yield

    async def run(self, start: Callable[[], Awaitable[T]]) -> T:
        started = asyncio.Event()
        run: asyncio.Future[T] | None = None
        try:
            async with self._lock:
                token = _STARTED.set(started)
                try:
                    run = asyncio.ensure_future(start())  # the new task copies the context: it sees `started`
                finally:
                    _STARTED.reset(token)
                signal = asyncio.ensure_future(started.wait())
                try:
                    await asyncio.wait([run, signal], timeout=self._turn_s, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    signal.cancel()
            return await run
        finally:
            if run is not None and not run.done():  # we were cancelled: so is the run
                run.cancel()


# In-process runs started while a run that saves the key still runs wait for it (see announce_session).
_ANNOUNCED: ContextVar[dict[str, asyncio.Future[str | None]] | None] = ContextVar("webtask_announced_sessions",
                                                                                   default=None)


@contextlib.contextmanager
def announce_session(session_key: str, saved: asyncio.Future[str | None]) -> Iterator[None]:
    """Runs started in this block (in-process subflows inherit it) that read ``session_key`` wait for
    ``saved`` first (its result: the key once saved, None when the run saving it failed)."""
    announced = {**(_ANNOUNCED.get() or {}), session_key: saved}
    token = _ANNOUNCED.set(announced)
    try:
        yield
    finally:
        _ANNOUNCED.reset(token)


async def wait_for_announced_session(session_key: str) -> bool:
    """False when a session announced for this key in this process was not saved; else True (none
    announced, or it was saved). Waiting never cancels the run saving it."""
    saved = (_ANNOUNCED.get() or {}).get(session_key)
    if saved is None or saved.get_loop() is not asyncio.get_running_loop():
        return True
    return await asyncio.shield(saved) is not None
