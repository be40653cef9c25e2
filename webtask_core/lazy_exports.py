"""Package attributes imported on first use, so importing a package stays cheap (no Playwright, no
model SDK, no Prefect until a name that needs them is used)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` for `package`: each name in `where` is taken from the
    module it maps to the first time it is looked up."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's name
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:  # noqa: N807
        return sorted(where)

    return __getattr__, __dir__
