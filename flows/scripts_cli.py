"""``webtask scripts list|show|delete``: the replay scripts in the session store's ``scripts/``.

The store is ``--store`` (a folder or ``s3://bucket/prefix/``), else ``WEBTASK_SESSION_STORE``, else
``~/.webtask/sessions`` — where ``run-webtask`` keeps them.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import typer

__all__ = ["scripts_app"]

scripts_app = typer.Typer(no_args_is_help=True, help="Replay scripts: list, show or delete them.")

STORE_OPTION = typer.Option(None, "--store", help="A folder or s3://bucket/prefix/ (default: WEBTASK_SESSION_STORE).")


def _store(location: str | None) -> Any:
    from webtask_core.errors import ConfigError
    from webtask_flows.replay_scripts import get_script_store
    from webtask_flows.session_store import get_session_store

    async def open_store() -> Any:
        return await get_script_store(await get_session_store(location))

    try:
        return asyncio.run(open_store())
    except ConfigError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None


def _load(store: Any, key: str) -> Any:
    from webtask_core.errors import ConfigError, SessionFormatError

    try:
        script = store.load(key)
    except (ConfigError, SessionFormatError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    if script is None:
        typer.echo(f"error: no replay script {key!r} at {store.location(key)}", err=True)
        raise typer.Exit(1)
    return script


@scripts_app.command("list")
def list_scripts(store: str | None = STORE_OPTION) -> None:
    """Every script: key, revision, steps (how many replay without the model), when and by what recorded."""
    from rich.console import Console
    from rich.table import Table

    from webtask_core.errors import SessionFormatError

    scripts = _store(store)
    keys = scripts.keys()
    if not keys:
        typer.echo(f"No replay scripts in {scripts.where}")
        return
    table = Table("key", "revision", "steps", "replayable", "recorded", "source")
    for key in keys:
        try:
            script = scripts.load(key)
        except SessionFormatError as error:
            table.add_row(key, "-", "-", "-", "unreadable", str(error)[:80])
            continue
        table.add_row(key, str(script.revision), str(len(script.steps)), str(script.replayable_steps),
                      script.recorded_at.strftime("%Y-%m-%d %H:%M"), script.source or "-")
    Console(width=160).print(table)


@scripts_app.command("show")
def show_script(key: str, store: str | None = STORE_OPTION,
                as_json: bool = typer.Option(False, "--json", help="The stored JSON document.")) -> None:
    """One script, step by step: the page it expects and what it does there."""
    script = _load(_store(store), key)
    if as_json:
        typer.echo(json.dumps(script.model_dump(mode="json"), indent=2))
        return
    typer.echo(f"{script.key}: revision {script.revision}, {len(script.steps)} step(s), "
               f"parameters {', '.join(script.params) or '(none)'}")
    for number, step in enumerate(script.steps, start=1):
        page = f"{step.page.url} {step.page.title!r}"
        typer.echo(f"{number:>3}. on {page}" + (f"  [model: {step.needs_model}]" if step.needs_model else ""))
        for action in step.actions:
            target = f" {action.element.describe()}" if action.element is not None else ""
            arguments = {name: value for name, value in action.input.items() if name != "element_id"}
            typer.echo(f"       {action.tool}{target} {json.dumps(arguments, ensure_ascii=False) if arguments else ''}")


@scripts_app.command("delete")
def delete_script(key: str, store: str | None = STORE_OPTION) -> None:
    """Delete one script: the next run with its key records it afresh."""
    from webtask_core.errors import ConfigError

    scripts = _store(store)
    try:
        deleted = scripts.delete(key)
    except ConfigError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    if not deleted:
        typer.echo(f"error: no replay script {key!r} at {scripts.location(key)}", err=True)
        raise typer.Exit(1)
    typer.echo(f"Deleted {key!r} ({scripts.location(key)})")
