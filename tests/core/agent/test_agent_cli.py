"""`webtask run`: one task from the command line, live step lines on stderr, the result as JSON."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agent_helpers import fake_model
from typer.testing import CliRunner

from webtask_core.cli import app
from webtask_core.testing import ReplayPolicy, Reply, ToolUse


async def test_run_prints_each_step_and_the_result_as_json(shop, photos: list[Path], tmp_path: Path, monkeypatch):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"heading": {"type": "string"}},
                                  "required": ["heading"]}))
    script = [
        ToolUse("set_output", {"heading": 5}),  # invalid: the model is told and tries again
        Reply(text="The log-in page is open.", tool_uses=[
            ToolUse("set_output", {"heading": "Log in"}), ToolUse("complete", {"feedback": "Read the heading."})]),
    ]
    async with fake_model(ReplayPolicy(script)) as (server, _):
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        # The command runs its own event loop: give it a thread of its own, as a terminal would.
        result = await asyncio.to_thread(
            CliRunner().invoke, app,
            ["run", "Read the page heading.", "--url", shop.url("/login"), "--resource", f"photo={photos[0]}",
             "--max-steps", "4", "--output-schema", str(schema)],
        )
        request = server.requests[0]
    assert result.exit_code == 0, result.output
    final = json.loads(result.stdout.strip().splitlines()[-1])
    assert final["status"] == "completed" and final["output"] == {"heading": "Log in"} and final["steps"] == 2
    assert "step 1" in result.stderr and "set_output" in result.stderr and "step 2" in result.stderr
    assert "- photo (image/jpeg" in json.dumps(request)


def test_run_refuses_a_malformed_resource():
    result = CliRunner().invoke(app, ["run", "Do it.", "--resource", "no-equals-sign"])
    assert result.exit_code == 2 and "expected name=path" in result.output
