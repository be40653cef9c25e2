"""The money locale Cartridge needs: it formats prices and sizes its money fields from
``locale.localeconv()`` of ``SHOP_CURRENCY_LOCALE``, and a machine with only the C locale (a
container, CI) gives it none. So the locale is compiled once into the app's own virtual environment
with glibc's ``localedef`` (from Debian's ``locales`` package) and found through ``LOCPATH``; a
machine that has the locale already (macOS, a desktop Linux) uses its own."""

import contextlib
import locale
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

__all__ = ["CURRENCY_LOCALE", "ensure_currency_locale"]

CURRENCY_LOCALE = "en_US.UTF-8"


def _usable() -> bool:
    try:
        locale.setlocale(locale.LC_MONETARY, CURRENCY_LOCALE)
    except locale.Error:
        return False
    return locale.localeconv()["frac_digits"] == 2


def ensure_currency_locale() -> str:
    """``CURRENCY_LOCALE``, usable in this process (compiled first where the system lacks it)."""
    if _usable():
        return CURRENCY_LOCALE
    folder = Path(sys.prefix) / "locale"
    os.environ["LOCPATH"] = str(folder)
    # Asked for before it exists, glibc would remember the failure: look at the folder first.
    if not (folder / CURRENCY_LOCALE).is_dir():
        _compile(folder)
    if not _usable():
        raise ImproperlyConfigured(f"{CURRENCY_LOCALE} was compiled into {folder} but cannot be set")
    return CURRENCY_LOCALE


def _compile(folder: Path) -> None:
    localedef = shutil.which("localedef")
    if localedef is None:
        raise ImproperlyConfigured(f"the shop needs the {CURRENCY_LOCALE} locale: install it (e.g. Debian's "
                                   "'locales' package) or glibc's localedef to compile it")
    folder.mkdir(exist_ok=True)
    partial = Path(tempfile.mkdtemp(dir=folder))  # compiled whole, then renamed: a concurrent start reads no half
    done = subprocess.run([localedef, "-i", "en_US", "-f", "UTF-8", str(partial / CURRENCY_LOCALE)],
                          capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):  # 1: warnings only
        shutil.rmtree(partial, ignore_errors=True)
        raise ImproperlyConfigured(f"localedef could not compile {CURRENCY_LOCALE} (is Debian's 'locales' package "
                                   f"installed?): {done.stderr.strip()[-500:]}")
    with contextlib.suppress(OSError):  # another process compiled it first
        (partial / CURRENCY_LOCALE).rename(folder / CURRENCY_LOCALE)
    shutil.rmtree(partial, ignore_errors=True)
