"""Fault injection: full listing tasks while the model, the browser, the pages or S3 misbehave.

Each case lists an item on the demo marketplace (log in with a secret, search, fill, upload two
photos, publish) with the scripted model behind the fake Messages API, injecting one kind of fault
at points drawn from a fixed seed (see ``webtask_core.testing.fault_suite``). A case *recovered*
when the listing exists exactly once; it *ended cleanly* when it stopped aborted / out of steps with
a reason, or raised a webtask error saying what failed; anything else is a *crash*. Chromium
processes and temporary folders left behind are counted after each case.

    .venv/bin/python benchmarks/faults.py            # one case per fault kind through Agent.do (< 1 min)
    .venv/bin/python benchmarks/faults.py --full     # every seed (200 malformed replies) + the flow cases

``--full`` also runs the run-webtask flow cases (Prefect's test server, moto S3; a few minutes).
Goals: crashed 0, leaked processes 0, leaked folders 0. Ends with one line of JSON.
"""

from __future__ import annotations

import os
import tempfile

# Before Prefect is imported (only --full imports it): a private home, no analytics, no real model.
_HOME = tempfile.mkdtemp(prefix="wt-faults-")
os.environ["PREFECT_HOME"] = os.path.join(_HOME, "prefect")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "CRITICAL")  # failed runs are expected here
os.environ["WEBTASK_OFFLINE"] = "1"
os.environ["WEBTASK_SESSION_STORE"] = os.path.join(_HOME, "sessions")
for _name, _value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                      "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
    os.environ[_name] = _value

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from PIL import Image  # noqa: E402

from webtask_core.testing.fault_suite import CaseResult, SuiteEnv, agent_cases, run_agent_case, summary, table  # noqa: E402
from webtask_core.testing.hostile_site import HostileSite  # noqa: E402
from webtask_core.testing.marketplace import Marketplace  # noqa: E402

PASSWORD = "bench-Pa55 word"
SECRET_BLOCK = "webtask-faults-shop-password"
ROOT = Path(__file__).resolve().parent.parent


def _photos(folder: Path) -> list[Path]:
    front, back = folder / "front.jpg", folder / "back side.png"
    Image.new("RGB", (64, 48), (200, 30, 90)).save(front, "JPEG")
    Image.new("RGB", (40, 40), (20, 120, 200)).save(back, "PNG")
    return [front, back]


def _line(result: CaseResult) -> str:
    mark = {"recovered": "ok", "aborted": "ended", "crashed": "CRASH"}[result.outcome]
    leaks = f" leaked {result.leaked_processes} proc / {result.leaked_folders} dirs" if (
        result.leaked_processes or result.leaked_folders) else ""
    return f"  {result.layer:5} {result.case:24} {mark:5} {result.seconds:5.1f} s  {result.reason[:90]}{leaks}"


async def _agent_cases(full: bool, seed: int, photos: list[Path]) -> list[CaseResult]:
    results = []
    with Marketplace(users={"demo": PASSWORD}, preview_delay_ms=100) as shop, HostileSite() as site:
        env = SuiteEnv(shop=shop, photos=photos, site=site, password=PASSWORD, malformed_per_run=40 if full else 25)
        for case in agent_cases(full=full, seed=seed):
            result = await run_agent_case(case, env)
            print(_line(result), flush=True)
            results.append(result)
    return results


async def _flow_cases(seed: int, photos: list[Path]) -> list[CaseResult]:
    """The run-webtask cases of tests/flows/test_faults_flow.py, on Prefect's test server and moto."""
    import boto3
    import pytest
    from moto.server import ThreadedMotoServer
    from prefect.blocks.system import Secret
    from prefect.testing.utilities import prefect_test_harness

    sys.path.insert(0, str(ROOT / "tests" / "flows"))
    from test_faults_flow import FLOW_FAULTS, VanishingS3, run_flow_case  # noqa: PLC0415

    from webtask_core.testing.fault_suite import FaultCase

    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    s3 = boto3.session.Session().client("s3", endpoint_url=endpoint, region_name="us-east-1")
    s3.create_bucket(Bucket="faults")
    for photo in photos:
        s3.upload_file(str(photo), "faults", f"listing/{photo.name}")
    results: list[CaseResult] = []
    try:
        with prefect_test_harness(server_startup_timeout=60), HostileSite() as site, \
                Marketplace(users={"demo": PASSWORD}, preview_delay_ms=100) as shop:
            await Secret(value=PASSWORD).asave(SECRET_BLOCK, overwrite=True)
            for kind in FLOW_FAULTS:
                case = FaultCase(kind=kind, seed=seed * 100 + 50)
                temp = Path(tempfile.mkdtemp(prefix="wtf-", dir="/tmp"))
                with pytest.MonkeyPatch.context() as patch:
                    patch.setattr(tempfile, "tempdir", str(temp))
                    for name, value in {"WEBTASK_ACTION_TIMEOUT_S": "1.5", "WEBTASK_NAVIGATION_TIMEOUT_S": "2.5",
                                        "WEBTASK_SETTLE_TIMEOUT_S": "1.0", "WEBTASK_MODEL_TIMEOUT_S": "1.0",
                                        "WEBTASK_MODEL_MAX_RETRIES": "1", "WEBTASK_STEP_RETRY_DELAY_S": "0.05",
                                        "AWS_MAX_ATTEMPTS": "2"}.items():
                        patch.setenv(name, value)
                    proxy = None
                    resources = {"listing_image_1": str(photos[0]), "listing_image_2": str(photos[1])}
                    if kind == "s3_gone":
                        proxy = VanishingS3(endpoint)
                        patch.setenv("WEBTASK_S3_ENDPOINT_URL", proxy.url)
                        resources = {"listing_image_1": f"s3://faults/listing/{photos[0].name}",
                                     "listing_image_2": f"s3://faults/listing/{photos[1].name}"}
                    try:
                        result = await run_flow_case(case, shop=shop, site=site, secrets={"shop_password": SECRET_BLOCK},
                                                     resources=resources, temp=temp, monkeypatch=patch)
                    finally:
                        if proxy is not None:
                            proxy.stop()
                        shutil.rmtree(temp, ignore_errors=True)
                print(_line(result), flush=True)
                results.append(result)
    finally:
        moto.stop()
    return results


async def main(full: bool, seed: int) -> dict[str, Any]:
    logging.getLogger("webtask_core").setLevel(logging.ERROR)  # the retries' warnings are expected here
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request lines
    started = time.perf_counter()
    photos = _photos(Path(tempfile.mkdtemp(prefix="photos-", dir=_HOME)))
    print(f"Fault cases ({'full' if full else 'quick'} set, seed {seed}):")
    results = await _agent_cases(full, seed, photos)
    if full:
        results += await _flow_cases(seed, photos)
    figures = summary(results)
    print()
    print(table(results))
    print(f"\ncases tried {figures['cases']}, recovered {figures['recovered']}, ended cleanly "
          f"{figures['ended_cleanly']}, crashed {figures['crashed']} (goal 0), leaked processes "
          f"{figures['leaked_processes']} (goal 0), leaked folders {figures['leaked_folders']} (goal 0); "
          f"{figures['malformed_replies']} malformed replies fed")
    return {
        "benchmark": "faults",
        "set": "full" if full else "quick",
        "seed": seed,
        **figures,
        "by_kind": {f"{r.layer}:{r.case}": r.outcome for r in results},
        "meets_goals": figures["crashed"] == 0 and figures["leaked_processes"] == 0 and figures["leaked_folders"] == 0,
        "total_s": round(time.perf_counter() - started, 1),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="every seed, 200 malformed replies, and the flow cases")
    parser.add_argument("--seed", type=int, default=0, help="the seed the fault points are drawn from (default 0)")
    arguments = parser.parse_args()
    try:
        outcome = asyncio.run(main(arguments.full, arguments.seed))
    finally:
        shutil.rmtree(_HOME, ignore_errors=True)
    sys.stdout.flush()
    print(json.dumps(outcome))
