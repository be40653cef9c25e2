"""The `webtask-aborted` automation from deployments/ fires a real webhook on 127.0.0.1.

The harness's ephemeral server runs Prefect's triggers and actions services, so the chain is the
production one: flow emits the event → server triggers the automation → the actions service calls
the custom-webhook notification block → our local HTTP server receives the POST.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flow_helpers import WebhookReceiver
from prefect import flow

from webtask_core.errors import ConfigError
from webtask_flows.automations import create_automation_from_file, create_webhook_block, main
from webtask_flows.events import emit_handover_event, emit_script_event, emit_task_event

AUTOMATION_FILE = Path(__file__).parents[2] / "deployments" / "automations" / "webtask-aborted.yaml"


@pytest.fixture(scope="module")
def webhook() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as receiver:
        yield receiver


@flow
async def listing_flow(sku: str) -> str:
    from prefect.runtime import flow_run

    emit_task_event("aborted", task=f"List {sku} on the marketplace", reason=f"no photo for {sku}",
                    steps_used=4, max_steps=20, session_key="shop-demo")
    return flow_run.id


async def test_aborted_task_alert_reaches_the_webhook(webhook):
    await create_webhook_block("webtask-test-alerts", webhook.url)
    (automation_id,) = await create_automation_from_file(
        AUTOMATION_FILE, notification_block="custom-webhook/webtask-test-alerts"
    )
    # Creating it again updates the same automation instead of doubling the alerts.
    assert await create_automation_from_file(
        AUTOMATION_FILE, notification_block="custom-webhook/webtask-test-alerts"
    ) == [automation_id]

    # A completed task must not alert; an aborted one must.
    @flow
    async def completed_flow() -> None:
        emit_task_event("completed", task="List SKU-OK", reason="listed")

    await completed_flow()
    flow_run_id = await listing_flow("SKU-404")

    posts = await webhook.wait_for(lambda p: "SKU-404" in p["body"])
    assert len(posts) == 1, f"no alert for the aborted task within 60 s; got {webhook.posts}"
    post = posts[0]
    assert post["subject"] == "webtask aborted: List SKU-404 on the marketplace"
    assert "Reason: no photo for SKU-404" in post["body"]
    assert "Steps used: 4 of 20" in post["body"] and "Session key: shop-demo" in post["body"]
    from prefect.client.orchestration import get_client

    async with get_client() as client:
        run_name = (await client.read_flow_run(flow_run_id)).name
    assert f"Flow run: {run_name} ({flow_run_id})" in post["body"]  # the template looked the run up
    assert post["text"].startswith(post["subject"])
    assert not [p for p in webhook.posts if "SKU-OK" in p["body"]]


async def test_unknown_block_is_a_clear_error():
    with pytest.raises(ConfigError, match="no 'custom-webhook' block named 'nope'"):
        await create_automation_from_file(AUTOMATION_FILE, notification_block="custom-webhook/nope")
    with pytest.raises(ConfigError, match="must look like"):
        await create_automation_from_file(AUTOMATION_FILE, notification_block="nope")


def test_command_line(webhook, capsys):
    # Sync test: the commands run their own event loop, as they do from a shell.
    assert main(["webhook-block", "webtask-cli-alerts", webhook.url]) == 0
    assert main(["create", str(AUTOMATION_FILE), "--block", "custom-webhook/webtask-cli-alerts"]) == 0
    assert "Automation(s) ready" in capsys.readouterr().out
    assert main(["create", str(AUTOMATION_FILE), "--block", "custom-webhook/missing"]) == 2
    assert "no 'custom-webhook' block named 'missing'" in capsys.readouterr().err


AUTOMATIONS = AUTOMATION_FILE.parent


def test_every_shipped_automation_is_valid():
    from prefect.events.schemas.automations import AutomationCore

    from webtask_flows.automations import read_automation_definitions

    definitions = read_automation_definitions(AUTOMATIONS)
    names = {definition["name"] for definition in definitions}
    assert names == {"webtask-aborted", "webtask-max-steps", "webtask-failed", "webtask-error",
                     "webtask-batch-failed", "webtask-batch-completed", "webtask-zombie-runs",
                     "webtask-script-repaired", "webtask-script-handover", "webtask-waiting",
                     "webtask-batch-crashed", "webtask-crashed", "webtask-listing-mismatch"}
    for definition in definitions:
        for action in definition["actions"]:
            action.pop("block", None)
            if action["type"] == "send-notification":
                action["block_document_id"] = "00000000-0000-0000-0000-000000000000"
        AutomationCore.model_validate(definition)


async def test_each_alert_has_a_short_subject_naming_the_listing_and_batch(webhook):
    from webtask_core.human import HumanRequest
    from webtask_flows.human import emit_waiting_event
    from webtask_flows.listings.events import emit_batch_crashed, emit_batch_event
    from webtask_flows.listings.models import ListingResult

    await create_webhook_block("webtask-test-alerts-2", webhook.url)
    # Every alert; not the zombie-run one, which would crash the session's later long runs.
    for file in sorted(AUTOMATIONS.glob("webtask-*.yaml")):
        if file.name != "webtask-zombie-runs.yaml":
            await create_automation_from_file(file, notification_block="custom-webhook/webtask-test-alerts-2")
    labels = {"sku": "NIGHT-007", "batch_flow_run_id": "0b1c", "batch_name": "nightly-owl"}

    @flow
    async def tasks_flow() -> None:
        emit_task_event("max_steps", task="Create a listing ...\n```json {...}", reason="out of steps at the form",
                        steps_used=30, max_steps=30, labels=labels)
        emit_task_event("failed", task="Create a listing ...", reason="ResourceError: object not found: s3://b/x.jpg",
                        labels={**labels, "sku": "NIGHT-008"})
        emit_task_event("error", task="Create a listing ...", reason="the run ended Crashed",
                        labels={**labels, "sku": "NIGHT-009"})
        emit_script_event("repaired", key="listing-task.shop.v1", revision=3, steps=9, task="Create a listing ...",
                          handovers=["step 5: the page lacks 1 it had (input text title title)"],
                          labels={**labels, "sku": "NIGHT-010"})
        emit_waiting_event(HumanRequest(question="Enter the sign-in code", kind="code", why="a second factor",
                                        url="https://shop.example/login/verify"),
                           task="Create a listing ...", labels={**labels, "sku": "NIGHT-011"}, timeout_s=3600,
                           suspends_after_s=600, form_url="http://127.0.0.1:4200/v2/runs/flow-run/0b1c")
        emit_script_event("recorded", key="listing-task.shop.v1", revision=1, steps=8, task="Create a listing ...",
                          handovers=[], labels=labels)  # no alert for a first recording
        # A run of its own crashed (a name on two lines: the subject stays on one); a batch's listing
        # that crashed is left to the batch's alert.
        emit_task_event("crashed", task="Refresh the prices", reason="No heartbeat for 90 s",
                        labels={"name": "price\nrefresh"})
        emit_task_event("crashed", task="Create a listing ...", reason="its batch crashed",
                        labels={**labels, "sku": "NIGHT-014"})
        emit_handover_event(key="listing-task.shop.v1", revision=2, outcome="aborted", task="Create a listing ...",
                            handovers=[{"step": 9, "kind": "site", "reason": "no element like button \"publish\""}],
                            labels={**labels, "sku": "NIGHT-013"})
        emit_task_event("mismatch", task="Create a listing ...", reason="Read-back: the site does not show ...",
                        labels={**labels, "sku": "NIGHT-015"},
                        extra={"readback": "mismatch", "readback_method": "templates", "mismatched_fields": ["price"],
                               "listing_url": "https://shop.example/listings/15", "picture": "https://pics/15.jpg",
                               "fields": [{"field": "price", "expected": "46.00", "shown": "$54.74",
                                           "verdict": "mismatch", "note": ""},
                                          {"field": "title", "expected": "Boots", "shown": "Boots",
                                           "verdict": "match", "note": ""}]})
        emit_handover_event(key="listing-task.shop.v1", revision=2, outcome="completed", task="Create a listing ...",
                            handovers=[{"step": 4, "kind": "item", "reason": "a list on the page now shows this item"}],
                            labels={**labels, "sku": "NIGHT-012"})  # completed: no alert

    @flow(flow_run_name="nightly-owl")
    async def batch_flow() -> None:
        emit_batch_event([ListingResult(sku="NIGHT-001", status="completed"),
                          ListingResult(sku="NIGHT-007", status="max_steps", feedback="out of steps")],
                         source="s3://listings/nightly/manifest.jsonl", message="1 of 2 listing(s) failed: NIGHT-007")
        emit_batch_event([ListingResult(sku="NIGHT-001", status="completed")],
                         source="s3://listings/other/manifest.jsonl", message="1/1 done: 1 completed")
        # The batch itself failed with an error of several lines.
        emit_batch_event([], source="s3://listings/bad/manifest.jsonl", message="",
                         reason="ValidationError: 1 validation error for batch\nmax_concurrency\n  must be positive")
        emit_batch_crashed(flow_run_id="0b1c", flow_run_name="nightly-owl", source="s3://listings/nightly/manifest.jsonl",
                           reason="Flow run infrastructure exited with non-zero status code -9.", total=3,
                           completed=["NIGHT-001"], in_flight=[{"sku": "NIGHT-002", "flow_run_id": "5e", "state": "Running"}],
                           not_started=["NIGHT-003"])

    await tasks_flow()
    await batch_flow()
    expected = {
        "webtask ran out of steps: listing NIGHT-007 (batch nightly-owl)": "Reason: out of steps at the form",
        "webtask failed: listing NIGHT-008 (batch nightly-owl)": "object not found: s3://b/x.jpg",
        "webtask listing error: listing NIGHT-009 (batch nightly-owl)": "the run ended Crashed",
        "webtask replay repaired: listing-task.shop.v1 (batch nightly-owl)":
            "- step 5: the page lacks 1 it had (input text title title)",
        "webtask replay handed over, listing aborted: NIGHT-013 (batch nightly-owl)":
            '- step 9 (site): no element like button "publish"',
        "webtask needs a person: listing NIGHT-011 (batch nightly-owl)":
            "The agent asks: Enter the sign-in code",
        "webtask batch failed: 1 of 2 listing(s) (s3://listings/nightly/manifest.jsonl)":
            "- NIGHT-007: max_steps — out of steps",
        "webtask batch completed: 1 listing(s) (s3://listings/other/manifest.jsonl)": "1/1 done: 1 completed",
        "webtask batch failed: ValidationError: 1 validation error for batch max_concurrency must be positive "
        "(s3://listings/bad/manifest.jsonl)": "max_concurrency\n  must be positive",
        "webtask batch crashed: 2 of 3 listing(s) not completed (s3://listings/nightly/manifest.jsonl)":
            "Not completed: NIGHT-002, NIGHT-003\n- NIGHT-002: was running (its run 5e is Running)\n"
            "Not started: NIGHT-003",
        "webtask crashed: price refresh": "Reason: No heartbeat for 90 s",
        "webtask listing mismatch: listing NIGHT-015 (price) (batch nightly-owl)":
            "- price: expected 46.00, shown $54.74\nSKU: NIGHT-015",
    }
    for subject, line in expected.items():
        found = await webhook.wait_for(lambda p, subject=subject: p["subject"] == subject)
        assert len(found) == 1, (subject, [p["subject"] for p in webhook.posts])
        (post,) = found
        assert line in post["body"], post["body"]
    assert not [p for p in webhook.posts if "recorded" in p["subject"] or "NIGHT-012" in p["subject"]
                or "NIGHT-014" in p["subject"]]
    assert "prefect flow-run retry 0b1c" in next(p for p in webhook.posts if "crashed: 2 of 3" in p["subject"])["body"]
    assert all("\n" not in post["subject"] for post in webhook.posts)  # one line, whatever the event held
    mismatch = next(p for p in webhook.posts if "NIGHT-015" in p["subject"])["body"]
    assert "title" not in mismatch and "Picture of the page: https://pics/15.jpg" in mismatch
    assert "Listing: https://shop.example/listings/15" in mismatch
    waiting = next(p for p in webhook.posts if "needs a person" in p["subject"])["body"]
    assert "Answer here: http://127.0.0.1:4200/v2/runs/flow-run/0b1c" in waiting  # the form that shows dots
    assert "(after 600 s the run frees its worker; any worker resumes it once you answer)" in waiting
    sku_post = next(p for p in webhook.posts if "NIGHT-007 (batch" in p["subject"])
    assert "SKU: NIGHT-007" in sku_post["body"] and "Batch: nightly-owl (0b1c)" in sku_post["body"]
