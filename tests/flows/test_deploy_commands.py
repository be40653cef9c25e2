"""The deploy commands deployments/README.md gives, run as written against the test harness's API
server: they deploy, a worker started outside the checkout runs what they deployed, and an unset
WEBTASK_* variable stops `prefect deploy` instead of scheduling a nightly run with empty parameters."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_deployments_server import PREFECT, PROJECT, Processes, wait_for_run

from webtask_core.testing import FakeAnthropicServer, ReplayPolicy, ToolUse

DOCS = PROJECT / "deployments" / "README.md"


def documented(prefix: str) -> list[list[str]]:
    """The command lines of deployments/README.md that start with ``prefix``, as argument lists."""
    lines = [line.strip() for line in DOCS.read_text().splitlines() if line.strip().startswith(prefix)]
    assert lines, f"deployments/README.md has no command starting with {prefix!r}"
    return [shlex.split(line, comments=True) for line in lines]


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    from prefect.settings import PREFECT_API_URL

    env = {name: value for name, value in os.environ.items() if not name.startswith("WEBTASK_SITE")}
    env.pop("WEBTASK_NIGHTLY_MANIFEST", None)
    env.update({"PREFECT_API_URL": PREFECT_API_URL.value(), "PREFECT_WORKER_QUERY_SECONDS": "1",
                "PREFECT_LOGGING_LEVEL": "INFO"})
    running = Processes(env, tmp_path)
    try:
        yield running
    finally:
        running.stop_all()


async def create_pool(name: str) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate

    async with get_client() as client:
        await client.create_work_pool(WorkPoolCreate(name=name, type="process"), overwrite=True)


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.timeout(480)
async def test_the_documented_adhoc_deploy_runs_on_a_worker_started_elsewhere(processes, tmp_path):
    from prefect.blocks.system import Secret
    from prefect.client.orchestration import get_client

    secrets = documented('python -c "from prefect.blocks.system import Secret')
    assert all("overwrite=True" in command[2] for command in secrets)
    secret = secrets[0]
    for _ in range(2):  # the same command again changes the password instead of failing
        processes.run(sys.executable, *secret[1:])
    assert (await Secret.aload("shop-password")).get() == "..."

    (deploy,) = documented("prefect --no-prompt deploy webtask_flows.run_flow.run_webtask")
    pool = deploy[deploy.index("-p") + 1]
    await create_pool(pool)
    processes.run(PREFECT, *deploy[1:])
    elsewhere = tmp_path / "elsewhere"  # not the checkout: the worker finds the flow by its module
    elsewhere.mkdir()
    policy = ReplayPolicy([ToolUse("complete", {"feedback": "Nothing to do on a blank page."})])
    with FakeAnthropicServer(policy) as model:
        processes.env.update({"ANTHROPIC_BASE_URL": model.base_url, "ANTHROPIC_API_KEY": "test-key"})
        processes.start("worker", PREFECT, "worker", "start", "--pool", pool, "--limit", "1", cwd=elsewhere)
        async with get_client() as client:
            deployment = await client.read_deployment_by_name("run-webtask/adhoc")
            assert deployment.entrypoint == "webtask_flows.run_flow.run_webtask" and not deployment.pull_steps
            await client.create_flow_run_from_deployment(deployment.id, parameters={"task": "Say you are done."})
            run = await wait_for_run(client, "run-webtask/adhoc")
    assert run.state.is_completed(), f"{run.state.message}\n{processes.log('worker')[-3000:]}"


@pytest.mark.slow
@pytest.mark.timeout(360)
async def test_deploying_the_nightly_batch_with_unset_variables_fails_naming_them(processes):
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    await create_pool("webtask-pool")
    done = subprocess.run([PREFECT, "--no-prompt", "deploy", "--all"], env=processes.env, cwd=PROJECT,
                          capture_output=True, text=True, timeout=150)
    assert done.returncode != 0
    said = " ".join((done.stdout + done.stderr).split())
    assert "WEBTASK_SITE_URL, WEBTASK_SITE_USER, WEBTASK_NIGHTLY_MANIFEST: not set" in said
    assert "parameters site_url, username, manifest" in said
    async with get_client() as client:
        with pytest.raises(ObjectNotFound):
            await client.read_deployment_by_name("batch-listing-upload/nightly")
