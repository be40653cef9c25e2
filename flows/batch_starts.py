"""Start a batch's in-process subflow runs one at a time; let them run side by side.

Starting a subflow run costs Prefect a few API writes (the parent's tracking task run, the flow run,
its Running state). Against Prefect's SQLite server, writes made at the same moment get
``SQLITE_BUSY``, the API answers 503 and the client backs off 2, 4, 8 s: five trivial subflows started
together took 2.5-6.5 s to get going, one after another 0.13 s each (Prefect 3.8, 2 cores). So the
batch starts one run, waits until its body runs (``run-webtask`` calls :func:`note_run_started`
once it holds its session lock, its first API write) or it ended, then starts the next; the runs themselves overlap as before. The batch's
own API writes (its progress artifact) take the same turn (:meth:`SubflowStarts.exclusive`): one
landing on a start cost the start a 2 s back-off after every listing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["SubflowStarts", "note_run_started"]

T = TypeVar("T")

_STARTED: ContextVar[asyncio.Event | None] = ContextVar("webtask_run_started", default=None)


def note_run_started() -> None:
    """Called by a flow's body: the batch that started it may start the next run now."""
    started = _STARTED.get()
    if started is not None:
        started.set()


class SubflowStarts:
    """``await starts.run(lambda: some_flow(..., return_state=True))``: one start at a time."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()

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
                    await asyncio.wait([run, signal], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    signal.cancel()
            return await run
        finally:
            if run is not None and not run.done():  # we were cancelled: so is the run
                run.cancel()
