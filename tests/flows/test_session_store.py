"""Session store round trips (local folder, S3 prefix), bad documents, and the per-key lock."""

from __future__ import annotations

import asyncio
import json
import stat
from datetime import UTC

import pytest

from webtask_core.errors import ConfigError, SessionFormatError
from webtask_core.storage import LocalSessionStore, S3SessionStore
from webtask_flows.session_store import (
    get_session_store,
    load_session,
    load_worker_session,
    save_session,
    session_lock,
    session_lock_name,
)

SESSION = {"schema_version": 1, "status": "completed", "feedback": "listed", "pairs": []}
STATE = {"cookies": [{"name": "sid", "value": "abc", "domain": "127.0.0.1", "path": "/"}], "origins": []}


class FakeWorkerSession:
    """Stands in for the TaskRecord: anything with to_json() is stored as its JSON object."""

    def to_json(self) -> str:
        return json.dumps(SESSION)


async def test_local_round_trip(tmp_path):
    store = await get_session_store(tmp_path / "sessions")
    assert await load_session("shop-demo", store=store) is None

    saved = await save_session(
        "shop-demo", FakeWorkerSession(), storage_state=STATE, last_url="http://127.0.0.1/x", store=store
    )
    loaded = await load_session("shop-demo", store=store)
    assert loaded == saved
    assert loaded.session == SESSION and json.loads(loaded.session_json) == SESSION
    assert loaded.storage_state == STATE and loaded.last_url == "http://127.0.0.1/x"

    file = tmp_path / "sessions" / "shop-demo.json"
    assert stat.S_IMODE(file.stat().st_mode) == 0o600  # cookies are secrets
    assert [p.name for p in file.parent.iterdir()] == ["shop-demo.json"]  # no temp files left

    await save_session("shop-demo", json.dumps({"status": "aborted"}), store=store)
    assert (await load_session("shop-demo", store=store)).session == {"status": "aborted"}


def _worker_session():
    from datetime import datetime

    from webtask_core.record import TaskRecord

    now = datetime.now(UTC)
    return TaskRecord(status="completed", task_description="List the boots", feedback="listed",
                         output={"url": "http://127.0.0.1/l/1"}, max_steps=20, steps_used=4,
                         started_at=now, finished_at=now)


async def test_real_worker_session_round_trip(tmp_path):
    store = LocalSessionStore(tmp_path)
    assert await load_worker_session("boots", store=store) is None
    original = _worker_session()
    await save_session("boots", original, storage_state=STATE, last_url="http://127.0.0.1/l/1", store=store)
    restored, stored = await load_worker_session("boots", store=store)
    assert restored == original and stored.storage_state == STATE


async def test_incompatible_inner_worker_session_names_key_and_location(tmp_path):
    store = LocalSessionStore(tmp_path)
    await save_session("old-inner", {**_worker_session().model_dump(mode="json"), "schema_version": 0}, store=store)
    content = (tmp_path / "old-inner.json").read_bytes()
    with pytest.raises(SessionFormatError, match=f"'old-inner' at {tmp_path / 'old-inner.json'}: .*schema_version 0"):
        await load_worker_session("old-inner", store=store)
    assert (tmp_path / "old-inner.json").read_bytes() == content


async def test_s3_prefix_round_trip(s3_client, s3_bucket):
    store = await get_session_store(f"s3://{s3_bucket}/team/sessions/", s3=s3_client)
    assert isinstance(store, S3SessionStore)
    assert await load_session("nightly", store=store) is None
    await save_session("nightly", SESSION, storage_state=STATE, last_url="http://x/", store=store)

    keys = [o["Key"] for o in s3_client.list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert keys == ["team/sessions/nightly.json"]
    loaded = await load_session("nightly", store=store)
    assert loaded.session == SESSION and loaded.storage_state == STATE
    assert store.delete("nightly") and not store.delete("nightly")


async def test_store_from_environment(monkeypatch, tmp_path, s3_endpoint, s3_bucket):
    monkeypatch.setenv("WEBTASK_SESSION_STORE", str(tmp_path / "env-sessions"))
    store = await get_session_store()
    assert isinstance(store, LocalSessionStore) and store.folder == tmp_path / "env-sessions"

    monkeypatch.setenv("WEBTASK_SESSION_STORE", f"s3://{s3_bucket}/p")
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    await save_session("from-env", SESSION)  # no store given: the environment decides
    assert (await load_session("from-env")).session == SESSION


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"{not json", "not valid JSON"),
        (json.dumps({**SESSION, "schema_version": 99}).encode(), "schema_version 99"),
        (json.dumps({"schema_version": 99, "session": {}, "saved_at": "2026-01-01T00:00:00Z"}).encode(),
         "schema_version 99"),
        (json.dumps({"schema_version": 1, "session": "nope", "saved_at": "x"}).encode(), "malformed"),
        (b"[1, 2]", "not a JSON object"),
    ],
)
async def test_bad_local_document_is_named_and_left_untouched(tmp_path, content, expected):
    store = LocalSessionStore(tmp_path)
    file = tmp_path / "broken.json"
    file.write_bytes(content)
    with pytest.raises(SessionFormatError) as caught:
        await load_session("broken", store=store)
    message = str(caught.value)
    assert expected in message and "'broken'" in message and str(file) in message
    assert file.read_bytes() == content


async def test_bad_s3_document_is_named_and_left_untouched(s3_client, s3_bucket):
    content = json.dumps({"schema_version": 0, "session": {}}).encode()
    s3_client.put_object(Bucket=s3_bucket, Key="old.json", Body=content)
    store = await get_session_store(f"s3://{s3_bucket}/", s3=s3_client)
    with pytest.raises(SessionFormatError, match=f"'old' at s3://{s3_bucket}/old.json has schema_version 0"):
        await load_session("old", store=store)
    assert s3_client.get_object(Bucket=s3_bucket, Key="old.json")["Body"].read() == content


async def test_missing_bucket_is_a_clear_error(s3_client):
    store = await get_session_store("s3://no-such-session-bucket/x/", s3=s3_client)
    with pytest.raises(ConfigError, match="no-such-session-bucket.*does not exist"):
        await save_session("k", SESSION, store=store)


@pytest.mark.parametrize("key", ["", "../x", "a/b", ".hidden", "-dash", "x" * 129, "sp ace", "ü"])
async def test_invalid_session_keys_are_refused(tmp_path, key):
    with pytest.raises(ConfigError, match="session_key"):
        await save_session(key, SESSION, store=LocalSessionStore(tmp_path))
    assert list(tmp_path.iterdir()) == []


async def test_lock_serialises_two_holders_of_one_key():
    from prefect.client.orchestration import get_client

    order: list[str] = []
    first_inside = asyncio.Event()

    async def first() -> None:
        async with session_lock("shared-key"):
            order.append("first-in")
            first_inside.set()
            await asyncio.sleep(1.0)  # the second holder is waiting meanwhile
            order.append("first-out")

    async def second() -> None:
        await first_inside.wait()
        async with session_lock("shared-key"):
            order.append("second-in")
        order.append("second-out")

    await asyncio.wait_for(asyncio.gather(first(), second()), timeout=60)
    assert order == ["first-in", "first-out", "second-in", "second-out"]

    async with get_client() as client:
        limit = await client.read_global_concurrency_limit_by_name(session_lock_name("shared-key"))
    assert limit.limit == 1 and limit.active and limit.active_slots == 0


async def test_two_flow_runs_with_one_key_take_turns(tmp_path):
    """As in production: each run holds the key while it loads, works and saves the session."""
    from prefect import flow

    order: list[str] = []
    store = LocalSessionStore(tmp_path)

    @flow
    async def run_with_session(label: str) -> None:
        async with session_lock("flow-key"):
            previous = await load_session("flow-key", store=store)
            order.append(f"{label} saw {previous.session['label'] if previous else None}")
            await asyncio.sleep(0.3)
            await save_session("flow-key", {"label": label}, store=store)

    await asyncio.wait_for(asyncio.gather(run_with_session("a"), run_with_session("b")), timeout=60)
    # Whichever ran first, the second saw the first one's saved session: no interleaving.
    first, second = order
    assert first.endswith("saw None") and second.endswith(f"saw {first[0]}")


async def test_lock_does_not_block_other_keys():
    other_inside = asyncio.Event()

    async def holder() -> None:
        async with session_lock("key-one"):
            await other_inside.wait()  # would never return if key-two waited for key-one

    async def other() -> None:
        async with session_lock("key-two"):
            other_inside.set()

    await asyncio.wait_for(asyncio.gather(holder(), other()), timeout=60)


async def test_lock_times_out_while_held_and_repairs_a_changed_limit():
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitUpdate

    async with session_lock("busy-key"):
        with pytest.raises(TimeoutError):
            async with session_lock("busy-key", timeout_seconds=1):
                pytest.fail("entered a held session")

    name = session_lock_name("busy-key")
    async with get_client() as client:
        await client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(limit=5))
    async with session_lock("busy-key"):
        async with get_client() as client:
            assert (await client.read_global_concurrency_limit_by_name(name)).limit == 1
