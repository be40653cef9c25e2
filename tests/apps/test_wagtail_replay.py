"""Replay on a real CMS: product pages added in Wagtail 8's page editor (issue 25, the test bed).

The first product is added by the scripted model through ``Agent.do`` with replay, which records a
script; four more products with their own values and photos replay it. The products differ where
replay has to show it binds this run's values (wagtail_case.py): titles of other lengths, tags not
in the title and a different number of them, a condition whose word the admin's interface also uses
("New" recorded, "Used"/"Like new"/"Refurbished" replayed), other categories, dates and photos.

Acceptance, as the issue states it: every replayed product makes 0 model calls, every value is
stored exactly (read from Wagtail's own database) and the script revision stays 1. When it fails,
the message lists per product the model calls, the replay outcome, the revision and every
"replay stopped at ..." note with the page it was given on, then every value stored wrong, saying
when it is another product's. The live run alone is checked first, so a failure is replay's, not
the harness's or the scripted model's. Every published product is also read back from its live page
(issue 26): none stored as asked is flagged, none stored otherwise reports completed.

The body is typed in pieces (``rich_text="keys"``: text, Ctrl+B, the bold words, Ctrl+B, ...):
``fill`` of markdown into the editor (issue 27) is test_rich_text_fill's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_process import DjangoAppProcess
from replay_runs import describe_runs, readback_problems, run_items
from wagtail_case import slug_of, wagtail_case

from webtask_core import WorkerStatus
from webtask_core.browser import Browser
from webtask_core.replay import ScriptStore
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM

# Five products through a real editor: ~2.5 min on an idle machine, over 5 under a heavy load.
pytestmark = [pytest.mark.slow, pytest.mark.apps, pytest.mark.timeout(900)]


async def test_products_added_in_wagtails_page_editor_replay_with_zero_model_calls(
        wagtail_shop: DjangoAppProcess, browser: Browser, tmp_path: Path) -> None:
    case = wagtail_case(wagtail_shop, rich_text="keys")
    store = ScriptStore(LocalSessionStore(tmp_path / "sessions"))
    llm = FakeLLM(case.policy)
    [live] = await run_items(case, llm, browser, store, tmp_path / "photos", case.items[:1])

    # The live recording alone, before any replay: the model's run stores everything right, so a
    # failure below is replay's, not the harness's or the scripted model's.
    live_problems = case.stored_problems([live])
    assert live.result.status is WorkerStatus.completed, describe_runs([live], live_problems)
    assert not live_problems, "the live run stored wrong values:\n" + describe_runs([live], live_problems)
    assert live.result.replay == "recorded" and live.revision == 1, describe_runs([live])
    recorded = store.load(case.script_key)
    assert recorded is not None and len(recorded.steps) >= live.model_calls, describe_runs([live])

    # A shop whose tags already exist, as a shop's do: each replayed tag is suggested as it is typed (tag-it's
    # list opens on a timer and the server's answer, and an Enter while it is open makes no tag).
    names = sorted({str(tag) for item in case.items[1:] for tag in item["tags"]})
    wagtail_shop.query(f"from taggit.models import Tag\nfor name in {names!r}: Tag.objects.get_or_create(name=name)\n"
                       "print(Tag.objects.count())")
    replayed = await run_items(case, llm, browser, store, tmp_path / "photos", case.items[1:])
    runs = [live, *replayed]

    # Every product, the model's or replayed: stored once, with exactly its own values, and the
    # run's feedback names the page's live URL.
    problems = case.stored_problems(runs)
    problems += [f"{run.label}: ended {run.result.status.value}: {run.result.feedback}"
                 for run in runs if run.result.status is not WorkerStatus.completed]
    problems += [f"{run.label}: the feedback does not name the live URL {wagtail_shop.url(path)}: {run.result.feedback}"
                 for run in runs if run.result.status is WorkerStatus.completed
                 and wagtail_shop.url(path := f"/products/{slug_of(run.data['title'])}/") not in run.result.feedback]
    report = describe_runs(runs, problems)

    # The read-back (issue 26), whatever replay did: each product published is read back from its live
    # page (the URL the run reported) and a product stored as asked is never flagged; one stored
    # otherwise never reports completed. The recording's read-back is the model's, the others' in code.
    misread = readback_problems(runs, case.stored_problems(runs))
    assert not misread, "the read-back:\n" + "\n".join(misread) + "\n" + report
    # Every product page shows the same fields: the first's templates read all the others in code.
    read = [run.result.readback for run in runs[1:] if run.result.readback and run.result.readback.status != "unread"]
    assert all(readback.method == "templates" and readback.model_calls == 0 for readback in read), report
    for run in runs:
        if run.result.status is WorkerStatus.completed and run.result.readback is not None:
            assert run.result.readback.url == wagtail_shop.url(f"/products/{slug_of(run.data['title'])}/"), report
            assert {check.field for check in run.result.readback.fields if check.verdict == "match"} >= {
                "title", "sku", "price", "category", "condition", "release_date", "tags"}, report

    # Every product stored once with exactly its own values (never another product's) and its own live
    # URL reported.
    assert not problems, "products stored wrong or not completed:\n" + report

    # The acceptance: replay goes through the editor without the model and without repairs,
    # whether Wagtail's autosave has made the page (its create form's name become the item's own) before
    # a replayed step or not, whatever the load. The classes that made items hand over in earlier
    # sessions, each fixed with a test of its own: a replayed tag's Enter while tag-it's suggestion list
    # was open (browser/item_press.py, test_wagtail_tag_press), the editor pane's comment buttons
    # scrolled out of view (test_widget_scroll_pane), a page recorded after its autosave read before it
    # or while "Saving…", the chooser's list of one image where the recording saw its empty state
    # (test_growth_on_real_pages), a calendar showing this month of another year (test_widget_dates).
    outcomes = [(run.result.replay, run.replay_calls, run.revision) for run in replayed]
    assert outcomes == [("replayed", 0, 1)] * len(replayed), report
    assert all(run.result.replayed_steps == len(recorded.steps) for run in replayed), report
