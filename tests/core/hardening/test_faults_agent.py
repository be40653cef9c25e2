"""The fault-injection suite through Agent.do (marker `faults`): every case recovers, leaves nothing.

Cases and their seeds come from ``webtask_core.testing.fault_suite.agent_cases(full=True)``: bursts
of 429/529/500, model timeouts, 200 generated malformed replies in five batches, Chromium killed
mid-task, a page that never finishes loading, a navigation that never answers, a page whose script
spins forever. Each runs the whole marketplace listing; `benchmarks/faults.py` prints the same as a
table.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hardening_helpers import SHOP_PASSWORD
from PIL import Image

from webtask_core.testing.fault_suite import CaseResult, SuiteEnv, agent_cases, run_agent_case
from webtask_core.testing.hostile_site import HostileSite
from webtask_core.testing.marketplace import Marketplace

pytestmark = [pytest.mark.faults, pytest.mark.slow]

MALFORMED_PER_RUN = 40
CASES = agent_cases(full=True, seed=1)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SuiteEnv]:
    folder = tmp_path_factory.mktemp("photos")
    photos = [folder / "front.jpg", folder / "back.png"]
    Image.new("RGB", (64, 48), (200, 30, 90)).save(photos[0], "JPEG")
    Image.new("RGB", (40, 40), (20, 120, 200)).save(photos[1], "PNG")
    with Marketplace(users={"demo": SHOP_PASSWORD}, preview_delay_ms=100) as shop, HostileSite() as site:
        yield SuiteEnv(shop=shop, photos=photos, site=site, password=SHOP_PASSWORD,
                       malformed_per_run=MALFORMED_PER_RUN, case_timeout_s=90)


def test_the_suite_feeds_at_least_200_malformed_replies():
    batches = [case for case in CASES if case.kind == "malformed"]
    assert len(batches) * MALFORMED_PER_RUN >= 200
    assert {case.kind for case in CASES} == {
        "model_burst", "model_timeout", "malformed", "browser_killed", "page_never_loads",
        "navigation_timeout", "page_script_hangs"}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
async def test_the_task_recovers_and_leaves_nothing_behind(case, env):
    result: CaseResult = await run_agent_case(case, env)
    assert result.outcome == "recovered", result
    assert result.status == "completed" and result.reason.startswith("Listed SKU")
    assert result.leaked_processes == 0 and result.leaked_folders == 0, result
    if case.kind == "malformed":
        # Every bad reply came back to the model as an error, none acted on the page.
        assert result.malformed_replies == MALFORMED_PER_RUN
        assert result.malformed_seen_as_errors == MALFORMED_PER_RUN
