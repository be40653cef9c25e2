"""The fault-injection suite through the run-webtask flow (marker `faults`).

Each case runs the whole marketplace listing as a flow run — step tasks, retries, artifacts, session
store — while one fault is injected (the same kinds and seeds as the Agent.do suite, plus an S3
endpoint that goes away mid-download). Every run must end in a defined state with a clear reason
and leave no Chromium process and no temporary folder behind. ``run_flow_case`` is also what
``benchmarks/faults.py --flow`` runs.

Expected: the model faults, the malformed replies, a killed browser and the slow or hanging pages
are recovered from; a page stuck in a script is left for a fresh tab, then a blank one; S3 going
away fails the run before a browser starts, naming the object.
"""

from __future__ import annotations

import asyncio
import http.client
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from flow_helpers import (
    OUTPUT_SCHEMA,
    flow_env,  # noqa: F401 (fixture)
    make_photos,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)

from webtask_core.testing import FakeAnthropicServer, MarketplaceListingPolicy
from webtask_core.testing.fault_suite import (
    AGENT_FAULTS,
    CaseResult,
    FaultCase,
    FaultyModel,
    classify,
    fault_schedule,
    leftovers,
    listing_task,
    malformed_seen_in_requests,
    request_problems,
)
from webtask_core.testing.hostile_site import HostileSite

pytestmark = [pytest.mark.faults, pytest.mark.slow]

FLOW_FAULTS = (*AGENT_FAULTS, "s3_gone")
MALFORMED_PER_FLOW_RUN = 10  # two, then a real step, and so on: the flow's stuck detection stays on
RECOVERS = set(FLOW_FAULTS) - {"page_script_hangs", "s3_gone"}
CASES = [FaultCase(kind=kind, seed=200) for kind in FLOW_FAULTS]


class VanishingS3:
    """A proxy in front of a real S3 endpoint: the first object download gets half of its bytes, then
    the endpoint goes away (the connection drops and nothing listens on the port any more)."""

    def __init__(self, upstream: str):
        target = urlsplit(upstream)
        self.cut = threading.Event()
        self.requests: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def _forward(self) -> None:
                proxy.requests.append(f"{self.command} {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                upstream_connection = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
                headers = {key: value for key, value in self.headers.items() if key.lower() != "host"}
                upstream_connection.request(self.command, self.path, body=body, headers=headers)
                response = upstream_connection.getresponse()
                data = response.read()
                upstream_connection.close()
                object_download = self.command == "GET" and urlsplit(self.path).path.count("/") >= 2
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.end_headers()
                if object_download and response.status == 200 and not proxy.cut.is_set():
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    proxy.cut.set()
                    self.close_connection = True
                    threading.Thread(target=proxy.stop, daemon=True).start()
                    return
                self.wfile.write(data)

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self._stopped = False

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self.server.shutdown()
            self.server.server_close()


async def run_flow_case(case: FaultCase, *, shop: Any, site: HostileSite, secrets: dict[str, str],
                        resources: dict[str, str], temp: Path, monkeypatch: Any,
                        timeout_s: float = 150.0) -> CaseResult:
    """One listing through ``run_webtask`` with the case's fault; how it ended and what it left."""
    from webtask_flows.run_flow import run_webtask

    started = time.perf_counter()
    sku = f"FLOW-{case.kind.replace('_', '-').upper()}-{case.seed}"
    base = MarketplaceListingPolicy(max_failed_turns=3)
    model = FaultyModel(case, site, base, malformed=MALFORMED_PER_FLOW_RUN, real_every=3)
    status: str | None = None
    reason, error, steps, state = "", None, 0, None
    async with FakeAnthropicServer(model, slow_s=2.5) as server:
        server.fault_policy = fault_schedule(case).get
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        try:
            state = await asyncio.wait_for(run_webtask(
                listing_task(shop.url("/listings"), sku, "demo"), start_url=shop.url("/login"),
                resources=resources, max_steps=20 + MALFORMED_PER_FLOW_RUN, output_schema=OUTPUT_SCHEMA,
                secrets=secrets, allowed_domains=["127.0.0.1"], return_state=True,
            ), timeout=timeout_s)
        except Exception as caught:  # noqa: BLE001 - a flow run should end in a state, not raise
            error = caught
        requests = server.requests
    if state is not None:
        if state.is_completed():
            status, reason = "completed", state.message or ""
            steps = (await state.aresult()).steps
        elif state.name in ("Aborted", "MaxSteps"):
            status, reason = ("aborted" if state.name == "Aborted" else "max_steps"), state.message or ""
        else:
            outcome_value = await state.aresult(raise_on_failure=False)
            error = outcome_value if isinstance(outcome_value, BaseException) else RuntimeError(state.message)
    outcome, status_text, reason = classify(status, reason, error)
    problems = request_problems(requests)
    if problems and outcome != "crashed":
        outcome, reason = "crashed", "; ".join(problems[:3])
    listings = len(shop.listing_by_sku(sku))
    if (outcome == "recovered" and listings != 1) or listings > 1:
        outcome, reason = "crashed", f"{listings} listings of {sku} (expected exactly one)"
    leaked, folders = await leftovers(temp, patterns=("webtask-browser-*", "webtask-resources-*"))
    seen = malformed_seen_in_requests(requests, model.malformed_calls)
    return CaseResult(
        case=case.name, kind=case.kind, layer="flow", outcome=outcome, status=status_text, reason=reason[:300],
        steps=steps, seconds=round(time.perf_counter() - started, 2), leaked_processes=leaked,
        leaked_folders=folders, malformed_replies=len(model.malformed_calls),
        malformed_seen_as_errors=seen,
    )


@pytest.fixture(scope="module")
def site() -> Iterator[HostileSite]:
    with HostileSite() as running:
        yield running


@pytest.fixture
def fast_timeouts(monkeypatch) -> None:
    """Short browser and model timeouts, one SDK retry (so a burst reaches the step task's retries)."""
    for name, value in {"WEBTASK_ACTION_TIMEOUT_S": "1.5", "WEBTASK_NAVIGATION_TIMEOUT_S": "2.5",
                        "WEBTASK_SETTLE_TIMEOUT_S": "1.0", "WEBTASK_MODEL_TIMEOUT_S": "1.0",
                        "WEBTASK_MODEL_MAX_RETRIES": "1", "AWS_MAX_ATTEMPTS": "2"}.items():
        monkeypatch.setenv(name, value)


async def _resources(case: FaultCase, tmp_path: Path, monkeypatch: Any, s3_endpoint: str, s3_client: Any,
                     s3_bucket: str) -> tuple[dict[str, str], VanishingS3 | None]:
    photos = make_photos(tmp_path / "photos")
    if case.kind != "s3_gone":
        return {"listing_image_1": str(photos[0]), "listing_image_2": str(photos[1])}, None
    for photo in photos:
        s3_client.upload_file(str(photo), s3_bucket, f"listing/{photo.name}")
    proxy = VanishingS3(s3_endpoint)
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", proxy.url)
    return {name: f"s3://{s3_bucket}/listing/{photo.name}"
            for name, photo in zip(("listing_image_1", "listing_image_2"), photos, strict=True)}, proxy


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
async def test_the_flow_ends_in_a_defined_state_and_leaves_nothing(
    case, flow_env, shop, shop_secret, site, fast_timeouts, monkeypatch, tmp_path, s3_endpoint, s3_client, s3_bucket,
):
    resources, proxy = await _resources(case, tmp_path, monkeypatch, s3_endpoint, s3_client, s3_bucket)
    try:
        result = await run_flow_case(case, shop=shop, site=site, secrets=shop_secret, resources=resources,
                                     temp=flow_env.temp, monkeypatch=monkeypatch)
    finally:
        if proxy is not None:
            proxy.stop()
    assert result.outcome != "crashed", result
    assert result.leaked_processes == 0 and result.leaked_folders == 0, result
    assert result.reason.strip(), result
    if case.kind in RECOVERS:
        assert result.outcome == "recovered", result
    if case.kind == "malformed":
        assert result.malformed_replies == MALFORMED_PER_FLOW_RUN == result.malformed_seen_as_errors
    if case.kind == "page_script_hangs":
        # The retried step gets a fresh tab, then a blank one, so the run gets away from the spinning
        # page; the scripted detour policy may then fail to make progress: either way a named end.
        assert result.outcome in ("recovered", "aborted"), result
    if case.kind == "s3_gone":
        assert proxy is not None and proxy.cut.is_set()
        assert result.outcome == "aborted" and result.status == "TransientError", result
        assert "s3://" in result.reason and "listing/" in result.reason, result
        assert shop.request_log == []  # no browser ever opened the shop
