"""``webtask services``: the offline kit as long-lived services, for a Prefect worker started apart.

It runs the scripted offline model (:class:`~webtask_core.testing.FakeAnthropicServer` with
:class:`~webtask_core.testing.MarketplaceListingPolicy`) and the demo marketplace on 127.0.0.1,
writes a manifest of demo listings with their photos, prints the environment a worker and
``prefect deploy`` need, and serves until Ctrl+C (or SIGTERM).

For a trial of the alerts and repairs, chosen listings can go wrong (``--abort-sku``: the model gives
up, ``webtask.task.aborted``; ``--fail-sku``: the model API rejects the listing's requests, the run
fails, ``webtask.task.failed``), the site can show its redesign (``--layout``) and change what you
typed when it stores a listing (``--alter vat,quantity,title``: the read-back's mismatch). All can
change while the services run: the faults live in ``<workdir>/faults.json`` (read again on every
model call), the layout is ``POST <site>/_layout``, the alterations ``POST <site>/_alterations``.
``GET <site>/api/listings`` counts what is published.

``--second-factor email|totp`` makes the site's log-in ask for a second factor: ``email`` sends a code
to the site's ``/inbox`` page (the account owner's mailbox: a person reads it there and answers the
run's form); ``totp`` asks for an authenticator app's code, whose seed is printed as a Secret block
command (``shop-2fa``) for the batch's ``totp_secret`` parameter: nobody is asked.
"""

from __future__ import annotations

import json
import logging
import shlex
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from webtask_core.errors import ConfigError

__all__ = ["ServicesOptions", "Services", "TrialPolicy", "running_services", "run_services", "OFFLINE_API_KEY",
           "FAULTS_FILE", "TOTP_SECRET_BLOCK", "SecondFactor"]

logger = logging.getLogger(__name__)

OFFLINE_API_KEY = "offline-services"  # the fake server accepts any key; the SDK insists on one
FAULTS_FILE = "faults.json"
TOTP_SECRET_BLOCK = "shop-2fa"  # the Secret block the printed command saves the TOTP seed in
SecondFactor = Literal["email", "totp"]


@dataclass
class ServicesOptions:
    listings: int = 4
    workdir: Path | None = None  # default: a temporary folder, removed when the services stop
    model_port: int = 0  # 0: a free port
    site_port: int = 0
    abort_skus: list[str] = field(default_factory=list)  # the model gives these listings up
    fail_skus: list[str] = field(default_factory=list)  # the model API rejects these listings' requests
    layout: str = ""  # the site's layout: "" (original), "all", or changes ("renamed_field,extra_step")
    alter: str = ""  # what the site changes in what you typed: "" (nothing), or "vat,quantity,title"
    second_factor: SecondFactor | None = None  # what the site's log-in asks after the password


@dataclass
class Services:
    model_url: str
    site_url: str  # the listings page: where every task starts
    workdir: Path
    second_factor: SecondFactor | None = None
    totp_seed: str | None = None  # with second_factor "totp": what an authenticator app is set up with

    @property
    def faults_file(self) -> Path:
        return self.workdir / FAULTS_FILE

    @property
    def site_root(self) -> str:
        return self.site_url.rsplit("/listings", 1)[0]

    @property
    def inbox_url(self) -> str:
        """The account owner's mailbox, where an e-mailed sign-in code lands."""
        return self.site_root + "/inbox"

    def environment(self) -> dict[str, str]:
        """What a worker (model, site, ledger, sessions) and ``prefect deploy`` (the nightly parameters) read."""
        from webtask_flows.listings.demo import DEMO_USER

        return {
            "ANTHROPIC_BASE_URL": self.model_url,
            "ANTHROPIC_API_KEY": OFFLINE_API_KEY,
            "WEBTASK_SITE_URL": self.site_url,
            "WEBTASK_SITE_USER": DEMO_USER,
            "WEBTASK_NIGHTLY_MANIFEST": str(self.workdir / "manifest.jsonl"),
            # A fresh marketplace has none of the listings a ledger from an earlier run remembers.
            "WEBTASK_LEDGER": str(self.workdir / "ledger"),
            "WEBTASK_SESSION_STORE": str(self.workdir / "sessions"),
            "WEBTASK_TRACE_STORE": str(self.workdir / "traces"),  # the Playwright traces of runs that went wrong
        }

    def instructions(self) -> list[str]:
        """Shell lines to paste where the worker and ``prefect deploy`` run."""
        from webtask_flows.listings.demo import DEMO_PASSWORD

        exports = [f"export {name}={shlex.quote(value)}" for name, value in self.environment().items()]
        secrets = [f"Secret(value={DEMO_PASSWORD!r}).save('shop-password', overwrite=True)"]  # the batch's default
        if self.totp_seed:  # the batch's totp_secret parameter names it
            secrets.append(f"Secret(value={self.totp_seed!r}).save({TOTP_SECRET_BLOCK!r}, overwrite=True)")
        return [*exports, f'python -c "from prefect.blocks.system import Secret; {"; ".join(secrets)}"']


class TrialPolicy:
    """The scripted model, with the faults of ``faults_file`` (``{"abort": [SKU...], "fail": [SKU...]}``,
    read again whenever it changed): an aborted SKU's listing is given up at once; a failing SKU's
    requests are answered with an API error (the policy raises: the fake server answers 400), so its
    run fails. A file that cannot be read keeps the last faults that could."""

    def __init__(self, faults_file: Path):
        from webtask_core.testing import MarketplaceListingPolicy

        self.faults_file = faults_file
        self.lister = MarketplaceListingPolicy()
        self.fail: set[str] = set()
        self._stamp: float | None = None
        self._lock = threading.Lock()

    def _reload(self) -> None:
        try:
            stamp = self.faults_file.stat().st_mtime
        except FileNotFoundError:
            stamp = None
        if stamp == self._stamp:
            return
        self._stamp = stamp
        faults = read_faults(self.faults_file) if stamp is not None else {"abort": [], "fail": []}
        self.lister.abort_on_sku = {sku.strip().casefold() for sku in faults["abort"]}
        self.fail = {sku.strip().casefold() for sku in faults["fail"]}

    def __call__(self, request: dict[str, Any]) -> Any:
        from webtask_core.testing.request_view import task_json

        with self._lock:  # the server answers in threads
            try:
                self._reload()
            except ConfigError as error:
                logger.warning("Keeping the faults read before: %s", error)
        try:
            sku = str(task_json(request).get("sku") or "")
        except (ValueError, AttributeError):
            sku = ""
        if sku and sku.strip().casefold() in self.fail:
            raise RuntimeError(f"the listing of SKU {sku} is set to fail ({self.faults_file})")
        return self.lister(request)


def read_faults(path: Path) -> dict[str, list[str]]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ConfigError(str(path), f"cannot be read as JSON: {error}") from None
    if not isinstance(data, dict) or not all(
            isinstance(data.get(key, []), list) and all(isinstance(sku, str) for sku in data.get(key, []))
            for key in ("abort", "fail")):
        raise ConfigError(str(path), 'must look like {"abort": ["SKU-1"], "fail": ["SKU-2"]}')
    return {"abort": list(data.get("abort", [])), "fail": list(data.get("fail", []))}


def write_faults(path: Path, *, abort: list[str], fail: list[str]) -> None:
    path.write_text(json.dumps({"abort": abort, "fail": fail}, indent=2) + "\n")


@contextmanager
def running_services(options: ServicesOptions) -> Iterator[Services]:
    """Both services and the manifest, stopped and (unless ``workdir`` was given) removed after."""
    from webtask_core.testing import FakeAnthropicServer
    from webtask_core.testing.marketplace import Alterations, Layout, Marketplace
    from webtask_flows.listings.demo import DEMO_PASSWORD, DEMO_USER, write_demo_manifest

    try:
        layout = Layout.parse(options.layout)
    except ValueError as error:
        raise ConfigError("layout", str(error)) from None
    try:
        alterations = Alterations.parse(options.alter)
    except ValueError as error:
        raise ConfigError("alter", str(error)) from None
    owned = options.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="webtask-services-")) if options.workdir is None else Path(options.workdir)
    try:
        with ExitStack() as stack:
            workdir.mkdir(parents=True, exist_ok=True)
            write_faults(workdir / FAULTS_FILE, abort=options.abort_skus, fail=options.fail_skus)
            try:
                model = stack.enter_context(FakeAnthropicServer(TrialPolicy(workdir / FAULTS_FILE),
                                                                port=options.model_port))
            except OSError as error:  # the port is taken
                raise ConfigError("model_port", f"cannot listen on 127.0.0.1:{options.model_port}: {error}") from None
            try:
                shop = stack.enter_context(Marketplace(users={DEMO_USER: DEMO_PASSWORD}, port=options.site_port,
                                                       layout=layout, alterations=alterations,
                                                       second_factor=options.second_factor))
            except RuntimeError as error:
                raise ConfigError("site_port", str(error)) from None
            write_demo_manifest(workdir, options.listings)
            yield Services(model_url=model.base_url, site_url=shop.url("/listings"), workdir=workdir,
                           second_factor=options.second_factor,
                           totp_seed=shop.checks.totp_seed if options.second_factor == "totp" else None)
    finally:
        if owned:
            shutil.rmtree(workdir, ignore_errors=True)


def run_services(options: ServicesOptions, say: Callable[[str], None], note: Callable[[str], None]) -> None:
    """Start the services, ``say`` the lines to export (stdout), ``note`` the rest, serve until a signal."""
    from webtask_flows.listings.demo import DEMO_PASSWORD, DEMO_USER

    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with running_services(options) as services:
            note(f"Offline model: {services.model_url} (scripted: lists the demo products)")
            note(f"Demo marketplace: {services.site_url} (log in as {DEMO_USER} / {DEMO_PASSWORD})")
            note(f"Manifest: {services.workdir / 'manifest.jsonl'} ({options.listings} listings)")
            note(f"Faults: {services.faults_file} (abort: {', '.join(options.abort_skus) or 'none'}; fail: "
                 f"{', '.join(options.fail_skus) or 'none'}; edit it while serving); layout: "
                 f"{options.layout or 'original'} (switch: POST {services.site_root}/_layout); what the site "
                 f"changes in what you typed: {options.alter or 'nothing'} (switch: POST {services.site_root}/_alterations); "
                 f"published: GET {services.site_root}/api/listings")
            if services.second_factor == "email":
                note(f"Second factor: the log-in e-mails a code to {services.inbox_url} (the account owner's "
                     "mailbox): read it there and answer the run's form (the webtask-waiting alert links to it)")
            elif services.second_factor == "totp":
                note(f"Second factor: an authenticator app's code; its seed goes in the Secret block "
                     f"{TOTP_SECRET_BLOCK!r} (the command below): run the batch with --param "
                     f"totp_secret={TOTP_SECRET_BLOCK} and nobody is asked")
            note("Where the worker and `prefect deploy` run:")
            for line in services.instructions():
                say(line)
            note("Serving until Ctrl+C.")
            stop.wait()
        note("Stopped.")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
