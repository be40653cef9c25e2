"""``webtask scripts list|show|delete`` on a local store and on S3 (moto): what a user sees."""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from webtask_core.replay import ReplayScript, ScriptAction, ScriptStep, ScriptStore
from webtask_core.replay.signature import ElementFingerprint, PageSignature
from webtask_core.storage import LocalSessionStore, S3SessionStore
from webtask_flows.listings.cli import app


def a_script(key: str) -> ReplayScript:
    page = PageSignature(url="/listings/new", title="new listing", controls=("input text title",), keyed=False)
    field = ElementFingerprint(tag="input", type="text", name="title", text="title")
    return ReplayScript(key=key, revision=2, params=["title"], source="flow run 123", steps=[
        ScriptStep(page=page, actions=[ScriptAction(tool="fill", element=field,
                                                    input={"element_id": "{{element}}", "text": "{{param:title}}"})]),
    ])


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, ["scripts", *args], env=env)


def test_list_show_and_delete_on_a_local_store(tmp_path):
    ScriptStore(LocalSessionStore(tmp_path)).save(a_script("listing-task.shop.v1"))
    listed = run("list", "--store", str(tmp_path))
    assert listed.exit_code == 0, listed.output
    assert "listing-task.shop.v1" in listed.output and "flow run 123" in listed.output
    shown = run("show", "listing-task.shop.v1", env={"WEBTASK_SESSION_STORE": str(tmp_path)})
    assert shown.exit_code == 0, shown.output
    assert "revision 2" in shown.output and "fill input" in shown.output and "{{param:title}}" in shown.output
    as_json = run("show", "listing-task.shop.v1", "--store", str(tmp_path), "--json")
    assert ReplayScript.model_validate_json(as_json.output).revision == 2
    deleted = run("delete", "listing-task.shop.v1", "--store", str(tmp_path))
    assert deleted.exit_code == 0 and "Deleted" in deleted.output
    assert ScriptStore(LocalSessionStore(tmp_path)).keys() == []
    assert "No replay scripts in" in run("list", "--store", str(tmp_path)).output


def test_a_missing_or_unreadable_script_is_named(tmp_path):
    missing = run("delete", "no-such.script.v1", "--store", str(tmp_path))
    assert missing.exit_code == 1 and "no replay script 'no-such.script.v1'" in missing.output
    assert run("show", "no-such.script.v1", "--store", str(tmp_path)).exit_code == 1
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "broken.v1.json").write_text("{not json")
    broken = run("show", "broken.v1", "--store", str(tmp_path))
    assert broken.exit_code == 2 and "broken.v1" in broken.output and "not valid JSON" in broken.output
    assert "unreadable" in run("list", "--store", str(tmp_path)).output
    bad_key = run("delete", "../../etc", "--store", str(tmp_path))
    assert bad_key.exit_code == 2 and "error:" in bad_key.output


def test_scripts_on_s3_beside_the_sessions(s3_client, s3_bucket, s3_endpoint, monkeypatch):
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    ScriptStore(S3SessionStore(s3_client, s3_bucket, "sessions/")).save(a_script("listing-task.shop.v1"))
    assert s3_client.head_object(Bucket=s3_bucket, Key="sessions/scripts/listing-task.shop.v1.json")
    listed = run("list", "--store", f"s3://{s3_bucket}/sessions/")
    assert listed.exit_code == 0 and "listing-task.shop.v1" in listed.output, listed.output
    assert run("delete", "listing-task.shop.v1", "--store", f"s3://{s3_bucket}/sessions/").exit_code == 0
    assert "Contents" not in s3_client.list_objects_v2(Bucket=s3_bucket, Prefix="sessions/scripts/")
