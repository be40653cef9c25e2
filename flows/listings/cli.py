"""The `webtask` command: the library's commands (webtask_core.cli) plus the ones that run Prefect flows.

Kept here so webtask_core never imports prefect; flow imports stay inside the commands so
`webtask run` does not pay for importing Prefect.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import typer

from webtask_core.cli import app
from webtask_flows.scripts_cli import scripts_app

__all__ = ["app", "print_outcome"]

app.add_typer(scripts_app, name="scripts")


def _require_demo_extra(command: str) -> None:
    # The demo marketplace is an extra: say what to install instead of a traceback from the site.
    from webtask_flows.listings.demo import require_demo_extra

    try:
        require_demo_extra(f"`webtask {command}`")
    except ModuleNotFoundError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None


@app.command("demo")
def demo(
    listings: int = typer.Option(4, "--listings", min=1, max=20, help="How many listings to upload."),
    concurrency: int = typer.Option(2, "--concurrency", min=1, max=8, help="Listings in flight at once."),
    keep_open: bool = typer.Option(False, "--keep-open", help="Keep the marketplace up until Ctrl+C."),
    workdir: Path | None = typer.Option(None, "--workdir", help="Keep the manifest, photos and ledger here."),
    replay: bool = typer.Option(True, "--replay/--no-replay",
                                help="Learn the listing flow on the first listing, replay it on the rest."),
    approval: bool = typer.Option(True, "--approval/--no-approval",
                                  help="The last listing waits for a person's approval before Publish; the demo "
                                       "answers it through the Prefect API, as the UI does."),
    json_line: bool = typer.Option(False, "--json",
                                   help="End with the outcome as one JSON line on stdout, for a script to read."),
) -> None:
    """The offline demo: a batch listing upload to a local marketplace, on Prefect's embedded server."""
    _require_demo_extra("demo")
    from webtask_flows.listings.demo import prepare_environment

    prepare_environment()  # before anything imports Prefect

    import asyncio

    from rich.console import Console

    from webtask_flows.listings.demo import DemoOptions, run_demo

    console = Console(stderr=True)
    options = DemoOptions(listings=listings, concurrency=concurrency, keep_open=keep_open, workdir=workdir,
                          replay=replay, approval=approval)
    outcome = asyncio.run(run_demo(console, options))
    print_outcome(outcome, json_line=json_line)
    if outcome["status"] != "completed":
        raise typer.Exit(1)


def print_outcome(outcome: dict[str, Any], *, json_line: bool) -> None:
    """The demo's outcome for a script (``--json``: one line on stdout); a person has read it above."""
    if json_line:
        typer.echo(json.dumps(outcome))


@app.command("services")
def services(
    listings: int = typer.Option(4, "--listings", min=1, max=20, help="Listings in the demo manifest."),
    workdir: Path | None = typer.Option(None, "--workdir", help="Keep the manifest, photos, ledger and sessions here."),
    model_port: int = typer.Option(0, "--model-port", min=0, max=65535, help="Port of the offline model (0: a free one)."),
    site_port: int = typer.Option(0, "--site-port", min=0, max=65535, help="Port of the demo marketplace (0: a free one)."),
    abort_sku: list[str] = typer.Option([], "--abort-sku", metavar="SKU",
                                        help="The model gives this listing up (webtask.task.aborted); repeat for more."),
    fail_sku: list[str] = typer.Option([], "--fail-sku", metavar="SKU",
                                       help="The model API rejects this listing's requests: its run fails "
                                            "(webtask.task.failed); repeat for more."),
    layout: str = typer.Option("", "--layout", metavar="CHANGES",
                               help="The site's redesign: renamed_field, extra_step, moved_button (comma-separated) "
                                    "or all; switch while serving with POST <site>/_layout."),
    alter: str = typer.Option("", "--alter", metavar="CHANGES",
                              help="The site changes what you typed when it stores a listing: vat (19 % added), "
                                   "quantity (capped at 5), title (cut at 40), comma-separated, each =N for "
                                   "another number; the read-back reports each as a mismatch (POST <site>/_alterations)."),
    second_factor: str | None = typer.Option(None, "--second-factor", metavar="email|totp",
                                             help="The log-in asks for a second factor: a code e-mailed to the "
                                                  "site's /inbox page (a person answers the run's form), or an "
                                                  "authenticator app's code (its seed printed for a Secret block; "
                                                  "run the batch with --param totp_secret=shop-2fa)."),
) -> None:
    """The offline kit as services: the scripted model and the demo marketplace until Ctrl+C, with
    the environment a separate `prefect worker` and `prefect deploy` need printed to export. Chosen
    listings can abort or fail and the site can show its redesign, for a trial of the alerts and
    repairs (change them while serving in <workdir>/faults.json and with POST <site>/_layout)."""
    _require_demo_extra("services")
    from rich.console import Console

    from webtask_core.errors import ConfigError
    from webtask_flows.listings.services import SecondFactor, ServicesOptions, run_services

    console = Console(stderr=True)
    if second_factor not in (None, "email", "totp"):
        console.print(f"error: --second-factor must be email or totp, got {second_factor!r}", markup=False)
        raise typer.Exit(2)
    options = ServicesOptions(listings=listings, workdir=workdir, model_port=model_port, site_port=site_port,
                              abort_skus=list(abort_sku), fail_skus=list(fail_sku), layout=layout, alter=alter,
                              second_factor=cast("SecondFactor | None", second_factor))
    try:
        run_services(options, say=lambda line: typer.echo(line),
                     note=lambda text: console.print(text, soft_wrap=True, markup=False, highlight=False))
    except ConfigError as error:  # a port in use, an unknown layout change or alteration
        console.print(f"error: {error}", markup=False)
        raise typer.Exit(2) from None
