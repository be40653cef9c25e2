"""The `webtask` command line."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any, NamedTuple

import typer

app = typer.Typer(no_args_is_help=True, help="Claude driving a real Chromium for web tasks no API covers.")


@app.command("browser-path")
def browser_path() -> None:
    """Print the Chromium executable webtask will use; exit 1 with advice when there is none."""
    from webtask_core.browser.chromium import ChromiumNotFound, find_chromium

    try:
        typer.echo(find_chromium())
    except ChromiumNotFound as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None


def _parse_resources(values: list[str]) -> dict[str, str]:
    resources: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise typer.BadParameter(f"expected name=path, got {value!r}", param_hint="--resource")
        resources[name.strip()] = path.strip()
    return resources


def _read_secrets(values: list[str]) -> dict[str, str]:
    """``NAME=ENV_VAR`` pairs: the value is read from the environment, never from the command line
    (where every user of the machine could see it in the process list)."""
    secrets: dict[str, str] = {}
    for value in values:
        name, sep, variable = value.partition("=")
        if not sep or not name.strip() or not variable.strip():
            raise typer.BadParameter(f"expected NAME=ENV_VAR, got {value!r}", param_hint="--secret")
        if variable.strip() not in os.environ:
            raise typer.BadParameter(f"the environment variable {variable.strip()!r} is not set", param_hint="--secret")
        secrets[name.strip()] = os.environ[variable.strip()]
    return secrets


def _load_output_schema(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise typer.BadParameter(f"cannot read a JSON schema from {str(path)!r}: {exc}",
                                 param_hint="--output-schema") from None
    if not isinstance(schema, dict):
        raise typer.BadParameter("the output schema must be a JSON object", param_hint="--output-schema")
    return schema


@app.command("run")
def run(
    task: str = typer.Argument(..., help="What the agent should do, in words."),
    url: str | None = typer.Option(None, "--url", help="Page to open before the first step."),
    resource: list[str] = typer.Option(
        [], "--resource", help="A file the agent may upload, as name=path (repeatable)."
    ),
    max_steps: int = typer.Option(20, "--max-steps", min=1, help="Stop after this many steps."),
    output_schema: Path | None = typer.Option(
        None, "--output-schema", help="JSON schema file (type object) for the structured output."
    ),
    model: str | None = typer.Option(None, "--model", help="Anthropic model name."),
    headed: bool = typer.Option(False, "--headed", help="Show the browser window."),
    allowed_domain: list[str] = typer.Option(
        [], "--allowed-domain", help="Keep navigation on this host pattern, e.g. shop.example.com or *.example.com (repeatable)."
    ),
    block_requests: bool = typer.Option(
        False, "--block-requests", help="With --allowed-domain: block every request to other hosts, not only navigation."
    ),
    secret: list[str] = typer.Option(
        [], "--secret", help="NAME=ENV_VAR: the task may use {{secret:NAME}}; the value comes from ENV_VAR (repeatable)."
    ),
) -> None:
    """Run one task with Claude (ANTHROPIC_API_KEY) in Chromium; print each step, then the result as JSON.

    A step the model API or the browser failed is retried (twice, with backoff) before giving up;
    Ctrl+C stops the task, closes the browser and exits with code 130."""
    from rich.console import Console

    from webtask_core.errors import WebtaskError

    console = Console(stderr=True)
    resources = _parse_resources(resource)
    schema = _load_output_schema(output_schema)
    secrets = _read_secrets(secret)
    options = _RunOptions(url=url, resources=resources, max_steps=max_steps, schema=schema, model=model,
                          headed=headed, allowed_domains=allowed_domain, block_requests=block_requests,
                          secrets=secrets)
    try:
        result = asyncio.run(_run_task(console, task, options))
    except WebtaskError as exc:
        console.print(f"[red]error:[/red] {type(exc).__name__}: {exc}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:  # asyncio.run cancelled the task first, so the browser is closed
        console.print("[yellow]interrupted[/yellow]: the task was stopped and the browser closed")
        raise typer.Exit(130) from None
    typer.echo(json.dumps(result, ensure_ascii=False, default=str))
    if result["status"] != "completed":
        raise typer.Exit(1)


class _RunOptions(NamedTuple):
    url: str | None
    resources: dict[str, str]
    max_steps: int
    schema: dict[str, Any] | None
    model: str | None
    headed: bool
    allowed_domains: list[str]
    block_requests: bool
    secrets: dict[str, str]


async def _run_task(console: Any, task: str, options: _RunOptions) -> dict[str, Any]:
    from webtask_core.agent import Agent
    from webtask_core.browser import BrowserConfig
    from webtask_core.cli_display import StepDisplay
    from webtask_core.human import terminal_handler
    from webtask_core.llm.anthropic import AnthropicLLM

    asyncio.get_running_loop().set_exception_handler(_without_driver_exit)
    llm = AnthropicLLM(options.model) if options.model else AnthropicLLM()
    display = StepDisplay(console)
    async with llm:
        # Every parameter is checked here, before a browser starts.
        agent = Agent(
            llm, browser_config=BrowserConfig(headless=not options.headed), start_url=options.url,
            resources=options.resources, secrets=options.secrets or None,
            allowed_domains=options.allowed_domains or None, block_requests=options.block_requests,
            progress=display.progress, human=terminal_handler(console),  # ask_human: asked here (hidden codes)
        )
        agent.set_task(task, max_steps=options.max_steps, output_schema=options.schema)
        with display:
            async with agent:
                while True:
                    step, finished = await agent.run_step(retry=True)
                    display.step_done(step)
                    if finished:
                        break
    result = agent.last_result
    assert result is not None
    display.finished(result)
    return result.model_dump(mode="json")


def _without_driver_exit(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Ctrl+C in a terminal signals Playwright's driver too, and it exits; Playwright records that as
    an error nobody reads, which asyncio would print when it collects it. The browser is closed
    either way, so that one message is dropped; everything else goes to asyncio's default handler."""
    if (context.get("message") == "Future exception was never retrieved"
            and "closed while reading from the driver" in str(context.get("exception"))):
        return
    loop.default_exception_handler(context)
