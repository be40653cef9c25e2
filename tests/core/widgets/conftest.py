"""The widget pages, served over real HTTP with the real libraries from the npm registry.

The libraries are installed by `scripts/setup.sh --dev` (npm ci here, the versions pinned in
package.json and package-lock.json); they are never committed. Missing, the tests fail saying so."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

WIDGETS = Path(__file__).parent
INSTALLED = WIDGETS / "node_modules" / ".package-lock.json"


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        return


class WidgetSite:
    def __init__(self, origin: str):
        self.origin = origin

    def url(self, page: str) -> str:
        return f"{self.origin}/pages/{page}"


@pytest.fixture(scope="session")
def widget_site() -> Iterator[WidgetSite]:
    if not INSTALLED.is_file():
        pytest.fail(f"the widget libraries are not installed in {WIDGETS / 'node_modules'}: run scripts/setup.sh --dev "
                    "(or `npm ci` in tests/core/widgets)")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietFiles, directory=str(WIDGETS)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield WidgetSite(f"http://127.0.0.1:{server.server_address[1]}")
    server.shutdown()
    server.server_close()
