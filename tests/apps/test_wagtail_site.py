"""The Wagtail test bed's failure paths: what goes wrong says what was wrong, and stores nothing.

The site (the session's ``wagtail_shop``) and the scripted model are those of test_wagtail_replay.py:
a wrong password ends the task with the admin's refusal, task data without a field is refused before
anything is typed, and the harness names the command and the output of a failed query.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from app_process import AppNotInstalled, DjangoAppProcess, app_python
from pydantic import SecretStr
from replay_runs import run_items
from wagtail_case import wagtail_case
from wagtail_site.products.records import stored_products

from webtask_core import WorkerStatus
from webtask_core.browser import Browser
from webtask_core.replay import ScriptStore
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM
from webtask_core.worker import WorkerOptions

pytestmark = [pytest.mark.slow, pytest.mark.apps]


async def test_a_wrong_password_ends_the_task_with_the_admins_refusal(
        wagtail_shop: DjangoAppProcess, browser: Browser, tmp_path: Path) -> None:
    case = wagtail_case(wagtail_shop)
    case.options = WorkerOptions(secrets={"wagtail_password": SecretStr("not-the-password")})
    store = ScriptStore(LocalSessionStore(tmp_path / "sessions"))
    # A product of its own: the session's shop may hold the replay test's products already.
    data = {**case.items[0], "title": "Wrong Password Boot", "sku": "WT-WRONG-PASSWORD"}
    [run] = await run_items(case, FakeLLM(case.policy), browser, store, tmp_path, [data])

    assert run.result.status is WorkerStatus.aborted, run.describe()
    assert "rejected the username or password" in run.result.feedback, run.describe()
    stored = await asyncio.to_thread(stored_products, wagtail_shop)
    assert run.data["sku"] not in {page.sku for page in stored}
    assert store.load(case.script_key) is None  # an aborted run teaches replay nothing


async def test_task_data_without_a_price_is_refused_before_anything_is_typed(
        wagtail_shop: DjangoAppProcess, browser: Browser, tmp_path: Path) -> None:
    case = wagtail_case(wagtail_shop)
    data = {key: value for key, value in case.items[1].items() if key != "price"}
    store = ScriptStore(LocalSessionStore(tmp_path / "sessions"))
    llm = FakeLLM(case.policy)
    [run] = await run_items(case, llm, browser, store, tmp_path, [data])

    assert run.result.status is WorkerStatus.aborted and run.model_calls == 1, run.describe()
    assert run.result.feedback == "the task's product data lacks price"


def test_a_failed_query_names_the_command_and_what_it_printed(wagtail_shop: DjangoAppProcess) -> None:
    with pytest.raises(RuntimeError, match=r"(?s)wagtail_site: manage\.py shell .*failed.*no such product"):
        wagtail_shop.query("raise LookupError('no such product')")
    with pytest.raises(RuntimeError, match="the query printed nothing"):
        wagtail_shop.query("pass")
    with pytest.raises(RuntimeError, match="the query's last line is not JSON .*: 3 products"):
        wagtail_shop.query("print('3 products')")


def test_an_application_not_installed_names_the_setup_command() -> None:
    with pytest.raises(AppNotInstalled, match=r"no_such_app is not installed .*run scripts/setup\.sh --dev"):
        app_python("no_such_app")
