"""Checks that ``prefect deploy`` runs before it creates a deployment (build steps in prefect.yaml).

An unset ``{{ $VAR }}`` in prefect.yaml becomes an empty string, with only a log line, so the nightly
deployment would be created — schedule active — with an empty site and manifest, and fail every
night. :func:`require_env` makes the deploy fail instead, naming the variables to export.
"""

from __future__ import annotations

import os

from webtask_core.errors import ConfigError

__all__ = ["require_env"]


def require_env(**parameters: str) -> dict[str, str]:
    """A build step: ``parameter: ENV_VAR`` pairs, each variable set and not blank; else ConfigError."""
    missing = {name: variable for name, variable in parameters.items() if not os.environ.get(variable, "").strip()}
    if missing:
        raise ConfigError(
            ", ".join(missing.values()),
            f"not set, and `prefect deploy` fills the parameters {', '.join(missing)} from them; export "
            "them and deploy again (the deployment was not created, rather than with empty values)",
        )
    return {}
