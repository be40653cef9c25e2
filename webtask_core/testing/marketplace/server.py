"""`Marketplace`: the demo site served by uvicorn from a background thread on 127.0.0.1:random."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

import uvicorn

from .alterations import ALTERATIONS_ENV, Alterations
from .app import RequestRecord, SiteState, create_app
from .checks import Checks, SecondFactor
from .layout import LAYOUT_ENV, Layout
from .store import ListingRecord, ListingStore

__all__ = ["Marketplace"]

_START_TIMEOUT_S = 10.0


class Marketplace:
    """A small, real marketplace web app for tests, with its own SQLite file and uploads folder.

    >>> with Marketplace(users={"demo": "demo-pass"}) as shop:
    ...     shop.base_url            # "http://127.0.0.1:54321"
    ...     shop.listings()          # what has been published, photos included
    ...     shop.set_layout(Layout(renamed_field=True))   # the next page served is the redesign

    ``second_factor="totp"|"email"``, ``challenge_after=N``: what only a person can pass (checks.py;
    ``shop.checks`` holds the TOTP seed, the inbox and the challenge's characters).

    `layout` defaults to the environment's ``WEBTASK_SITE_LAYOUT`` (e.g. ``renamed_field,extra_step``
    or ``all``; see `Layout.parse`), else the original site. ``alterations``: what the site changes
    in what you typed when it stores a listing (VAT added, quantity capped, title cut; see
    alterations.py), default ``WEBTASK_SITE_ALTERATIONS``, else none.
    """

    def __init__(self, users: Mapping[str, str] | None = None, *, preview_delay_ms: int = 450,
                 port: int = 0, layout: Layout | None = None, second_factor: SecondFactor | None = None,
                 totp_seed: str | None = None, challenge_after: int | None = None,
                 challenge_window_s: float = 300.0, alterations: Alterations | None = None) -> None:
        users = dict(users) if users is not None else {"demo": "demo-pass"}
        if not users:
            raise ValueError("Marketplace(users=...) needs at least one username/password pair")
        if preview_delay_ms < 0:
            raise ValueError(f"Marketplace(preview_delay_ms={preview_delay_ms}) must be >= 0")
        self.users = users
        self.preview_delay_ms = preview_delay_ms
        self.port = port  # 0: a free one
        if layout is None:
            try:
                layout = Layout.parse(os.environ.get(LAYOUT_ENV, ""))
            except ValueError as error:
                raise ValueError(f"{LAYOUT_ENV}: {error}") from None
        self._layout = layout
        if alterations is None:
            try:
                alterations = Alterations.parse(os.environ.get(ALTERATIONS_ENV, ""))
            except ValueError as error:
                raise ValueError(f"{ALTERATIONS_ENV}: {error}") from None
        self._alterations = alterations
        # What only a person can pass (checks.py): a second factor at log-in, a challenge after a burst.
        self.checks = Checks(second_factor=second_factor, challenge_after=challenge_after,
                             challenge_window_s=challenge_window_s)
        if totp_seed is not None:
            self.checks.totp_seed = totp_seed
        self._root: Path | None = None
        self._state: SiteState | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._base_url: str | None = None
        self._socket: socket.socket | None = None

    # ---- lifecycle -----------------------------------------------------------------------------

    def start(self) -> Marketplace:
        if self._server is not None:
            raise RuntimeError("this Marketplace is already running")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", self.port))
        except OSError as error:
            sock.close()
            raise RuntimeError(f"Marketplace(port={self.port}): cannot listen on 127.0.0.1:{self.port}: {error}") from None
        self._root = Path(tempfile.mkdtemp(prefix="webtask-marketplace-"))
        self._base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self._state = SiteState(
            store=ListingStore(self._root, base_url=self._base_url),
            users=self.users,
            preview_delay_ms=self.preview_delay_ms,
            layout=self.layout,  # what a stopped site last served, if it ran before
            checks=self.checks,
            alterations=self.alterations,
        )
        config = uvicorn.Config(
            create_app(self._state), log_level="warning", access_log=False, lifespan="off",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._socket = sock  # asyncio serves from this very socket and closes it on shutdown
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="webtask-marketplace", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the demo marketplace did not start (see the log above)")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving and delete the SQLite file and uploads. Safe to call twice."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
            if self._thread.is_alive():
                raise RuntimeError("the demo marketplace's server thread did not stop within 10 s")
        self._server = self._thread = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def __enter__(self) -> Marketplace:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    async def __aenter__(self) -> Marketplace:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await asyncio.to_thread(self.stop)

    # ---- what tests look at --------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        if self._base_url is None or self._server is None:
            raise RuntimeError("the Marketplace is not running; use `with Marketplace() as shop:` or start()")
        return self._base_url

    def url(self, path: str = "/") -> str:
        """An absolute URL on this site, e.g. `shop.url("/listings/new")`."""
        return self.base_url + (path if path.startswith("/") else "/" + path)

    @property
    def request_log(self) -> list[RequestRecord]:
        """Every request served so far (method, path, query, status), oldest first; a copy."""
        return list(self._running_state().request_log)

    def listings(self) -> list[ListingRecord]:
        """Every published listing of every user, oldest first, photo bytes included."""
        return self._running_state().store.listings()

    def listing_by_sku(self, sku: str) -> list[ListingRecord]:
        """Listings whose SKU equals `sku`, ignoring case and surrounding spaces (the site's search rule)."""
        return self._running_state().store.listings(sku=sku)

    @property
    def layout(self) -> Layout:
        """The layout pages are served in now (`set_layout` or ``POST /_layout`` may have changed it)."""
        return self._state.layout if self._state is not None else self._layout

    def slow_publish(self, seconds: float) -> None:
        """Answer every later Publish ``seconds`` late (the listing is stored at once): a submit whose
        answer a browser gives up waiting for."""
        if self._state is None:
            raise RuntimeError("the marketplace is not running")
        self._state.publish_answer_delay_s = max(0.0, seconds)

    def set_layout(self, layout: Layout) -> None:
        """Serve every later request in `layout`; listings, drafts and sessions stay. Pages already
        open in a browser keep what they showed (a form shown before a switch posts its old fields)."""
        if not isinstance(layout, Layout):
            raise TypeError(f"set_layout takes a Layout, not {type(layout).__name__}; use Layout.parse for text")
        self._layout = layout
        if self._state is not None:
            self._state.layout = layout

    @property
    def alterations(self) -> Alterations:
        """What the site changes in what you typed now (`set_alterations` or ``POST /_alterations``)."""
        return self._state.alterations if self._state is not None else self._alterations

    def set_alterations(self, alterations: Alterations) -> None:
        """Store every later listing (and edit) with these changes; ``Alterations()`` for none."""
        if not isinstance(alterations, Alterations):
            raise TypeError(f"set_alterations takes Alterations, not {type(alterations).__name__}; "
                            "use Alterations.parse for text")
        self._alterations = alterations
        if self._state is not None:
            self._state.alterations = alterations

    def reset(self, *, sign_out: bool = False) -> None:
        """Forget listings, drafts, photos and the request log. With `sign_out`, existing session
        cookies stop working too (otherwise a saved browser session stays logged in)."""
        state = self._running_state()
        state.store.clear()
        state.request_log.clear()
        if sign_out:
            state.rotate_secret()

    def _running_state(self) -> SiteState:
        if self._state is None or self._server is None:
            raise RuntimeError("the Marketplace is not running; use `with Marketplace() as shop:` or start()")
        return self._state
