"""Session-wide fixtures for the flow tests: one Prefect test harness, one moto S3 server.

The harness (a real Prefect API server in a subprocess, SQLite in a temp folder) takes ~10 s to start,
so every test under tests/flows shares it. Its ephemeral server also runs the event services
(triggers, actions), so automations fire for real. S3 is moto's server on 127.0.0.1 and a random
port, reached through ``endpoint_url`` — boto3 is never patched.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# The server tests import the batch tests' helpers (test_batch_flow): found also when run alone,
# not only after pytest has collected tests/flows/listings.
sys.path.insert(0, str(Path(__file__).resolve().parent / "listings"))
# Dummy credentials for moto, set before any boto3 session reads the environment.
os.environ["AWS_ACCESS_KEY_ID"] = "testing"
os.environ["AWS_SECRET_ACCESS_KEY"] = "testing"
os.environ["AWS_SESSION_TOKEN"] = "testing"
os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
for _name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "WEBTASK_S3_ENDPOINT_URL",
              "WEBTASK_AWS_CREDENTIALS_BLOCK", "WEBTASK_SESSION_STORE"):
    os.environ.pop(_name, None)
# The harness server persists events in batches every 5 s by default; tests read events back.
os.environ.setdefault("PREFECT_SERVER_SERVICES_EVENT_PERSISTER_FLUSH_INTERVAL", "0.5")


@pytest.fixture(scope="session", autouse=True)
def prefect_harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    from prefect.testing.utilities import prefect_test_harness

    # Tracing costs every step CPU (benchmarks/step_overhead.py: about half again): the suite's many
    # runs go without, and the trace tests (test_run_trace.py) switch it on. A trace that is kept stays
    # in the session's temp folder, never in ~/.webtask.
    os.environ.setdefault("WEBTASK_TRACE", "off")
    os.environ.setdefault("WEBTASK_TRACE_STORE", str(tmp_path_factory.mktemp("traces")))
    with prefect_test_harness(server_startup_timeout=180):  # 60 s timed out on a busy 2-core machine
        yield


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture(scope="session")
def s3_client(s3_endpoint: str) -> Any:
    import boto3

    return boto3.session.Session().client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")


@pytest.fixture
def s3_bucket(s3_client: Any) -> str:
    """A fresh, empty bucket per test."""
    name = f"webtask-test-{uuid.uuid4().hex[:12]}"
    s3_client.create_bucket(Bucket=name)
    return name
