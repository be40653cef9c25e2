"""The `webtask` command line."""

from __future__ import annotations

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
