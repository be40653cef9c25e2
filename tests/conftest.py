"""Test-session guards: never reach a real model, never use the user's Prefect home."""

from __future__ import annotations

import os
import tempfile

# Set before anything imports anthropic or prefect.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("ANTHROPIC_BASE_URL", None)
os.environ["WEBTASK_OFFLINE"] = "1"  # AnthropicLLM refuses any non-loopback base_url
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="webtask-test-prefect-"))
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
