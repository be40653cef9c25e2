"""Carry a TaskRecord and the browser's storage state from one flow run to the next.

Documents live in a :class:`~webtask_core.storage.SessionStore` (a local folder by default, an S3
prefix when ``WEBTASK_SESSION_STORE`` or ``location`` is ``s3://bucket/prefix/``). Runs that share a
session key are serialised by a Prefect global concurrency limit ``webtask-session-<key>`` with
limit 1, so two runs never interleave their reads and writes, even on different machines.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from webtask_core.errors import SessionFormatError
from webtask_core.record import TaskRecord
from webtask_core.storage import (
    SavedSession,
    SessionStore,
    is_s3_uri,
    make_saved_session,
    open_session_store,
    validate_session_key,
)
from webtask_flows.settings import S3Source, WebtaskSettings, resolve_s3_client

__all__ = [
    "get_session_store",
    "load_session",
    "load_worker_session",
    "save_session",
    "session_lock",
    "session_lock_name",
    "ensure_session_lock_limit",
]

SESSION_LOCK_PREFIX = "webtask-session-"


async def get_session_store(location: str | Path | None = None, *, s3: S3Source = None) -> SessionStore:
    """The store at ``location`` (a folder or ``s3://bucket/prefix/``), else ``WEBTASK_SESSION_STORE``,
    else ``~/.webtask/sessions``. ``s3`` is used for an S3 location (see ``resolve_s3_client``)."""
    where = str(location) if location is not None else WebtaskSettings.from_env().session_store
    client = await resolve_s3_client(s3) if is_s3_uri(where) else None
    return open_session_store(where, s3_client=client)


async def load_session(session_key: str, *, store: SessionStore | None = None) -> SavedSession | None:
    """The stored session for ``session_key``, or None for a new key.

    Raises ``SessionFormatError`` (naming key and location, file left as it is) for a corrupt or
    incompatible document.
    """
    validate_session_key(session_key)
    store = store or await get_session_store()
    return await asyncio.to_thread(store.load, session_key)


async def load_worker_session(
    session_key: str, *, store: SessionStore | None = None
) -> tuple[TaskRecord, SavedSession] | None:
    """The stored TaskRecord (and the whole document, for its storage state and last URL), or
    None for a new key. Any format problem, outer or inner, names the key and the location."""
    store = store or await get_session_store()
    stored = await load_session(session_key, store=store)
    if stored is None:
        return None
    try:
        return stored.worker_session(), stored
    except SessionFormatError as exc:
        raise SessionFormatError(f"session {session_key!r} at {store.location(session_key)}: {exc}") from exc


async def save_session(
    session_key: str,
    session: Any,
    *,
    storage_state: Mapping[str, Any] | None = None,
    last_url: str | None = None,
    store: SessionStore | None = None,
) -> SavedSession:
    """Store ``session`` (a TaskRecord, its JSON, or a dict) with the browser storage state."""
    validate_session_key(session_key)
    document = make_saved_session(session, storage_state=storage_state, last_url=last_url)
    store = store or await get_session_store()
    await asyncio.to_thread(store.save, session_key, document)
    return document


def session_lock_name(session_key: str) -> str:
    return SESSION_LOCK_PREFIX + validate_session_key(session_key)


async def ensure_session_lock_limit(session_key: str) -> str:
    """Create the limit-1 global concurrency limit for ``session_key`` if it is missing.

    An existing limit with another size, or switched off, is put back to an active limit of 1:
    anything else would let two runs share a session.
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    name = session_lock_name(session_key)
    async with get_client() as client:
        try:
            existing = await client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            with suppress(ObjectAlreadyExists):  # another run created it between our read and our create
                await client.create_global_concurrency_limit(
                    GlobalConcurrencyLimitCreate(name=name, limit=1, active=True)
                )
            return name
        if existing.limit != 1 or not existing.active:
            await client.update_global_concurrency_limit(
                name, GlobalConcurrencyLimitUpdate(limit=1, active=True)
            )
    return name


@asynccontextmanager
async def session_lock(
    session_key: str, *, timeout_seconds: float | None = None, lease_duration: float = 300
) -> AsyncIterator[None]:
    """Hold the session key exclusively for the block.

    Waits (up to ``timeout_seconds``, forever when None) while another run holds it. Strict: if the
    limit cannot be used the block does not run. The lease is renewed while the block runs, and
    expires ``lease_duration`` seconds after a crashed holder stops renewing it.
    """
    from prefect.client.schemas.objects import ConcurrencyLeaseHolder
    from prefect.concurrency.asyncio import concurrency
    from prefect.context import FlowRunContext

    name = await ensure_session_lock_limit(session_key)
    run = FlowRunContext.get()
    # Naming the flow run as holder shows in the UI which run has the session.
    holder = ConcurrencyLeaseHolder(type="flow_run", id=run.flow_run.id) if run and run.flow_run else None
    async with concurrency(
        name,
        occupy=1,
        timeout_seconds=timeout_seconds,
        lease_duration=lease_duration,
        strict=True,
        holder=holder,
    ):
        yield
