"""batch-listing-upload with replay on the demo marketplace: the first listing is the model's and
records the script, the rest replay it with zero model calls; after the site changes, the model is
asked only from the changed step on and the repaired script carries the rest of the batch."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flow_helpers import (
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    read_artifacts,
    read_events_for,
    read_flow_run,
    read_task_runs,
    shop,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from test_batch_flow import manifest_rows, params, requests_per_sku, write_photos

from webtask_core.replay import ScriptStore
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import MarketplaceListingPolicy
from webtask_core.testing.marketplace import Layout
from webtask_flows.listings.batch import batch_listing_upload, batch_results
from webtask_flows.listings.runs import listing_script_key


def rows_with_photos(tmp_path, count: int, prefix: str) -> list[dict[str, Any]]:
    rows = manifest_rows(count, prefix=prefix)
    write_photos(tmp_path, rows)
    for row in rows:
        row["photos"] = [str(tmp_path / photo) for photo in row["photos"]]  # two, one, two, ...
    return rows


@pytest.mark.e2e
async def test_a_batch_learns_once_then_replays_and_repairs_where_the_site_changed(
        flow_env, shop, shop_secret, monkeypatch, tmp_path):
    key = listing_script_key(None, shop.url("/listings"), "1")
    scripts = ScriptStore(LocalSessionStore(flow_env.sessions))
    rows = rows_with_photos(tmp_path, 4, "REPLAY")
    async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
        state = await batch_listing_upload(listings=rows, replay=True,
                                           max_concurrency=2, **params(shop, tmp_path), return_state=True)
        assert state.is_completed(), state.message
        results = await batch_results(state)
        calls = requests_per_sku(server.requests)
        assert calls.get("REPLAY-1", 0) >= 5  # the model listed the first and recorded the script
        first_calls = calls["REPLAY-1"]
        assert all(calls.get(f"REPLAY-{n}", 0) == 0 for n in (2, 3, 4)), calls
        assert [result.replay for result in results] == ["recorded", "replayed", "replayed", "replayed"]
        assert all(result.model_calls == 0 and result.replayed_steps > 0 for result in results[1:])
        for result, row in zip(results, rows):
            (stored,) = shop.listing_by_sku(result.sku)
            assert result.listing_url == stored.url
            # each with its own values and photos (two, one, two, one: "1 photo ready" is waited for)
            assert (stored.title, len(stored.photos)) == (row["title"], len(row["photos"]))
            # What an operator reads is this run's, never the recording's listing (issue 28): the
            # feedback, the listing run's state message and its webtask.task.completed event.
            assert result.feedback == f"Listed SKU {result.sku} at {stored.url}.", result.feedback
            assert (await read_flow_run(result.flow_run_id)).state.message == result.feedback
            (completed,) = await read_events_for(f"webtask.task.{result.flow_run_id}")
            assert completed.payload["reason"] == result.feedback
        assert scripts.keys() == [key] and scripts.load(key).revision == 1
        # A rerun takes every listing from the ledger, with what each run itself reported.
        rerun = await batch_results(await batch_listing_upload(listings=rows, replay=True, **params(shop, tmp_path),
                                                               return_state=True))
        assert [(result.skipped, result.feedback) for result in rerun] == [
            (True, f"Listed SKU {result.sku} at {result.listing_url}.") for result in results]

        summary = next(a for a in await read_artifacts(state.state_details.flow_run_id) if a.type == "table")
        saved = sum(result.replayed_steps for result in results)
        assert f"{saved} saved by replay" in summary.description
        listing_runs = {result.sku: result.flow_run_id for result in results}
        for sku, replayed in (("REPLAY-1", False), ("REPLAY-2", True)):
            artifacts = await read_artifacts(listing_runs[sku])
            steps = [a for a in artifacts if a.type == "markdown" and (a.description or "").startswith("Step ")]
            assert steps and all(("Decided by: **replayed**" in a.data) is replayed for a in steps)
            # What replay checked, for each replayed step; the last page of a replayed run as a picture.
            assert all(("**Replay checked**: the page matched the recorded one" in a.data) is replayed for a in steps)
            pictures = [a for a in artifacts if a.type == "image"]
            assert [a.description.startswith("The last page of the replayed run") for a in pictures] == (
                [True] if replayed else [])
            # The listing run's own artifacts are its own: none hangs on a task run of another run (the
            # batch's "listing SKU" task), which the UI's Artifacts tab shows as "None".
            own_task_runs = {run.id for run in await read_task_runs(listing_runs[sku], expected=len(steps))}
            assert {a.task_run_id for a in artifacts} <= own_task_runs | {None}
            assert {a.task_run_id for a in steps} == own_task_runs
        # Money: the recording listing's model calls; what the replayed ones saved, priced as the
        # recording's mean model call (remembered beside the script).
        assert results[0].cost_usd > 0 and results[0].saved_by_replay_usd is None
        assert all(r.cost_usd == 0 and r.saved_by_replay_usd > 0 for r in results[1:])
        assert "Cost: $" in summary.description and "saved by replay: ~$" in summary.description
        rows = json.loads(summary.data)
        # What an operator reads first fits the artifact page's width (issue 28): why, which, how it
        # ended, what it cost and where it is; then the replay's columns.
        assert list(rows[0])[:8] == ["reason", "sku", "status", "cost", "listing_url", "model calls", "replay",
                                     "saved by replay"]
        recorded = await read_events_for(f"webtask.script.{key}")
        assert [event.event for event in recorded] == ["webtask.script.recorded"]
        assert recorded[0].payload["sku"] == "REPLAY-1"

        # The site is redesigned: a renamed field and a step before the review.
        shop.set_layout(Layout(renamed_field=True, extra_step=True))
        before = len(server.requests)
        state = await batch_listing_upload(listings=rows_with_photos(tmp_path, 3, "CHANGED"), replay=True,
                                           **params(shop, tmp_path), return_state=True)
        assert state.is_completed(), state.message
        results = await batch_results(state)
        calls = requests_per_sku(server.requests[before:])
        assert [result.replay for result in results] == ["repaired", "replayed", "replayed"]
        # only from the changed step on (the form): the log-in, search and "New listing" were replayed
        assert results[0].replayed_steps >= 2 and 1 <= calls["CHANGED-1"] < first_calls
        assert calls.get("CHANGED-2", 0) == calls.get("CHANGED-3", 0) == 0
        for result in results:
            (stored,) = shop.listing_by_sku(result.sku)
            assert stored.shipping and stored.title.startswith("Item number")
        assert scripts.load(key).revision == 2
        events = await read_events_for(f"webtask.script.{key}", expected=3)
        repaired = [event for event in events if event.event == "webtask.script.repaired"]
        assert repaired and repaired[0].payload["handovers"] and repaired[0].payload["revision"] == 2
        # The page where replay handed over is shown, and its step says why.
        artifacts = await read_artifacts(results[0].flow_run_id)
        (picture,) = [a for a in artifacts if a.type == "image" and a.description.startswith("Where replay handed")]
        assert picture.data.startswith('"data:image/jpeg;base64,') or picture.data.startswith("data:image/jpeg")
        assert any("**Replay handed over to the model**: step" in a.data for a in artifacts if a.type == "markdown")
        # Its task completed events carry what it cost.
        completed = await read_events_for(f"webtask.task.{results[0].flow_run_id}")
        assert completed[0].payload["cost_usd"] > 0 and completed[0].payload["model"]
        (handover,) = [event for event in events if event.event == "webtask.script.handover"]
        assert (handover.payload["outcome"], handover.payload["kind"], handover.payload["sku"]) == (
            "completed", "site", "CHANGED-1")

    # The site goes back to its old layout, and the model will not list this item that way: the
    # handover ends in an abort, which the summary and a webtask.script.handover event say.
    shop.set_layout(Layout())
    back = rows_with_photos(tmp_path, 1, "BACK")
    back[0]["title"] = "Back to the old layout"  # (the other batches reuse "Item number N")
    async with fake_model_env(MarketplaceListingPolicy(abort_on_sku={"BACK-1"}), monkeypatch):
        state = await batch_listing_upload(listings=back, replay=True,
                                           **params(shop, tmp_path), return_state=True)
    (result,) = await batch_results(state)
    assert (result.status, result.replay) == ("aborted", "handed_over") and not shop.listing_by_sku("BACK-1")
    events = await read_events_for(f"webtask.script.{key}", expected=4)
    (declined,) = [event for event in events if event.event == "webtask.script.handover"
                   and event.payload["outcome"] == "aborted"]
    assert declined.payload["sku"] == "BACK-1" and declined.payload["kind"] == "site"
    assert declined.resource["webtask.outcome"] == "aborted"
    summary = next(a for a in await read_artifacts(result.flow_run_id) if (a.key or "").startswith("webtask-listing"))
    assert "After the handover | the model ended the task aborted" in summary.data
    assert scripts.load(key).revision == 2  # nothing completed: nothing repaired
