"""Helpers for the run-webtask flow tests (imported as a top-level module, like tests/core/agent)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from webtask_core.testing import FakeAnthropicServer
from webtask_core.testing.marketplace import Marketplace
from webtask_core.testing.processes import chromium_processes

SHOP_PASSWORD = "s3cr3t-shop-pass"
USERS = {"demo": SHOP_PASSWORD}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"listing_url": {"type": "string"}, "sku": {"type": "string"}},
    "required": ["listing_url", "sku"],
    "additionalProperties": False,
}


def listing_task(
    site_url: str, *, sku: str = "BOOT-001", photos: tuple[str, ...] = ("listing_image_1", "listing_image_2"),
    **extra: Any,
) -> str:
    """The listing task; ``extra`` adds keys to its data (``approval="why"``, ``totp="{{totp:NAME}}"``)."""
    data = {
        "sku": sku, "title": "Red leather boots", "description": "Worn once.\nSize 39.", "price": 45.0,
        "category": "Women's Shoes", "condition": "Like new", "photos": list(photos),
        "username": "demo", "password": "{{secret:shop_password}}", "site_url": site_url, **extra,
    }
    return ("Create a listing with these photos on the marketplace, then report its URL.\n"
            f"```json\n{json.dumps(data, indent=2)}\n```")


def login_task(site_url: str) -> str:
    data = {"username": "demo", "password": "{{secret:shop_password}}", "site_url": site_url}
    return f"Log in to the marketplace.\n```json\n{json.dumps(data)}\n```"


def make_photos(folder: Path) -> list[Path]:
    """Two small real images: a JPEG and a PNG."""
    folder.mkdir(parents=True, exist_ok=True)
    jpeg = folder / "front.jpg"
    Image.new("RGB", (64, 48), (200, 30, 90)).save(jpeg, "JPEG")
    png = folder / "back side.png"
    Image.new("RGB", (40, 40), (20, 120, 200)).save(png, "PNG")
    return [jpeg, png]


@contextlib.asynccontextmanager
async def fake_model_env(policy: Any, monkeypatch: Any, **options: Any) -> AsyncIterator[FakeAnthropicServer]:
    """A FakeAnthropicServer, with ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY pointing the flow at it."""
    async with FakeAnthropicServer(policy, **options) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield server


# ---- processes ----

# The Chromium browsers already running when the current test's flow_env started: a session-wide
# browser of another suite (tests/core's ``browser`` fixture lives until the pytest session ends).
# The helpers below leave them and everything below them alone, so a test counts, waits for and
# kills only the browsers it started itself. flow_env sets it; it is module state and not a
# fixture value because the fake model's policies call these helpers from the server's threads.
_browsers_before_the_test: frozenset[int] = frozenset()


def chromium_pids(*, main_only: bool = False) -> list[int]:
    """Running Chromium processes started (indirectly) by this test process since the test began."""
    return sorted(chromium_processes(main_only=main_only, excluding=_browsers_before_the_test))


async def wait_for_no_chromium(timeout_s: float = 10.0) -> list[int]:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while (left := chromium_pids()) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    return left


def describe_processes(pids: list[int]) -> str:
    """One line per process (pid, parent, command line), for an assertion message."""
    lines = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                parent = stat.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                command = file.read().replace(b"\0", b" ").decode(errors="replace")
        except (FileNotFoundError, ProcessLookupError):
            lines.append(f"{pid}: ended meanwhile")
            continue
        lines.append(f"{pid} (parent {parent}): {command[:160]}")
    return "\n".join(lines)


def kill_chromium() -> int:
    """SIGKILL the main Chromium process(es) this test started, as a crash would; returns how many."""
    pids = chromium_pids(main_only=True)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return len(pids)


class KillBrowserAt:
    """A policy wrapper that kills Chromium while the model is answering request ``at`` (1-based)."""

    def __init__(self, policy: Callable[[dict[str, Any]], Any], at: int):
        self.policy, self.at, self.calls, self.killed = policy, at, 0, 0

    def __call__(self, request: dict[str, Any]) -> Any:
        self.calls += 1
        if self.calls == self.at:
            self.killed = kill_chromium()
        return self.policy(request)


# ---- reading back through the Prefect API ----


async def read_flow_run(flow_run_id: Any) -> Any:
    from prefect.client.orchestration import get_client

    async with get_client() as client:
        return await client.read_flow_run(flow_run_id)


async def read_task_runs(flow_run_id: Any, *, expected: int, timeout_s: float = 20) -> list[Any]:
    """Task runs of a flow run, polled until ``expected`` have a final state (they arrive by events)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    deadline = asyncio.get_running_loop().time() + timeout_s
    async with get_client() as client:
        while True:
            runs = await client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
            final = [run for run in runs if run.state is not None and run.state.is_final()]
            if len(final) >= expected or asyncio.get_running_loop().time() > deadline:
                return sorted(final, key=lambda run: run.name)
            await asyncio.sleep(0.2)


async def read_artifacts(flow_run_id: Any) -> list[Any]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    async with get_client() as client:
        return await client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
        )


async def read_events_for(resource_id: str, *, expected: int = 1, timeout_s: float = 30) -> list[Any]:
    from prefect.client.orchestration import get_client
    from prefect.events.filters import EventFilter, EventResourceFilter
    from prefect.events.worker import EventsWorker

    await EventsWorker.drain_all()
    filter_ = EventFilter(resource=EventResourceFilter(id=[resource_id]))
    deadline = asyncio.get_running_loop().time() + timeout_s
    async with get_client() as client:
        while True:
            events = (await client.read_events(filter=filter_, limit=50)).events
            if len(events) >= expected or asyncio.get_running_loop().time() > deadline:
                return events
            await asyncio.sleep(0.25)


class WebhookReceiver:
    """A local HTTP server collecting JSON POSTs (where the alert automation's webhook points)."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                receiver.posts.append(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> WebhookReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    async def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout_s: float = 60) -> list[dict[str, Any]]:
        deadline = asyncio.get_running_loop().time() + timeout_s
        while asyncio.get_running_loop().time() < deadline:
            if matching := [post for post in self.posts if predicate(post)]:
                return matching
            await asyncio.sleep(0.25)
        return []


# ---- fixtures (import them into a test module to use them) ----


class FlowEnv:
    def __init__(self, root: Path, temp: Path):
        self.sessions = root / "sessions"
        self.traces = root / "traces"
        self.temp = temp

    def resource_folders(self) -> list[Path]:
        return sorted(self.temp.glob("webtask-resources-*")) + sorted(self.temp.glob("webtask-trace-*"))


@pytest.fixture
async def flow_env(monkeypatch: Any, tmp_path: Path) -> AsyncIterator[FlowEnv]:
    """A private session store and temp folder, quick step retries; afterwards it checks that no
    Chromium the test started is left running and no resource folder is left behind, whatever the
    test did (browsers that were running before it, like a session-wide one, are not its to close)."""
    import shutil
    import tempfile

    # A short temp path: Chromium's profile lives there too, and its socket paths must stay short.
    env = FlowEnv(tmp_path, Path(tempfile.mkdtemp(prefix="wtf-", dir="/tmp")))
    monkeypatch.setenv("WEBTASK_SESSION_STORE", str(env.sessions))
    monkeypatch.setenv("WEBTASK_STEP_RETRY_DELAY_S", "0.05")
    monkeypatch.setenv("WEBTASK_TRACE_STORE", str(tmp_path / "traces"))  # kept traces stay in the test's folder
    monkeypatch.setattr(tempfile, "tempdir", str(env.temp))
    global _browsers_before_the_test
    _browsers_before_the_test = frozenset(chromium_processes(main_only=True))
    try:
        yield env
        left = await wait_for_no_chromium()
        assert left == [], f"a Chromium process was left running:\n{describe_processes(left)}"
        assert env.resource_folders() == [], "a resource (or trace) folder was left behind"
    finally:
        _browsers_before_the_test = frozenset()
        shutil.rmtree(env.temp)


@pytest.fixture
def shop() -> Iterator[Marketplace]:
    with Marketplace(users=USERS, preview_delay_ms=100) as running:
        yield running


@pytest.fixture(scope="session")
async def shop_secret() -> dict[str, str]:
    """A Prefect Secret block holding the shop password; the flow's ``secrets`` parameter."""
    from prefect.blocks.system import Secret

    await Secret(value=SHOP_PASSWORD).asave("webtask-test-shop-password", overwrite=True)
    return {"shop_password": "webtask-test-shop-password"}
