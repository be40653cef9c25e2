"""A time limit that holds even when what it limits cannot stop.

``asyncio.wait_for`` cancels what ran out of time and then waits for it to finish. Code cancelled
while it talked to a page whose script spins forever may still have cleanup to do in that page
(detaching a CDP session, releasing an object group, reading a frame's element), and a renderer
stuck in a loop never answers it: the limit becomes a hang (Python 3.11's ``wait_for`` can also lose
a cancellation that races with the result). ``within`` gives the cancelled work a moment to clean up,
then leaves it behind; it ends by itself once the tab is closed or the page answers again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["within", "clean_up", "CLEANUP_S"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

CLEANUP_S = 0.5  # how long cancelled work may take to clean up before it is left behind


async def within(awaitable: Awaitable[T], limit: float, *, cleanup_s: float = CLEANUP_S) -> T:
    """The result of ``awaitable``, or TimeoutError after ``limit`` seconds (plus at most
    ``cleanup_s`` for its cancellation). Cancelling the caller cancels it without waiting for it."""
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=limit)
    except asyncio.CancelledError:
        _leave(task)
        raise
    if done:
        return task.result()
    _leave(task)
    await asyncio.wait({task}, timeout=cleanup_s)
    raise TimeoutError(f"no answer within {limit:g} s")


async def clean_up(awaitable: Awaitable[object]) -> None:
    """Await cleanup in a page (detach a CDP session, release objects) for at most CLEANUP_S, then
    go on without it: a renderer stuck in a script never answers."""
    with contextlib.suppress(TimeoutError):
        await within(awaitable, CLEANUP_S, cleanup_s=0)


def _leave(task: asyncio.Future[T]) -> None:
    """Cancel ``task`` and make sure what it ends with is read (no 'never retrieved' warning)."""
    task.cancel()
    task.add_done_callback(_read_outcome)


def _read_outcome(task: asyncio.Future[T]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.debug("work left behind after its time limit ended with: %s", task.exception())
