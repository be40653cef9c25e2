"""``webtask services``: the offline kit as long-lived services, for a Prefect worker started apart.

It runs the scripted offline model (:class:`~webtask_core.testing.FakeAnthropicServer` with
:class:`~webtask_core.testing.MarketplaceListingPolicy`) and the demo marketplace on 127.0.0.1,
writes a manifest of demo listings with their photos, prints the environment a worker and
``prefect deploy`` need, and serves until Ctrl+C (or SIGTERM).
"""

from __future__ import annotations

import shlex
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from webtask_core.errors import ConfigError

__all__ = ["ServicesOptions", "Services", "running_services", "run_services", "OFFLINE_API_KEY"]

OFFLINE_API_KEY = "offline-services"  # the fake server accepts any key; the SDK insists on one


@dataclass
class ServicesOptions:
    listings: int = 4
    workdir: Path | None = None  # default: a temporary folder, removed when the services stop
    model_port: int = 0  # 0: a free port
    site_port: int = 0


@dataclass
class Services:
    model_url: str
    site_url: str  # the listings page: where every task starts
    workdir: Path

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
        }

    def instructions(self) -> list[str]:
        """Shell lines to paste where the worker and ``prefect deploy`` run."""
        from webtask_flows.listings.demo import DEMO_PASSWORD

        exports = [f"export {name}={shlex.quote(value)}" for name, value in self.environment().items()]
        secret = f"Secret(value={DEMO_PASSWORD!r}).save('shop-password', overwrite=True)"  # the batch's default block
        return [*exports, f'python -c "from prefect.blocks.system import Secret; {secret}"']


@contextmanager
def running_services(options: ServicesOptions) -> Iterator[Services]:
    """Both services and the manifest, stopped and (unless ``workdir`` was given) removed after."""
    from webtask_core.testing import FakeAnthropicServer, MarketplaceListingPolicy
    from webtask_core.testing.marketplace import Marketplace
    from webtask_flows.listings.demo import DEMO_PASSWORD, DEMO_USER, write_demo_manifest

    owned = options.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="webtask-services-")) if options.workdir is None else Path(options.workdir)
    try:
        with ExitStack() as stack:
            try:
                model = stack.enter_context(FakeAnthropicServer(MarketplaceListingPolicy(), port=options.model_port))
            except OSError as error:  # the port is taken
                raise ConfigError("model_port", f"cannot listen on 127.0.0.1:{options.model_port}: {error}") from None
            try:
                shop = stack.enter_context(Marketplace(users={DEMO_USER: DEMO_PASSWORD}, port=options.site_port))
            except RuntimeError as error:
                raise ConfigError("site_port", str(error)) from None
            workdir.mkdir(parents=True, exist_ok=True)
            write_demo_manifest(workdir, options.listings)
            yield Services(model_url=model.base_url, site_url=shop.url("/listings"), workdir=workdir)
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
            note("Where the worker and `prefect deploy` run:")
            for line in services.instructions():
                say(line)
            note("Serving until Ctrl+C.")
            stop.wait()
        note("Stopped.")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
