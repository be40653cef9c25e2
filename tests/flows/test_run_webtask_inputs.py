"""Bad input fails the run clearly, before a browser starts, and leaves nothing behind."""

from __future__ import annotations

import pytest
from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    shop,  # noqa: F401 (fixture)
)

from webtask_core.errors import ConfigError, ResourceError
from webtask_core.testing import ReplayPolicy, ToolUse
from webtask_flows.run_flow import run_webtask


async def _failed_run(monkeypatch, shop, **parameters):
    async with fake_model_env(ReplayPolicy([ToolUse("complete", {"feedback": "done"})]), monkeypatch) as server:
        parameters.setdefault("start_url", shop.url("/login"))
        state = await run_webtask("List the boots.", return_state=True, **parameters)
        requests = server.requests
    assert state.is_failed() and state.name == "Failed", state
    assert requests == [] and shop.request_log == []  # no model call, no page opened
    return state


async def test_missing_s3_object_is_named(flow_env, shop, monkeypatch, s3_endpoint, s3_client, s3_bucket, tmp_path):
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    (tmp_path / "ok.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    s3_client.upload_file(str(tmp_path / "ok.jpg"), s3_bucket, "ok.jpg")
    uri = f"s3://{s3_bucket}/photos/missing.jpg"
    state = await _failed_run(monkeypatch, shop, resources={"listing_image_1": f"s3://{s3_bucket}/ok.jpg",
                                                            "listing_image_2": uri})
    assert f"object not found: {uri}" in state.message and "listing_image_2" in state.message
    with pytest.raises(ResourceError):
        await state.aresult()


async def test_resource_name_trying_to_escape_the_folder_is_refused(flow_env, shop, monkeypatch, tmp_path):
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(b"jpeg")
    state = await _failed_run(monkeypatch, shop, resources={"../../escape": str(photo)})
    assert "resource '../../escape': invalid name" in state.message


async def test_missing_secret_block_is_named(flow_env, shop, monkeypatch):
    state = await _failed_run(monkeypatch, shop, secrets={"shop_password": "no-such-secret-block"})
    assert "no Secret block named 'no-such-secret-block'" in state.message


@pytest.mark.parametrize("parameters, named", [
    ({"max_steps": 0}, "max_steps"),
    ({"session_key": "../etc"}, "session_key"),
    ({"output_schema": {"type": "array"}}, "output_schema"),
    ({"start_url": "ftp://example.com"}, "start_url"),
    ({"start_url": "not a url"}, "start_url"),
    ({"model": "gpt-4o"}, "model"),
    ({"output_schema": {"type": "object", "properties": {"x": {"type": "no-such-type"}}}}, "output_schema"),
    ({"allowed_domains": ["https://shop.example/path"]}, "allowed_domains"),
    ({"secrets": {"shop_password": "env:WEBTASK_TEST_UNSET_VARIABLE"}}, "WEBTASK_TEST_UNSET_VARIABLE"),
    ({"replay": {"key": "../scripts", "params": {}}}, "replay.key"),
    ({"replay": {"key": "job.host.v1", "params": {"sku": "A-1"}, "identifying": ["title"]}}, "replay.identifying"),
])
async def test_bad_parameters_are_named(flow_env, shop, monkeypatch, parameters, named):
    state = await _failed_run(monkeypatch, shop, **parameters)
    assert named in state.message
    with pytest.raises(ConfigError):
        await state.aresult()


async def test_start_url_outside_allowed_domains_fails_and_closes_the_browser(flow_env, shop, monkeypatch):
    state = await _failed_run(monkeypatch, shop, allowed_domains=["shop.example"])
    assert "start_url" in state.message


async def test_secrets_can_come_from_the_workers_environment(monkeypatch):
    from webtask_flows.run_flow import load_secrets

    monkeypatch.setenv("WEBTASK_TEST_SHOP_PASSWORD", "from-the-environment")
    assert await load_secrets({"shop_password": "env:WEBTASK_TEST_SHOP_PASSWORD"}) == {
        "shop_password": "from-the-environment"
    }
