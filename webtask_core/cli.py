"""The `webtask` command line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Optional

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
    url: Optional[str] = typer.Option(None, "--url", help="Page to open before the first step."),
    resource: list[str] = typer.Option(
        [], "--resource", help="A file the agent may upload, as name=path (repeatable)."
    ),
    max_steps: int = typer.Option(20, "--max-steps", min=1, help="Stop after this many steps."),
    output_schema: Optional[Path] = typer.Option(
        None, "--output-schema", help="JSON schema file (type object) for the structured output."
    ),
    model: Optional[str] = typer.Option(None, "--model", help="Anthropic model name."),
    headed: bool = typer.Option(False, "--headed", help="Show the browser window."),
) -> None:
    """Run one task with Claude (ANTHROPIC_API_KEY) in Chromium; print each step, then the result as JSON."""
    from rich.console import Console

    from webtask_core.errors import WebtaskError

    console = Console(stderr=True)
    resources = _parse_resources(resource)
    schema = _load_output_schema(output_schema)
    try:
        result = asyncio.run(_run_task(console, task, url, resources, max_steps, schema, model, headed))
    except WebtaskError as exc:
        console.print(f"[red]error:[/red] {type(exc).__name__}: {exc}")
        raise typer.Exit(2) from None
    typer.echo(json.dumps(result, ensure_ascii=False, default=str))
    if result["status"] != "completed":
        raise typer.Exit(1)


async def _run_task(
    console: Any, task: str, url: str | None, resources: dict[str, str], max_steps: int,
    schema: dict[str, Any] | None, model: str | None, headed: bool,
) -> dict[str, Any]:
    from rich.markup import escape

    from webtask_core.agent import Agent
    from webtask_core.browser import BrowserConfig
    from webtask_core.llm.anthropic import AnthropicLLM

    llm = AnthropicLLM(model) if model else AnthropicLLM()
    async with llm, Agent(llm, browser_config=BrowserConfig(headless=not headed), start_url=url,
                          resources=resources) as agent:
        agent.set_task(task, max_steps=max_steps, output_schema=schema)
        while True:
            step, finished = await agent.run_step()
            colour = "green" if step.ok and not step.error else "yellow"
            console.print(
                f"[bold]step {step.index}[/bold] [dim]{escape(step.url)}[/dim]\n"
                f"  [{colour}]{escape(step.error or step.summary())}[/{colour}]"
                f" [dim]({step.timings.total_ms / 1000:.1f} s)[/dim]"
            )
            if finished:
                break
        result = agent.last_result
        assert result is not None
        colour = "green" if result.ok else "red"
        console.print(f"[{colour}]{result.status.value}[/{colour}]: {escape(result.feedback)}")
        return result.model_dump(mode="json")
