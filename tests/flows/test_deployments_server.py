"""prefect.yaml against a real `prefect server start` on loopback: `prefect deploy --all`, then
`prefect deployment run 'batch-listing-upload/nightly'` fanned out to two process workers on one pool
(both run listings), then the ETL chain (the upstream flow's completion triggers the batch); a run that
suspends while it waits for a person and resumes on another worker. Every
process the test starts is stopped by its PID at the end."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from child_processes import die_with_parent
from flow_helpers import (
    SHOP_PASSWORD,
    USERS,
    WebhookReceiver,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    listing_task,
    shop,  # noqa: F401 (fixture)
)
from prefect_ui import answer_in_the_ui
from test_batch_flow import manifest_rows, requests_per_sku, write_photos

from webtask_core.testing import MarketplaceListingPolicy
from webtask_core.testing.marketplace import Marketplace

PROJECT = Path(__file__).resolve().parents[2]
PREFECT = str(Path(sys.executable).with_name("prefect"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Processes:
    """Every process started here, each in its own process group, stopped by PID at the end."""

    def __init__(self, env: dict[str, str], logs: Path):
        self.env, self.logs = env, logs
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, name: str, *args: str, cwd: Path = PROJECT) -> subprocess.Popen[bytes]:
        log = open(self.logs / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process)
        process = subprocess.Popen(args, env=self.env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True, preexec_fn=die_with_parent)
        self.started.append(process)
        return process

    def run(self, *args: str, timeout: float = 120) -> str:
        done = subprocess.run(args, env=self.env, cwd=PROJECT, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def stop_all(self) -> None:
        for process in reversed(self.started):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for process in reversed(self.started):
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    port = free_port()
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect-home"),
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        "PREFECT_LOGGING_LEVEL": "INFO",
        "WEBTASK_LEDGER": str(tmp_path / "ledger"),
        "WEBTASK_STEP_RETRY_DELAY_S": "0.05",
    }
    running = Processes(env, tmp_path)
    try:
        running.start("server", PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port))
        yield running
    finally:
        running.stop_all()


async def wait_healthy(api_url: str, timeout_s: float = 180) -> None:  # a server starting on a busy machine
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient() as http:
        while time.monotonic() < deadline:
            try:
                if (await http.get(f"{api_url}/health", timeout=2)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.5)
    raise AssertionError(f"prefect server did not answer on {api_url}")


async def server_progress(client: Any) -> tuple[Any, ...]:
    """What the server has seen happen: every flow run's state and how many task runs there are. A wait
    below fails when this stood still for its quiet time, not after a fixed time: CI's machine ran this
    module 1.6x slower than ours once, and a batch of subprocess listings still moving is not stuck."""
    runs = await client.read_flow_runs(limit=200)
    tasks = (await client._client.post("/task_runs/count", json={})).json()
    return tuple(sorted((str(run.id), run.state_type, run.run_count) for run in runs)), tasks


async def wait_until(client: Any, look: Callable[[], Any], what: str, quiet_s: float = 150,
                     cap_s: float = 420) -> Any:
    """``await look()`` once it returns something; fails saying ``what`` did not happen when the server
    saw nothing happen for ``quiet_s`` or after ``cap_s`` in all."""
    start = last_change = time.monotonic()
    seen = None
    while True:
        found = await look()
        if found is not None:
            return found
        now_seen = await server_progress(client)
        now = time.monotonic()
        if now_seen != seen:
            seen, last_change = now_seen, now
        if now - last_change > quiet_s or now - start > cap_s:
            stood = f"nothing moved on the server for {now - last_change:.0f} s"
            raise AssertionError(f"{what} not within {now - start:.0f} s ({stood})")
        await asyncio.sleep(1)


async def wait_for_run(client: Any, deployment: str, quiet_s: float = 150) -> Any:
    """The newest flow run of ``deployment``, once it has a final state."""
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId
    from prefect.client.schemas.sorting import FlowRunSort

    found = await client.read_deployment_by_name(deployment)

    async def finished() -> Any:
        runs = await client.read_flow_runs(deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[found.id])),
                                           sort=FlowRunSort.EXPECTED_START_TIME_DESC, limit=1)
        return runs[0] if runs and runs[0].state is not None and runs[0].state.is_final() else None

    return await wait_until(client, finished, f"a finished run of {deployment}", quiet_s)


def upload_manifest(s3_client: Any, bucket: str, key: str, rows: list[dict[str, Any]], folder: Path) -> str:
    photos = write_photos(folder, rows)
    for relative, content in photos.items():
        s3_client.put_object(Bucket=bucket, Key=f"{key.rsplit('/', 1)[0]}/{relative}", Body=content)
    s3_client.put_object(Bucket=bucket, Key=key, Body="\n".join(json.dumps(r) for r in rows) + "\n")
    return f"s3://{bucket}/{key}"


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(900)  # a machine 1.6x slower than ours ran this module on CI
async def test_deploy_fan_out_on_two_workers_and_etl_chaining(flow_env, shop, processes, monkeypatch,
                                                              s3_endpoint, s3_client, s3_bucket, tmp_path):
    from prefect.client.orchestration import PrefectClient

    rows = manifest_rows(4, prefix="FAN")
    nightly = upload_manifest(s3_client, s3_bucket, "nightly/manifest.jsonl", rows, tmp_path / "photos")
    api_url = processes.env["PREFECT_API_URL"]
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        processes.env.update({
            "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "test-key",
            "WEBTASK_S3_ENDPOINT_URL": s3_endpoint,
            # Read by `prefect deploy` for the {{ $VAR }} parameters in the prefect.yaml files.
            "WEBTASK_SITE_URL": shop.url("/listings"), "WEBTASK_SITE_USER": "demo",
            "WEBTASK_NIGHTLY_MANIFEST": nightly,
            "WEBTASK_ETL_MANIFEST": f"s3://{s3_bucket}/etl/manifest.jsonl",
        })
        await wait_healthy(api_url)
        processes.run(PREFECT, "work-pool", "create", "webtask-pool", "--type", "process")
        processes.run(sys.executable, "-c", "from prefect.blocks.system import Secret; "
                      f"Secret(value={SHOP_PASSWORD!r}).save('shop-password', overwrite=True)")
        processes.run(PREFECT, "--no-prompt", "deploy", "--all")
        processes.run(PREFECT, "--no-prompt", "deploy", "--all", "--prefect-file",
                      "deployments/etl-chaining.prefect.yaml")
        for name in ("worker-a", "worker-b"):
            processes.start(name, PREFECT, "worker", "start", "--pool", "webtask-pool", "--name", name,
                            "--limit", "2")

        async with PrefectClient(api_url) as client:
            nightly_deployment = await client.read_deployment_by_name("batch-listing-upload/nightly")
            assert nightly_deployment.parameters["manifest"] == nightly
            assert [s.schedule.cron for s in nightly_deployment.schedules] == ["0 2 * * *"]

            # The nightly batch, fanned out: each listing a run-webtask deployment run.
            processes.run(PREFECT, "deployment", "run", "batch-listing-upload/nightly",
                          "--param", "fan_out=deployments", "--param", "max_concurrency=3")
            batch = await wait_for_run(client, "batch-listing-upload/nightly")
            assert batch.state.is_completed(), batch.state.message
            from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

            children = await client.read_flow_runs(flow_run_filter=FlowRunFilter(
                parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[batch.id])))
            # One shared site login first (its cookies seed every listing), then a deployment run per SKU.
            assert [run.name for run in children if run.name == "login"] == ["login"]
            children = [run for run in children if run.name != "login"]
            assert sorted(run.name for run in children) == [row["sku"] for row in rows]
            assert all(run.deployment_id is not None and run.state.is_completed() for run in children)
            for row in rows:
                assert len(shop.listing_by_sku(row["sku"])) == 1

            # Both workers ran listings.
            submitted = {name: set(re.findall(r"submitting flow run '([0-9a-f-]{36})'", processes.log(name)))
                         for name in ("worker-a", "worker-b")}
            listing_ids = {str(run.id) for run in children}
            assert all(ids & listing_ids for ids in submitted.values()), submitted

            # ETL chaining: the upstream flow's completion triggers batch-listing-upload/after-etl.
            processes.run(PREFECT, "deployment", "run", "listings-etl/example", "--param", "count=2")
            etl = await wait_for_run(client, "listings-etl/example")
            assert etl.state.is_completed(), etl.state.message
            chained = await wait_for_run(client, "batch-listing-upload/after-etl")
            assert chained.state.is_completed(), chained.state.message
            assert chained.parameters["manifest"] == processes.env["WEBTASK_ETL_MANIFEST"]
            assert [len(shop.listing_by_sku(sku)) for sku in ("DEMO-001", "DEMO-002")] == [1, 1]


async def wait_for_flow_run(client: Any, flow_run_id: Any, ready: Callable[[Any], bool], what: str,
                            quiet_s: float = 180) -> Any:
    """The flow run once ``ready(run)`` (it has a state); fails saying ``what`` did not happen."""
    async def look() -> Any:
        run = await client.read_flow_run(flow_run_id)
        return run if run.state is not None and ready(run) else None

    try:
        return await wait_until(client, look, f"flow run {flow_run_id}: {what}", quiet_s)
    except AssertionError as stood:
        run = await client.read_flow_run(flow_run_id)
        raise AssertionError(f"{stood} (now {run.state})") from None


async def wait_for_attempt(client: Any, flow_run_id: Any, attempt: int, quiet_s: float = 180) -> Any:
    """The flow run once its attempt ``attempt`` reached a final state."""
    return await wait_for_flow_run(client, flow_run_id, lambda run: run.run_count >= attempt and run.state.is_final(),
                                   f"attempt {attempt} finished", quiet_s)


async def deploy_nightly(processes: Processes, model_url: str, site_url: str, manifest: Path) -> None:
    """The server up, the pool, the password's Secret block and `prefect deploy --all`, the nightly
    batch reading ``manifest`` from ``site_url`` with the model at ``model_url``."""
    processes.env.update({
        "ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "test-key",
        "WEBTASK_SITE_URL": site_url, "WEBTASK_SITE_USER": "demo", "WEBTASK_NIGHTLY_MANIFEST": str(manifest),
    })
    await wait_healthy(processes.env["PREFECT_API_URL"])
    processes.run(PREFECT, "work-pool", "create", "webtask-pool", "--type", "process")
    processes.run(sys.executable, "-c", "from prefect.blocks.system import Secret; "
                  f"Secret(value={SHOP_PASSWORD!r}).save('shop-password', overwrite=True)")
    processes.run(PREFECT, "--no-prompt", "deploy", "--all")


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(900)  # a machine 1.6x slower than ours ran this module on CI
async def test_retry_from_the_cli_reruns_only_the_failed_listing(flow_env, shop, processes, monkeypatch, tmp_path):
    """The UI's Retry path on a real server: deploy nightly, one listing aborts, the cause is cleared,
    `prefect flow-run retry <batch run>`, a worker reruns the same flow run."""
    from prefect.client.orchestration import PrefectClient

    from webtask_flows.listings.batch import batch_results

    rows = manifest_rows(3, prefix="NIGHT")
    write_photos(tmp_path, rows)
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))
    policy = MarketplaceListingPolicy(abort_on_sku=["NIGHT-3"])
    api_url = processes.env["PREFECT_API_URL"]
    async with fake_model_env(policy, monkeypatch) as server:
        await deploy_nightly(processes, server.base_url, shop.url("/listings"), manifest)
        processes.start("worker", PREFECT, "worker", "start", "--pool", "webtask-pool", "--name", "worker")

        async with PrefectClient(api_url) as client:
            # replay off: the scripted model's abort for NIGHT-3 is what this test needs (a replay of
            # NIGHT-1's script would list it without asking the model)
            processes.run(PREFECT, "deployment", "run", "batch-listing-upload/nightly", "--param", "max_concurrency=1",
                          "--param", "replay=false")
            batch = await wait_for_run(client, "batch-listing-upload/nightly")
            assert batch.state.is_failed() and "NIGHT-3" in batch.state.message, batch.state.message

            policy.abort_on_sku.clear()  # the cause is fixed; the operator retries the batch
            server.reset()
            said = processes.run(PREFECT, "flow-run", "retry", str(batch.id))
            assert "scheduled for retry" in said
            batch = await wait_for_attempt(client, batch.id, 2)
            assert batch.state.is_completed(), batch.state.message
            results = {r.sku: r for r in await batch_results(batch.state)}

    assert [(results[row["sku"]].status, results[row["sku"]].skipped) for row in rows] == [
        ("completed", True), ("completed", True), ("completed", False)]
    assert requests_per_sku(server.requests).keys() == {"NIGHT-3"}  # only the failed listing ran again
    for row in rows:
        (listed,) = shop.listing_by_sku(row["sku"])
        assert results[row["sku"]].listing_url == listed.url  # each its own listing, never another's


# ---- a long wait for a person: suspend, and resume on another worker ----


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(900)  # a machine 1.6x slower than ours ran this module on CI
async def test_a_suspended_run_resumes_on_another_worker_with_the_answer(flow_env, processes, monkeypatch, tmp_path):
    """Asked for a log-in code, the run suspends (one alert, with its SKU and batch); a person answers
    in the Prefect UI the alert links to, in a real Chromium, and another worker resumes the run."""
    from prefect.client.orchestration import PrefectClient
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    sessions = tmp_path / "shared-sessions"  # what S3 would be between machines
    api_url = processes.env["PREFECT_API_URL"]
    with Marketplace(users=USERS, second_factor="email") as shop, WebhookReceiver() as webhook:
        async with fake_model_env(MarketplaceListingPolicy(login_only=True), monkeypatch) as server:
            processes.env.update({"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "test-key",
                                  "WEBTASK_SESSION_STORE": str(sessions)})
            await wait_healthy(api_url)
            processes.run(PREFECT, "work-pool", "create", "webtask-pool", "--type", "process")
            processes.run(sys.executable, "-c", "from prefect.blocks.system import Secret; "
                          f"Secret(value={SHOP_PASSWORD!r}).save('shop-password', overwrite=True)")
            processes.run(PREFECT, "--no-prompt", "deploy", "--name", "default")
            processes.run(sys.executable, "-m", "webtask_flows.automations", "webhook-block", "webtask-alerts",
                          webhook.url)
            processes.run(sys.executable, "-m", "webtask_flows.automations", "create",
                          str(PROJECT / "deployments" / "automations" / "webtask-waiting.yaml"))
            first = processes.start("worker-a", PREFECT, "worker", "start", "--pool", "webtask-pool",
                                    "--name", "worker-a")
            parameters = {"task": listing_task(shop.url("/listings")), "start_url": shop.url("/listings"),
                          "max_steps": 10, "session_key": "suspended-login",
                          "secrets": {"shop_password": "shop-password"},
                          "human": {"timeout_s": 600, "suspend_after_s": 0},
                          "labels": {"sku": "SUSP-001", "batch_name": "nightly-owl"}}
            said = processes.run(PREFECT, "deployment", "run", "run-webtask/default", "--params",
                                 json.dumps(parameters))
            flow_run_id = said.split("UUID:")[1].split()[0].strip()

            async with PrefectClient(api_url) as client:
                suspended = await wait_for_flow_run(client, flow_run_id, lambda run: run.state.is_paused(), "suspended",
                                                    120)
                assert suspended.state.name == "Suspended"
                assert (sessions / "waiting" / f"{flow_run_id}.json").is_file()
                # The suspended run let go of its session key (and closed its browser) as it exited.
                for _ in range(120):
                    lock = await client.read_global_concurrency_limit_by_name("webtask-session-suspended-login")
                    if lock.active_slots == 0:
                        break
                    await asyncio.sleep(0.5)
                assert lock.active_slots == 0
                # The first worker goes away as deployments/README says: the pool paused meanwhile, so
                # it takes no run while it winds down; then another worker.
                processes.run(PREFECT, "work-pool", "pause", "webtask-pool")
                os.killpg(first.pid, signal.SIGTERM)
                first.wait(timeout=120)
                processes.run(PREFECT, "work-pool", "resume", "webtask-pool")
                processes.start("worker-b", PREFECT, "worker", "start", "--pool", "webtask-pool", "--name", "worker-b")
                code = shop.checks.inbox[-1].code
                # One alert for the question (not a second one when the run suspended), with its SKU
                # and batch, linking to the page whose form draws the code as dots.
                (alert,) = await webhook.wait_for(lambda post: "needs a person" in post["subject"], timeout_s=120)
                assert alert["subject"] == "webtask needs a person: listing SUSP-001 (batch nightly-owl)", alert
                form_url = alert["body"].split("Answer here: ")[1].split()[0]
                assert form_url == f"{api_url.removesuffix('/api')}/v2/runs/flow-run/{flow_run_id}", alert["body"]
                # A person answers in that form, in a real Chromium: the code is drawn as dots.
                form = await answer_in_the_ui(form_url, code, tmp_path / "answer-form.png")
                assert (form.field_type, form.typed) == ("password", code)
                assert code not in form.shown_text and code not in form.field_text
                assert "sign-in code" in form.shown_text  # the question, above the field
                run = await wait_for_flow_run(client, flow_run_id, lambda run: run.state.is_final(), "final state", 120)
                # The resumed run read its answer without suspending again, and the server keeps no answer.
                said = [log.message for log in await client.read_logs(log_filter=LogFilter(
                    flow_run_id=LogFilterFlowRunId(any_=[UUID(flow_run_id)])))]
                assert sum(message.startswith("Suspending flow run") for message in said) == 1, said
                kept = await client.filter_flow_run_input(flow_run_id=UUID(flow_run_id), key_prefix="paused",
                                                          limit=50, exclude_keys=set())
                assert not [item.key for item in kept if item.key.endswith("-response")], kept
                await asyncio.sleep(5)  # an alert from a second announcement would have come by now
                assert len(webhook.posts) == 1, webhook.posts

    assert run.state.is_completed(), run.state.message
    assert "suspended" in "".join(run.empirical_policy.pause_keys)
    assert flow_run_id in processes.log("worker-b")
    assert not (sessions / "waiting" / f"{flow_run_id}.json").exists()  # removed once resumed
    stored = "".join(path.read_text(errors="replace") for path in Path(sessions).rglob("*") if path.is_file())
    assert code not in stored and "{{secret:ask_human_" in stored
    # One model conversation across both processes: the resumed run did not start over.
    assert sum("Two-step verification" in json.dumps(request) for request in server.requests) >= 2
