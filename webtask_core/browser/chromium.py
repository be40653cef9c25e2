"""Finding a Chromium executable and the flags it needs here (as root, offline)."""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

__all__ = ["ChromiumNotFound", "find_chromium", "CHROMIUM_ARGS"]

# Without the background-networking flags Chromium keeps dialling Google hosts that a closed network
# refuses; --no-sandbox is needed as root.
CHROMIUM_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
)

_PATH_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Chromium's headless shell (the old headless mode, what Playwright itself runs headless): no browser
# UI to composite, so a listing costs ~60 % less CPU in Chromium than the full browser's --headless
# (benchmarks/replay.py, benchmarks/batch_throughput.py). Debian: `apt-get install chromium-headless-shell`.
_HEADLESS_SHELL_NAMES = ("chromium-headless-shell", "headless_shell", "chrome-headless-shell")


class ChromiumNotFound(RuntimeError):
    """No usable Chromium on this machine; the message says how to get one."""


def _playwright_managed(patterns: tuple[str, ...] = (
        "chromium-*/chrome-linux*/chrome", "chromium-*/chrome-mac*/Chromium.app/Contents/MacOS/Chromium")) -> str | None:
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache" / "ms-playwright"))
    for pattern in patterns:
        hits = sorted(glob.glob(str(root / pattern)), reverse=True)
        if hits:
            return hits[0]
    return None


def _headless_shell() -> str | None:
    for name in _HEADLESS_SHELL_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return _playwright_managed(("chromium_headless_shell-*/chrome-*/*headless_shell",
                                "chromium_headless_shell-*/chrome-*/chrome-headless-shell"))


def find_chromium(*, headless: bool = False) -> str:
    """`WEBTASK_CHROMIUM_PATH`, else (``headless``) Chromium's headless shell when installed, else a
    Chromium on PATH, else a Playwright-managed one."""
    override = os.environ.get("WEBTASK_CHROMIUM_PATH")
    if override:
        if not (os.path.isfile(override) and os.access(override, os.X_OK)):
            raise ChromiumNotFound(
                f"WEBTASK_CHROMIUM_PATH={override!r} is not an executable file; "
                "point it at a Chromium binary or unset it"
            )
        return override
    shell = _headless_shell() if headless else None
    if shell:
        return shell
    for name in _PATH_NAMES:
        found = shutil.which(name)
        if found:
            return found
    managed = _playwright_managed()
    if managed:
        return managed
    raise ChromiumNotFound(
        "No Chromium found. Install one of: Debian/Ubuntu `sudo apt-get install chromium`, "
        "or `python -m playwright install chromium` where downloads are allowed, "
        "or set WEBTASK_CHROMIUM_PATH to a Chromium executable."
    )
