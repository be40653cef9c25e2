"""Bad input at the edges: rejected before any browser starts, with a message naming the parameter.

Model names: AnthropicLLM accepts names it does not know yet (new models come out before the SDK
lists them), but rejects at construction a name that cannot be a Claude model (``gpt-4o``,
``sonnet``); a well-formed name the provider does not know fails the first call with the
provider's 404 mapped to UnknownModelError, a ConfigError naming ``model`` that is never retried.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hardening_helpers import chromium_children, fake_model
from typer.testing import CliRunner

from webtask_core import Agent
from webtask_core.cli import app
from webtask_core.errors import ConfigError, PermanentModelError, ResourceError, UnknownModelError
from webtask_core.llm.anthropic import AnthropicLLM
from webtask_core.testing import ReplayPolicy, ToolUse

BAD_SCHEMAS = [
    {"type": "object", "properties": {"price": {"type": "money"}}},  # no such type
    {"type": "object", "required": "price"},  # required must be an array
    {"type": "array", "items": {"type": "string"}},  # the output is an object
    "not a schema",
]


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    path = tmp_path / "photo.jpg"
    path.write_bytes(b"\xff\xd8\xff fake jpeg")
    return path


async def _rejected(parameter: str, **do_arguments) -> ConfigError:
    """Agent.do with these arguments fails with a ConfigError naming `parameter`, starting nothing."""
    before = chromium_children()
    async with fake_model(ReplayPolicy([ToolUse("complete", {"feedback": "done"})])) as (server, llm):
        agent = Agent(llm)
        do_arguments.setdefault("task", "List the item.")
        with pytest.raises(ConfigError) as caught:
            await agent.do(**do_arguments)
        await agent.close()
        assert server.requests == []  # no model call either
    assert caught.value.parameter == parameter, caught.value
    assert chromium_children() == before  # no browser was started
    return caught.value


@pytest.mark.parametrize("schema", BAD_SCHEMAS)
async def test_an_output_schema_that_is_not_a_valid_json_schema(schema):
    error = await _rejected("output_schema", output_schema=schema)
    assert str(error).startswith("output_schema: ")


@pytest.mark.parametrize("max_steps", [0, -3, True, 2.5, "5"])
async def test_max_steps_below_one_or_not_an_integer(max_steps):
    error = await _rejected("max_steps", max_steps=max_steps)
    assert "positive integer" in str(error)


async def test_a_resource_path_that_does_not_exist_or_is_a_directory(tmp_path: Path, photo: Path):
    missing = await _rejected("resource 'listing_image_2'",
                              resources={"listing_image_1": photo, "listing_image_2": tmp_path / "nope.jpg"})
    assert isinstance(missing, ResourceError) and "no file at" in str(missing)
    folder = await _rejected("resource 'photos'", resources={"photos": tmp_path})
    assert "is not a file (a directory?)" in str(folder)
    with pytest.raises(ResourceError, match="resource 'x': no file at"):
        Agent(None, resources={"x": tmp_path / "gone.png"})  # type: ignore[arg-type]


async def test_an_empty_task():
    await _rejected("task", task="   ")


@pytest.mark.parametrize("url", ["shop.example.com", "ftp://example.com/", "http://", "javascript:alert(1)",
                                 "http://exa mple.com/", "http://example.com:port/", "", 42])
def test_a_start_url_that_is_not_an_http_url(url):
    with pytest.raises(ConfigError) as caught:
        Agent(None, start_url=url)  # type: ignore[arg-type]  # the constructor starts nothing
    assert caught.value.parameter == "start_url"


@pytest.mark.parametrize("model", ["gpt-4o", "sonnet", "claude", "Claude Sonnet 5", "claude-sonnet-5-5 "])
def test_a_model_name_that_cannot_be_claude_is_rejected_at_construction(model):
    with pytest.raises(ConfigError) as caught:
        AnthropicLLM(model, base_url="http://127.0.0.1:9", api_key="test")
    assert caught.value.parameter == "model" and "claude-sonnet-5-5" in str(caught.value)


async def test_a_well_formed_model_the_provider_does_not_know_fails_the_first_call_naming_model(photo):
    async with fake_model(ReplayPolicy([])) as (server, _):
        server.inject("not_found")
        async with AnthropicLLM("claude-sonet-5-5", base_url=server.base_url, api_key="test") as llm:
            async with Agent(llm) as agent:
                with pytest.raises(UnknownModelError) as caught:
                    await agent.do("Open the shop.")
        assert len(server.requests) == 1  # a 404 is not retried
    error = caught.value
    assert isinstance(error, ConfigError) and isinstance(error, PermanentModelError)
    assert error.parameter == "model" and "'claude-sonet-5-5'" in str(error) and error.status_code == 404


def _cli(monkeypatch, *arguments: str):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never reached: input is refused first
    before = chromium_children()
    result = CliRunner().invoke(app, ["run", "List the item.", *arguments])
    assert chromium_children() == before
    return result


@pytest.mark.parametrize("arguments, named", [
    (["--url", "shop.example.com"], "start_url"),
    (["--url", "http://127.0.0.1:9/", "--allowed-domain", "shop.example.com"], "start_url"),
    (["--max-steps", "0"], "--max-steps"),
    (["--model", "gpt-4o"], "model"),
    (["--allowed-domain", "https://shop.example.com/"], "allowed_domains"),
    (["--block-requests"], "block_requests"),
    (["--secret", "shop_password=WEBTASK_TEST_UNSET_VARIABLE"], "--secret"),
])
def test_webtask_run_refuses_bad_parameters_before_starting_a_browser(monkeypatch, arguments, named):
    monkeypatch.delenv("WEBTASK_TEST_UNSET_VARIABLE", raising=False)
    result = _cli(monkeypatch, *arguments)
    assert result.exit_code == 2, result.output
    assert named in result.output


def _said(result) -> str:
    """The CLI's output with its line wrapping undone: the error wraps where a long path meets the
    console's width (xdist's folders are longer), and the message is what is checked."""
    return " ".join(result.output.split())


def test_webtask_run_refuses_bad_schemas_and_resources(monkeypatch, tmp_path: Path, photo: Path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(BAD_SCHEMAS[0]))
    result = _cli(monkeypatch, "--output-schema", str(schema))
    assert result.exit_code == 2 and "output_schema: not a valid JSON schema" in _said(result)
    schema.write_text("{not json")
    assert "--output-schema" in _said(_cli(monkeypatch, "--output-schema", str(schema)))
    result = _cli(monkeypatch, "--resource", f"photo={tmp_path / 'missing.jpg'}")
    assert result.exit_code == 2 and "resource 'photo': no file at" in _said(result)
    result = _cli(monkeypatch, "--resource", f"photo={tmp_path}")
    assert result.exit_code == 2 and "is not a file" in _said(result)


async def test_the_cli_reads_secrets_from_the_environment(monkeypatch, tmp_path: Path):
    """--secret NAME=ENV_VAR: the value never appears on the command line nor in the output."""
    from hardening_helpers import Site

    form = '<title>Log in</title><input id="pw" type="password" name="pw"><input id="user" name="user">'
    script = ReplayPolicy([
        ToolUse("fill", {"element_id": "input-1", "text": "{{secret:token}}"}),
        ToolUse("complete", {"feedback": "typed"}),
    ])
    with Site(pages={"/login": form}) as site:
        async with fake_model(script) as (server, _):
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
            monkeypatch.setenv("SHOP_TOKEN", "tok-9f8e7d6c")
            result = await asyncio.to_thread(
                CliRunner().invoke, app,
                ["run", "Log in.", "--url", site.url("/login"), "--secret", "token=SHOP_TOKEN",
                 "--allowed-domain", "127.0.0.1"],
            )
            requests = json.dumps(server.requests)
    assert result.exit_code == 0, result.output
    assert "tok-9f8e7d6c" not in result.output and "tok-9f8e7d6c" not in requests
    assert "{{secret:token}}" in requests


def test_model_timeout_and_retries_come_from_the_environment_when_not_given(monkeypatch):
    monkeypatch.setenv("WEBTASK_MODEL_TIMEOUT_S", "7.5")
    monkeypatch.setenv("WEBTASK_MODEL_MAX_RETRIES", "0")
    llm = AnthropicLLM(base_url="http://127.0.0.1:9", api_key="test")
    assert (llm.timeout_s, llm.max_retries) == (7.5, 0)
    assert AnthropicLLM(base_url="http://127.0.0.1:9", api_key="test", timeout_s=3, max_retries=1).timeout_s == 3
    for name, value in [("WEBTASK_MODEL_TIMEOUT_S", "soon"), ("WEBTASK_MODEL_TIMEOUT_S", "0"),
                        ("WEBTASK_MODEL_MAX_RETRIES", "1.5"), ("WEBTASK_MODEL_MAX_RETRIES", "-1")]:
        monkeypatch.setenv(name, value)
        with pytest.raises(ConfigError) as caught:
            AnthropicLLM(base_url="http://127.0.0.1:9", api_key="test")
        assert caught.value.parameter == name
        monkeypatch.delenv(name)


def test_browser_timeouts_come_from_the_environment_when_not_given(monkeypatch):
    from webtask_core.browser import BrowserConfig

    monkeypatch.setenv("WEBTASK_NAVIGATION_TIMEOUT_S", "2.5")
    monkeypatch.setenv("WEBTASK_ACTION_TIMEOUT_S", "1.5")
    assert (BrowserConfig().navigation_timeout_s, BrowserConfig().action_timeout_s) == (2.5, 1.5)
    assert BrowserConfig(navigation_timeout_s=9).navigation_timeout_s == 9
    monkeypatch.setenv("WEBTASK_SETTLE_TIMEOUT_S", "a while")
    with pytest.raises(ConfigError) as caught:
        BrowserConfig()
    assert caught.value.parameter == "WEBTASK_SETTLE_TIMEOUT_S"
