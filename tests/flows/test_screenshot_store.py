"""Step pictures with a URL: with WEBTASK_SCREENSHOT_STORE on S3 (moto's server), each step's picture is
uploaded and shown through a presigned URL — an image artifact on the step, linked from its markdown —
instead of inline base64 in Prefect's database."""

from __future__ import annotations

import httpx
import pytest
from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    read_artifacts,
    shop,  # noqa: F401 (fixture)
)

from webtask_core.errors import ConfigError
from webtask_core.testing import ReplayPolicy, ToolUse
from webtask_flows.run_flow import run_webtask
from webtask_flows.screenshots import screenshot_store_from_env


async def test_step_pictures_are_image_artifacts_with_presigned_urls(flow_env, shop, monkeypatch, s3_endpoint,
                                                                    s3_client, s3_bucket):
    monkeypatch.setenv("WEBTASK_S3_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("WEBTASK_SCREENSHOT_STORE", f"s3://{s3_bucket}/shots")
    policy = ReplayPolicy([ToolUse("navigate", {"url": shop.url("/login")}),
                           ToolUse("complete", {"feedback": "saw the login page"})])
    async with fake_model_env(policy, monkeypatch):
        state = await run_webtask(task="Open the login page", start_url=shop.url("/listings"), return_state=True)
    assert state.is_completed(), state.message
    run_id = str(state.state_details.flow_run_id)

    artifacts = await read_artifacts(run_id)
    images = [a for a in artifacts if a.type == "image"]
    steps = [a for a in artifacts if a.type == "markdown" and (a.description or "").startswith("Step ")]
    assert len(images) == len(steps) == 2
    keys = sorted(o["Key"] for o in s3_client.list_objects_v2(Bucket=s3_bucket)["Contents"])
    assert keys == [f"shots/{run_id}/step-1.jpg", f"shots/{run_id}/step-2.jpg"]
    for image in images:
        async with httpx.AsyncClient() as http:
            response = await http.get(image.data)  # the URL works without credentials
        assert response.status_code == 200 and response.content[:3] == b"\xff\xd8\xff"  # a JPEG
    for step in steps:
        assert "data:image/jpeg;base64" not in step.data and f"{s3_endpoint}/{s3_bucket}/shots/{run_id}/" in step.data


@pytest.mark.parametrize(("value", "days", "says"), [
    ("/tmp/shots", None, "must be an s3://bucket/prefix URI"),
    ("s3://", None, "names no bucket"),
    ("s3://b/p", "30", "at most 7"),
    ("s3://b/p", "a week", "must be a number of days"),
])
def test_a_bad_screenshot_store_setting_is_named(monkeypatch, value, days, says):
    monkeypatch.setenv("WEBTASK_SCREENSHOT_STORE", value)
    if days is not None:
        monkeypatch.setenv("WEBTASK_SCREENSHOT_URL_DAYS", days)
    with pytest.raises(ConfigError, match=says):
        screenshot_store_from_env()
