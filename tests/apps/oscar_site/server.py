"""`OscarSite`: the test shop migrated, seeded and served on 127.0.0.1 from a thread of this process.

Django is configured once per process (``oscar_site.settings`` with ``OSCAR_SITE_ROOT`` set to the
site's folder), so a process serves one shop. Migrating Oscar's ~40 apps takes a while on a shared
CPU, so the migrated and seeded database is kept in the system's temp folder under a name made of
the versions of Django, Oscar and sorl-thumbnail, this folder's files and `SEED_VERSION`: a later
session copies it instead (written whole, then renamed, so a concurrent session never reads half a
file). The ORM is synchronous: from async code call it through ``asyncio.to_thread``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from importlib import metadata
from pathlib import Path
from types import TracebackType

__all__ = ["OscarSite", "STAFF_EMAIL", "STAFF_PASSWORD", "PRODUCT_CLASSES", "CATEGORIES", "PARTNER"]

STAFF_EMAIL = "staff@shop.test"
STAFF_PASSWORD = "oscar-staff-pass"  # a throwaway test account
PRODUCT_CLASSES = ("Bags", "Shoes")
CATEGORIES = ("Bags", "Shoes")
PARTNER = "Webtask Supplies"
SEED_VERSION = 1  # raise when seed() changes: the cached database is then made again

_HERE = Path(__file__).resolve().parent
_configured_root: Path | None = None


def _cache_key() -> str:
    digest = hashlib.sha256(f"seed {SEED_VERSION}".encode())
    for package in ("django", "django-oscar", "sorl-thumbnail", "django-treebeard"):
        digest.update(f"{package} {metadata.version(package)}\n".encode())
    for source in sorted(_HERE.rglob("*")):
        if source.is_file() and source.suffix in (".py", ".html"):
            digest.update(source.relative_to(_HERE).as_posix().encode() + source.read_bytes())
    return digest.hexdigest()[:16]


def _configure(root: Path) -> None:
    """Start Django on `root` (once per process: Django's settings cannot be reloaded)."""
    global _configured_root
    if _configured_root is not None:
        if _configured_root != root:
            raise RuntimeError(f"Django already serves the Oscar site in {_configured_root}; one site per process")
        return
    import django

    os.environ["OSCAR_SITE_ROOT"] = str(root)
    os.environ["DJANGO_SETTINGS_MODULE"] = "oscar_site.settings"
    django.setup()
    _configured_root = root


def seed() -> None:
    """What every test starts from: a staff superuser, the product classes, categories and a partner."""
    from django.contrib.auth import get_user_model
    from oscar.core.loading import get_model

    get_user_model().objects.create_superuser(username="staff", email=STAFF_EMAIL, password=STAFF_PASSWORD)
    product_class = get_model("catalogue", "ProductClass")
    category = get_model("catalogue", "Category")
    for name in PRODUCT_CLASSES:
        product_class.objects.create(name=name, track_stock=True, requires_shipping=True)
    for name in CATEGORIES:
        category.objects.add_root({"name": name})
    get_model("partner", "Partner").objects.create(name=PARTNER)


def _migrate_and_seed(database: Path) -> None:
    """Migrate and seed `database`, or copy the cached one. In a thread of its own: the ORM refuses to
    run where an event loop runs, and this thread's connections are closed when it ends."""
    failures: list[BaseException] = []

    def work() -> None:
        from django.db import connections

        try:
            _migrate_and_seed_here(database)
        except BaseException as failure:
            failures.append(failure)
        finally:
            connections.close_all()

    worker = threading.Thread(target=work, name="oscar-site-migrate")
    worker.start()
    worker.join()
    if failures:
        raise failures[0]


def _migrate_and_seed_here(database: Path) -> None:
    from django.core.management import call_command
    from django.db import connections

    cache = Path(tempfile.gettempdir()) / "webtask-oscar-site" / f"db-{_cache_key()}.sqlite3"
    if cache.exists():
        shutil.copyfile(cache, database)
        return
    call_command("migrate", interactive=False, verbosity=0)
    seed()
    connections.close_all()  # everything on disk before the copy
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_name(f"{cache.name}.{os.getpid()}.part")
    shutil.copyfile(database, partial)
    os.replace(partial, cache)


class OscarSite:
    """The shop in `root` (a fresh temporary folder): ``with OscarSite(root) as site: site.url("/dashboard/")``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.base_url = ""
        self._server = None
        self._thread: threading.Thread | None = None

    def url(self, path: str = "/") -> str:
        return f"{self.base_url}{path}"

    def __enter__(self) -> OscarSite:
        (self.root / "media").mkdir(parents=True, exist_ok=True)
        _configure(self.root)
        _migrate_and_seed(self.root / "db.sqlite3")
        self._serve()
        return self

    def _serve(self) -> None:
        from django.contrib.staticfiles.handlers import StaticFilesHandler
        from django.core.handlers.wsgi import WSGIHandler
        from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

        server = ThreadedWSGIServer(("127.0.0.1", 0), WSGIRequestHandler, allow_reuse_address=False)
        server.set_app(StaticFilesHandler(WSGIHandler()))  # the package's static files, as runserver does
        self._server = server
        self.base_url = f"http://127.0.0.1:{server.server_address[1]}"
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="oscar-site", daemon=True)
        self._thread.start()

    def close(self) -> None:
        # Each request's thread closes its own database connections (ThreadedWSGIServer.close_request).
        if self._server is not None:
            self._server.shutdown()  # returns once serve_forever has stopped
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
