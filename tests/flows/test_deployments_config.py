"""prefect.yaml and deployments/: deployments whose entrypoints load and whose parameters fit the
flows; work-pool base job templates that the Prefect server accepts and that render."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[2]
POOLS = PROJECT / "deployments" / "work-pools"
ENV = {"WEBTASK_SITE_URL": "https://shop.example.com", "WEBTASK_SITE_USER": "ops",
       "WEBTASK_NIGHTLY_MANIFEST": "s3://listings/nightly/manifest.jsonl",
       "WEBTASK_ETL_MANIFEST": "s3://listings/etl/manifest.jsonl"}


def deployments(file: str) -> dict[str, dict[str, Any]]:
    """The deployments as `prefect deploy` sees them with ENV set ({{ $VAR }} read from os.environ)."""
    from prefect.utilities.templating import apply_values

    config = yaml.safe_load((PROJECT / file).read_text())
    assert config["pull"] == []  # module-path entrypoints need no working directory
    with pytest.MonkeyPatch.context() as patch:
        for name, value in ENV.items():
            patch.setenv(name, value)
        resolved = apply_values(config["deployments"], {}, remove_notset=False)
    return {d["name"]: d for d in resolved}


@pytest.mark.parametrize("file, expected", [
    ("prefect.yaml", {"default": "run-webtask", "nightly": "batch-listing-upload",
                      "crash-report": "report-webtask-crash"}),
    ("deployments/etl-chaining.prefect.yaml", {"example": "listings-etl", "after-etl": "batch-listing-upload"}),
])
def test_every_deployment_loads_its_flow_and_its_parameters_fit(file: str, expected: dict[str, str]):
    from prefect.flows import load_flow_from_entrypoint
    from prefect.utilities.callables import parameter_schema

    found = deployments(file)
    assert {name: load_flow_from_entrypoint(d["entrypoint"]).name for name, d in found.items()} == expected
    for deployment in found.values():
        flow = load_flow_from_entrypoint(deployment["entrypoint"])
        schema = parameter_schema(flow.fn)
        # What a run gets: the deployment's parameters, those its trigger passes, a task for run-webtask.
        given = {**deployment.get("parameters", {}),
                 **{name: "x" for trigger in deployment.get("triggers") or [] for name in trigger.get("parameters", {})}}
        assert set(deployment.get("parameters", {})) <= set(schema.properties)
        assert set(schema.required or []) <= set(given) | {"task"}
        flow.validate_parameters(given | ({"task": "t"} if flow.name == "run-webtask" else {}))
        assert deployment["work_pool"]["name"] == "webtask-pool"
        assert "{{" not in json.dumps(deployment.get("parameters", {}))


def test_the_nightly_schedule_and_the_etl_trigger():
    nightly = deployments("prefect.yaml")["nightly"]
    assert nightly["schedules"] == [{"cron": "0 2 * * *", "timezone": "UTC", "active": True}]
    (trigger,) = deployments("deployments/etl-chaining.prefect.yaml")["after-etl"]["triggers"]
    from prefect.events import DeploymentEventTrigger

    parsed = DeploymentEventTrigger.model_validate(trigger)
    assert parsed.expect == {"prefect.flow-run.Completed"}
    assert parsed.match_related.model_dump() == {"prefect.resource.role": "flow",
                                                 "prefect.resource.name": "listings-etl"}


def test_a_crashed_batch_or_task_runs_the_crash_report():
    from prefect.events import DeploymentEventTrigger

    (trigger,) = deployments("prefect.yaml")["crash-report"]["triggers"]
    parsed = DeploymentEventTrigger.model_validate(trigger)
    assert parsed.expect == {"prefect.flow-run.Crashed"}
    assert parsed.match_related.model_dump() == {"prefect.resource.role": "flow",
                                                 "prefect.resource.name": ["batch-listing-upload", "run-webtask"]}
    # The triggering run's id, rendered by the server from the event (prefect deploy keeps it as is).
    assert parsed.parameters == {"flow_run_id": "{{ event.resource.id }}"}


async def test_the_server_accepts_both_base_job_templates():
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate

    async with get_client() as client:
        for kind in ("kubernetes", "ecs"):
            template = json.loads((POOLS / f"{kind}-base-job-template.json").read_text())
            pool = await client.create_work_pool(
                WorkPoolCreate(name=f"webtask-test-{kind}", type=kind, base_job_template=template),
                overwrite=True)
            assert pool.base_job_template["variables"]["properties"]["image"]["description"].count("Chromium")


async def test_the_ecs_template_renders_a_task_sized_for_chromium():
    from prefect_aws.workers.ecs_worker import ECSJobConfiguration

    template = json.loads((POOLS / "ecs-base-job-template.json").read_text())
    config = await ECSJobConfiguration.from_template_and_values(template, {"image": "registry/webtask:1"})
    assert (config.task_definition["cpu"], config.task_definition["memory"]) == (2048, 4096)
    # no pinned path: the image's headless shell, when it has one, is found on PATH before the full browser
    assert "WEBTASK_CHROMIUM_PATH" not in config.env
    assert config.task_definition["containerDefinitions"][0]["image"] == "registry/webtask:1"


def test_the_kubernetes_template_renders_a_pod_with_room_for_chromium():
    from prefect.utilities.templating import apply_values

    template = json.loads((POOLS / "kubernetes-base-job-template.json").read_text())
    defaults = {name: spec.get("default") for name, spec in template["variables"]["properties"].items()}
    rendered = apply_values(template["job_configuration"], defaults | {"image": "registry/webtask:1"})
    pod = rendered["job_manifest"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["name"] == "prefect-job" and container["image"] == "registry/webtask:1"
    assert container["resources"] == {"requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"memory": "4Gi"}}
    assert {m["mountPath"] for m in container["volumeMounts"]} == {"/dev/shm", "/tmp"}
    assert {v["name"]: v["emptyDir"].get("medium") for v in pod["volumes"]} == {"dshm": "Memory", "tmp": None}
    assert "WEBTASK_CHROMIUM_PATH" not in rendered["env"]


@pytest.mark.parametrize("file", ["prefect.yaml", "deployments/etl-chaining.prefect.yaml"])
def test_every_deployment_that_reads_a_variable_refuses_to_deploy_without_it(file: str):
    """`prefect deploy` fills an unset {{ $VAR }} with "" (and only logs it): each deployment whose
    parameters read one has a build step that checks every such variable first."""
    import re

    config = yaml.safe_load((PROJECT / file).read_text())
    for deployment in config["deployments"]:
        read = {name: match for name, value in deployment.get("parameters", {}).items()
                for match in re.findall(r"\{\{\s*\$(\w+)\s*\}\}", str(value))}
        checked = {name: variable for step in deployment.get("build") or []
                   for name, variable in step.get("webtask_flows.deploy_checks.require_env", {}).items()}
        assert checked == read, deployment["name"]


async def test_the_build_step_names_each_unset_variable_and_its_parameter(monkeypatch):
    from prefect.deployments.steps.core import StepExecutionError, run_steps

    from webtask_core.errors import ConfigError

    (nightly,) = [d for d in yaml.safe_load((PROJECT / "prefect.yaml").read_text())["deployments"]
                  if d["name"] == "nightly"]
    monkeypatch.setenv("WEBTASK_SITE_USER", "ops")
    monkeypatch.setenv("WEBTASK_SITE_URL", "  ")
    monkeypatch.delenv("WEBTASK_NIGHTLY_MANIFEST", raising=False)
    with pytest.raises(StepExecutionError) as caught:
        await run_steps(nightly["build"], {})
    error = caught.value.__cause__
    assert isinstance(error, ConfigError) and error.parameter == "WEBTASK_SITE_URL, WEBTASK_NIGHTLY_MANIFEST"
    assert "parameters site_url, manifest" in str(error)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    assert await run_steps(nightly["build"], {}) == {}
