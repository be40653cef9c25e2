"""The `webtask` command: the library's commands (webtask_core.cli) plus the ones that run Prefect flows.

Kept here so webtask_core never imports prefect; flow imports stay inside the commands so
`webtask run` does not pay for importing Prefect.
"""

from __future__ import annotations

from webtask_core.cli import app

__all__ = ["app"]
