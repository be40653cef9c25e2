"""Replay on a second real third-party app: Cartridge 1.3.4's product admin on Mezzanine 6.1.1
(issue 25).

The first product is created by the (scripted) model through Agent.do with replay, which records a
script; four more products with their own values and photo replay it. Acceptance, as the issue
states it: every product is stored in the shop's own database with exactly its own values (the
live one too), and the replayed products make 0 model calls and leave the script's revision alone.

The pages are the shop's as installed from PyPI: a status radio, a date and a time field beside
Django's calendar and clock links, TinyMCE, a two-list category chooser, Mezzanine's keywords field
(with a link per keyword the shop already knows), option checkboxes, the Media Library popup (a tab
of its own: Upload, then Select the file), and after "Save and continue editing" the variation row
(SKU, stock, prices and an image select).

When it fails, the message lists per product the model calls, the replay outcome, the script
revision and every "replay stopped at ..." note with the page it was given on, then every value
stored wrong, naming the product whose value it was when it was another's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_process import DjangoAppProcess
from cartridge_shop import SCRIPT_KEY, cartridge_site, describe_runs, run_products, stored_problems

from webtask_core import WorkerStatus
from webtask_core.browser import Browser
from webtask_core.replay import ScriptStore
from webtask_core.storage import LocalSessionStore

# One live product and four replayed ones: about 3.5 minutes while replay hands over on every product
# (the baseline, with ~18 model calls each), more under load; the suite's 300 s default is too short.
pytestmark = [pytest.mark.slow, pytest.mark.apps, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DjangoAppProcess]:
    with cartridge_site(tmp_path_factory.mktemp("cartridge-site")) as site:
        yield site


async def test_products_created_in_cartridges_admin_replay_with_zero_model_calls(
        shop: DjangoAppProcess, browser: Browser, tmp_path: Path) -> None:
    store = ScriptStore(LocalSessionStore(tmp_path / "sessions"))
    runs = await run_products(shop, browser, store, tmp_path)
    problems = await asyncio.to_thread(stored_problems, shop, runs)
    report = describe_runs(runs, problems)

    first = runs[0]
    assert first.result.status is WorkerStatus.completed, report
    assert first.result.replay == "recorded" and first.revision == 1, report
    assert shop.url("/shop/product/red-trail-shoe/") in first.result.feedback, \
        f"the live run's report names no product address: {first.result.feedback}\n{report}"
    # The live run alone stores everything right (whatever replay did after it).
    assert not [problem for problem in problems if problem.startswith(f"{first.label}:")], report
    # Nothing in the admin reaches for the internet (fonts, scripts): every request goes to the shop.
    requested = [url for run in runs for url in run.requests if url.startswith(("http:", "https:"))]
    assert requested and all(url.startswith(shop.base_url + "/") for url in requested), \
        [url for url in requested if not url.startswith(shop.base_url + "/")]

    # Every product, the model's or replayed, is stored once with exactly its own values.
    assert all(run.result.status is WorkerStatus.completed for run in runs), report
    assert not problems, report

    # The acceptance: replay goes through the admin without the model and without repairs.
    recorded = store.load(SCRIPT_KEY)
    assert recorded is not None, report
    assert [(run.result.replay, run.model_calls, run.revision) for run in runs[1:]] == [
        ("replayed", 0, 1)] * (len(runs) - 1), "replayed products asked the model or repaired the script:\n" + report
    assert all(run.result.replayed_steps == len(recorded.steps) for run in runs[1:]), report
