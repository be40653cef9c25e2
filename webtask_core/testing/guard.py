"""Moved to :mod:`webtask_core.llm.guard` (production code runs it); kept so test suites that import
the offline guard from here keep working."""

from __future__ import annotations

from webtask_core.llm import guard as _guard
from webtask_core.llm.guard import *  # noqa: F403 - the same names, re-exported

__all__ = list(_guard.__all__)
