"""The demo marketplace and the fault harness run a FastAPI site, so they need the ``demo`` extra
(FastAPI, uvicorn, python-multipart); the model kit (fake server, FakeLLM, replies, policies) does not.

Their modules call :func:`require_demo_extra` first, so a missing package is reported as what to
install rather than as an error from deep inside the site (python-multipart, for one, would only be
missed when the first form is posted).
"""

from __future__ import annotations

import importlib

__all__ = ["DEMO_EXTRA_INSTALL", "DemoExtraMissing", "missing_demo_packages", "require_demo_extra"]

DEMO_EXTRA_INSTALL = "pip install 'prefect-webtask[demo]'"
# import name -> distribution name
_PACKAGES = {"fastapi": "fastapi", "uvicorn": "uvicorn", "python_multipart": "python-multipart"}


class DemoExtraMissing(ModuleNotFoundError):
    """A package of the ``demo`` extra is not installed."""


def missing_demo_packages() -> list[str]:
    """Distribution names of the demo extra's packages that cannot be imported."""
    missing = []
    for module, distribution in _PACKAGES.items():
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(distribution)
    return missing


def require_demo_extra(what: str) -> None:
    """Raise :class:`DemoExtraMissing` naming the extra when one of its packages is missing."""
    missing = missing_demo_packages()
    if missing:
        raise DemoExtraMissing(
            f"{what} needs the demo extra ({', '.join(missing)} not installed): {DEMO_EXTRA_INSTALL}",
            name=missing[0].replace("-", "_"),  # the import name
        )
