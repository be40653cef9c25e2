"""`DjangoAppProcess`: a real third-party Django application served from a virtual environment of
its own, in a process of its own.

The applications replay is tested against pin Django versions that differ from one another (and
from django-oscar's, which is served in the test process), so each is installed by
``scripts/setup.sh --dev`` from ``tests/apps/<app>/requirements.txt`` into ``.venv/apps/<app>`` and
run with that interpreter: ``manage.py`` migrates and seeds a database, ``runserver`` serves it, and
``query`` runs a snippet through the application's own ORM and returns what it prints as JSON (what
the tests compare with what was asked: the application's own database is the judge).

Migrating a Django application takes a while on a shared CPU, so the migrated and seeded database
(and its media folder) is kept in the system's temp folder under a name made of the requirements
file and the project's files; a later session copies it instead (written whole, then renamed).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from child_processes import die_with_parent

__all__ = ["DjangoAppProcess", "AppNotInstalled", "app_python"]

_ROOT = Path(__file__).resolve().parents[2]
_START_TIMEOUT_S = 60.0


class AppNotInstalled(RuntimeError):
    """The application's virtual environment is missing: the message says how to install it."""


def app_python(app: str) -> Path:
    """The interpreter of ``.venv/apps/<app>``, or :class:`AppNotInstalled` naming the command."""
    python = _ROOT / ".venv" / "apps" / app / "bin" / "python"
    if not python.exists():
        raise AppNotInstalled(f"{app} is not installed for the tests ({python} is missing): run scripts/setup.sh --dev")
    return python


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class DjangoAppProcess:
    """``with DjangoAppProcess("wagtail_site", root) as app: app.url("/admin/")``.

    ``project``: the folder under tests/apps holding ``manage.py`` and ``requirements.txt``.
    ``root``: a fresh folder for this run's database and media (``APP_ROOT`` in the environment of
    every command, for the project's settings to read; the server also gets ``APP_BASE_URL``, its own
    address). ``seed``: a ``manage.py`` command (and its arguments) run once after ``migrate`` to
    create what every test starts from. ``ready_path``: the page that answers once the server is up
    (one that renders without a database row of the tests' own: a log-in page).
    """

    def __init__(self, project: str, root: Path, *, seed: tuple[str, ...] = (), seed_version: int = 1,
                 ready_path: str = "/") -> None:
        self.project = project
        self.folder = _ROOT / "tests" / "apps" / project
        self.root = root
        self.seed = seed
        self.seed_version = seed_version
        self.ready_path = ready_path
        self.python = app_python(project)
        self.base_url = ""
        self._process: subprocess.Popen[bytes] | None = None
        self._log = root / "server.log"

    # ---- running manage.py ----

    def environment(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "PYTHON"))}
        env.update(APP_ROOT=str(self.root), PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
        if self.base_url:
            env["APP_BASE_URL"] = self.base_url
        return env

    def manage(self, *args: str, timeout: float = 300.0) -> str:
        """Run ``manage.py ARGS`` with the application's interpreter; its output, or an error with it."""
        done = subprocess.run([str(self.python), "manage.py", *args], cwd=self.folder, env=self.environment(),
                              capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{self.project}: manage.py {' '.join(args)} failed ({done.returncode}):\n"
                               f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
        return done.stdout

    def query(self, code: str) -> object:
        """Run ``code`` in ``manage.py shell`` and return the JSON it printed last (one line)."""
        # -v 0: Django 5.2's shell says how many objects it imported, on stdout.
        output = self.manage("shell", "--no-startup", "-v", "0", "-c", code)
        lines = [line for line in output.splitlines() if line.strip()]
        if not lines:
            raise RuntimeError(f"{self.project}: the query printed nothing:\n{code}")
        try:
            return json.loads(lines[-1])
        except json.JSONDecodeError as error:
            raise RuntimeError(f"{self.project}: the query's last line is not JSON ({error}): {lines[-1][:500]}") from error

    # ---- the cached database ----

    def _cache_key(self) -> str:
        # The seed's arguments (a user's name and password) are part of what the database holds.
        digest = hashlib.sha256(f"seed {self.seed_version} {self.seed} {sys.version_info[:2]}".encode())
        for source in sorted(self.folder.rglob("*")):
            if source.is_file() and source.suffix in (".py", ".html", ".txt", ".json") and "__pycache__" not in source.parts:
                digest.update(source.relative_to(self.folder).as_posix().encode() + source.read_bytes())
        return digest.hexdigest()[:16]

    def _migrate_and_seed(self) -> None:
        cache = Path(tempfile.gettempdir()) / f"webtask-{self.project}" / self._cache_key()
        if (cache / "done").exists():
            shutil.copytree(cache, self.root, dirs_exist_ok=True)
            (self.root / "done").unlink()
            return
        self.manage("migrate", "--no-input", "-v", "0", timeout=900.0)
        if self.seed:
            self.manage(*self.seed)
        partial = cache.with_name(f"{cache.name}.{os.getpid()}.part")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(self.root, partial, ignore=shutil.ignore_patterns("server.log"))
        (partial / "done").write_text("")
        try:
            partial.rename(cache)
        except OSError:  # another session cached it first
            shutil.rmtree(partial, ignore_errors=True)

    # ---- serving ----

    def url(self, path: str = "/") -> str:
        return f"{self.base_url}{path}"

    def __enter__(self) -> DjangoAppProcess:
        self.root.mkdir(parents=True, exist_ok=True)
        self._migrate_and_seed()
        port = _free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        with self._log.open("wb") as log:
            self._process = subprocess.Popen(
                [str(self.python), "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                cwd=self.folder, env=self.environment(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=die_with_parent)
        self._wait_until_serving()
        return self

    def _wait_until_serving(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                raise RuntimeError(f"{self.project} stopped while starting:\n{self.server_log()}")
            try:
                with urllib.request.urlopen(self.url(self.ready_path), timeout=2):
                    return
            except urllib.error.HTTPError as error:
                if error.code < 500:
                    return  # it answers (a redirect to a login, a 404 at /): it serves
                self.close()
                raise RuntimeError(f"{self.project} answers {self.ready_path} with {error.code}:\n{self.server_log()}") from error
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        self.close()
        raise RuntimeError(f"{self.project} did not answer within {_START_TIMEOUT_S:.0f} s:\n{self.server_log()}")

    def server_log(self) -> str:
        return self._log.read_text(errors="replace")[-4000:] if self._log.exists() else ""

    def close(self) -> None:
        if self._process is None:
            return
        process, self._process = self._process, None
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
