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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from app_process import DjangoAppProcess
from cartridge_policy import CartridgeProductPolicy
from cartridge_shop import (
    PRODUCTS,
    SCRIPT_NAME,
    SECRET_NAME,
    STAFF_PASSWORD,
    cartridge_site,
    make_photo,
    stored_problems,
    task_data,
    task_for,
)
from pydantic import SecretStr

from webtask_core import Agent, AgentResult, WorkerStatus
from webtask_core.browser import Browser
from webtask_core.replay import Replay, ScriptStore, script_key
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM
from webtask_core.testing.request_view import latest_url
from webtask_core.worker import WorkerOptions

# One live product and four replayed ones: about 3.5 minutes while replay hands over on every product
# (the baseline, with ~18 model calls each), more under load; the suite's 300 s default is too short.
pytestmark = [pytest.mark.slow, pytest.mark.apps, pytest.mark.timeout(900)]

SECRETS = WorkerOptions(secrets={SECRET_NAME: SecretStr(STAFF_PASSWORD)})
KEY = script_key(SCRIPT_NAME, "cartridge-test-shop")


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DjangoAppProcess]:
    with cartridge_site(tmp_path_factory.mktemp("cartridge-site")) as site:
        yield site


@dataclass
class ProductRun:
    data: dict[str, Any]
    resources: dict[str, Path]
    result: AgentResult
    model_calls: int
    revision: int  # of the stored script after this run
    # Each model call: the page it was asked on, and the "replay stopped at ..." note when it had one.
    asked: list[tuple[str, str | None]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return str(self.data["title"])

    def describe(self) -> str:
        lines = [f"{self.label}: {self.result.status.value}, replay={self.result.replay}, "
                 f"replayed_steps={self.result.replayed_steps}, model calls={self.model_calls}, "
                 f"script revision after={self.revision}"]
        lines += [f"  - on {url}: {note}" for url, note in self.asked if note is not None]
        lines += [f"  - handover: {handover}" for handover in self.result.replay_handovers]
        if self.result.status is not WorkerStatus.completed:
            lines.append(f"  - feedback: {self.result.feedback}")
        return "\n".join(lines)


def handover_note(request: dict[str, Any]) -> str | None:
    """The replay's hand-over note in the request's last user message, if it has one."""
    for block in request["messages"][-1].get("content", []):
        if isinstance(block, dict) and block.get("type") == "text" and "replay stopped at" in block.get("text", ""):
            text = block["text"]
            return text[text.index("Steps 1-") if "Steps 1-" in text else text.index("replay stopped at"):].split("\n")[0]
    return None


async def create_product(llm: FakeLLM, browser: Browser, store: ScriptStore, data: dict[str, Any],
                         photo: dict[str, Path]) -> ProductRun:
    before = len(llm.requests)
    tab = await browser.new_tab()
    try:
        agent = Agent(llm, browser=tab, options=SECRETS)
        replay = Replay(key=KEY, params=data, store=store, identifying=("sku", "title"))
        result = await agent.do(task_for(data), max_steps=60, resources=photo, replay=replay)
    finally:
        await tab.close()
    requests = llm.requests[before:]
    script = store.load(KEY)
    return ProductRun(data=data, resources=photo, result=result, model_calls=len(requests),
                      revision=script.revision if script is not None else 0,
                      asked=[(latest_url(r), handover_note(r)) for r in requests])


async def test_products_created_in_cartridges_admin_replay_with_zero_model_calls(
        shop: DjangoAppProcess, browser: Browser, tmp_path: Path) -> None:
    store = ScriptStore(LocalSessionStore(tmp_path / "sessions"))
    llm = FakeLLM(CartridgeProductPolicy(rich_text="keys"))
    runs: list[ProductRun] = []
    for number, product in enumerate(PRODUCTS, start=1):
        data = task_data(shop, product)
        runs.append(await create_product(llm, browser, store, data, make_photo(data, tmp_path / f"photo-{number}")))
    problems = await asyncio.to_thread(stored_problems, shop, runs)
    report = "\n".join(run.describe() for run in runs)
    if problems:
        report += "\nstored wrong:\n" + "\n".join(f"  - {problem}" for problem in problems)

    first = runs[0]
    assert first.result.status is WorkerStatus.completed, report
    assert first.result.replay == "recorded" and first.revision == 1, report
    assert first.data["site_url"].removesuffix("/admin/shop/product/") + "/shop/product/red-trail-shoe/" \
        in first.result.feedback, f"the live run's report names no product address: {first.result.feedback}\n{report}"
    # The live run alone stores everything right (whatever replay did after it).
    assert not [problem for problem in problems if problem.startswith(f"{first.label}:")], report

    # Every product, the model's or replayed, is stored once with exactly its own values.
    assert all(run.result.status is WorkerStatus.completed for run in runs), report
    assert not problems, report

    # The acceptance: replay goes through the admin without the model and without repairs.
    recorded = store.load(KEY)
    assert recorded is not None, report
    assert [(run.result.replay, run.model_calls, run.revision) for run in runs[1:]] == [
        ("replayed", 0, 1)] * (len(runs) - 1), "replayed products asked the model or repaired the script:\n" + report
    assert all(run.result.replayed_steps == len(recorded.steps) for run in runs[1:]), report
