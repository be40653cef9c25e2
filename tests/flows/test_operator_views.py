"""What an operator reads first, rendered without a run: step task run names, what replay checked,
costs and what replay saved, the batch summary's columns (fit the artifact page, failures and why
first, token columns that recompute to the cost), and no character that needs an emoji font."""

from __future__ import annotations

import re
from types import SimpleNamespace

from webtask_core.browser.models import ElementInfo, Observation
from webtask_core.llm.types import Usage
from webtask_core.pricing import PriceTable
from webtask_core.record import Step, StepTimings, ToolCallRecord, WorkerStatus
from webtask_core.replay import ReplayScript, ScriptAction, ScriptStep
from webtask_core.replay.commit import CommitCheck, ExpectedControl
from webtask_core.replay.signature import ElementFingerprint, PageSignature
from webtask_flows.artifacts import step_markdown, summary_markdown
from webtask_flows.costs import CallUsage, RunPricing
from webtask_flows.listings.artifacts import cause_first, cost_line, failure_reason, summary_rows
from webtask_flows.listings.models import ListingResult
from webtask_flows.listings.spend import AttemptSpend, BatchSpend
from webtask_flows.replay_notes import ReplayWatch
from webtask_flows.run_result import WebtaskResult
from webtask_flows.step_names import step_run_name

# Pictographs, dingbats, symbols drawn as emoji, their variation selector: what needs an emoji font.
EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2300-\u23FF\uFE0F]")
CALL_USAGE = Usage(input_tokens=800, cache_read_tokens=5_000, output_tokens=120)


def call(name: str, ok: bool = True, **params: object) -> ToolCallRecord:
    return ToolCallRecord(id=f"t-{name}", name=name, input=params, ok=ok, message="done" if ok else "not found")


def observation() -> Observation:
    elements = {"input-2": ElementInfo(id="input-2", tag="input", text="Price"),
                "button-1": ElementInfo(id="button-1", tag="button", text="  Next\n step "),
                "input-5": ElementInfo(id="input-5", tag="input", attributes={"placeholder": "Search by SKU"})}
    return Observation(url="http://shop/listings/new", title="New listing", tabs=[], tree="", elements=elements,
                       scroll="")


def test_step_task_runs_are_named_by_what_they_did():
    seen = observation()
    assert step_run_name(Step(index=3, url="", title="", tool_calls=[call("fill", element_id="input-2", text="45")]),
                         seen) == 'step 3 · fill "Price"'
    replayed = Step(index=4, url="", title="", replayed=True, tool_calls=[call("click", element_id="button-1")])
    assert step_run_name(replayed, seen) == 'step 4 · replayed click "Next step"'
    several = Step(index=5, url="", title="", tool_calls=[call("wait_for", text="2 photos ready"),
                                                           call("fill", ok=False, element_id="input-5", text="X"),
                                                           call("click", element_id="button-9")])
    assert step_run_name(several, seen) == 'step 5 · fill "Search by SKU" (failed) +2'
    assert step_run_name(Step(index=1, url="", title="", tool_calls=[call("navigate", url="http://shop/login")])) == \
        "step 1 · navigate http://shop/login"
    assert step_run_name(Step(index=6, url="", title="", error="the page did not change")) == \
        "step 6 · stopped: the page did not change"


def test_a_replayed_step_says_what_replay_checked_and_a_handover_page_is_flagged():
    button = ElementFingerprint(tag="button", text="publish")
    script = ReplayScript(key="listing.shop.v1", revision=2, steps=[ScriptStep(
        page=PageSignature(url="/listings/drafts/*", title="review your listing", controls=("button", "link")),
        actions=[ScriptAction(tool="click", input={"element_id": "{{element}}"}, element=button, commit=True)],
        commit=CommitCheck(controls=[ExpectedControl(key="input text price", value="{{param:price}}")]))])
    task_run = SimpleNamespace(replay_handovers=[], replayer=SimpleNamespace(script=script, position=1))
    watch = ReplayWatch(task_run)  # type: ignore[arg-type]
    watch.before()
    replayed = watch.after(Step(index=7, url="", title="", replayed=True, tool_calls=[call("click")]))
    assert replayed.lines[0] == "**Replay**: step 1 of script `listing.shop.v1` (revision 2), without a model call."
    assert replayed.lines[1] == ('**Replay checked**: the page matched the recorded one (address `/listings/drafts/*`, '
                                 'title "review your listing", 2 control(s), showing this run\'s values); each '
                                 'element acted on was found by its fingerprint, one element and no guess: '
                                 'button "publish"; before click on button "publish", that the form showed this '
                                 "run's values (1 control(s)) and the page its words.")
    assert not replayed.handover_page
    # Replay stops at the next page; the model's step there shows it.
    watch.before()
    task_run.replay_handovers.append("step 2: the page lacks a button")
    handed = watch.after(Step(index=8, url="", title="", screenshot="QUJD", tool_calls=[call("click")]))
    assert handed.handover_page and handed.lines == ["**Replay handed over to the model**: step 2: the page lacks a button"]
    text = step_markdown(Step(index=8, url="http://x", title="t"), notes=handed.lines)
    assert "**Replay handed over to the model**: step 2" in text


def test_costs_and_what_replay_saved():
    pricing = RunPricing("claude-sonnet-4-5", PriceTable())
    asked = [Step(index=n, url="", title="", usage=CALL_USAGE, tool_calls=[call("click")]) for n in (1, 2)]
    replayed = [Step(index=n, url="", title="", replayed=True, tool_calls=[call("click")]) for n in (3, 4, 5)]
    per_call = pricing.cost(CALL_USAGE).total_usd

    run = pricing.run_cost(asked + replayed, CALL_USAGE + CALL_USAGE)
    assert run.cost_usd == round(2 * per_call, 6) and run.saved_usd == round(3 * per_call, 6)
    assert run.saved_basis.startswith("3 model call(s) at $0.0")
    # A run that replayed everything is priced by the script's remembered model call.
    remembered = CallUsage(usage=CALL_USAGE + CALL_USAGE + CALL_USAGE + CALL_USAGE, calls=4)
    run = pricing.run_cost(replayed, Usage(), remembered=remembered)
    assert run.cost_usd == 0 and run.saved_usd == round(3 * per_call, 6) and "last run of this script" in run.saved_basis
    assert pricing.run_cost(replayed, Usage()).saved_usd is None  # nothing known to price it by
    assert RunPricing("claude-mythos-5", PriceTable()).run_cost(asked, CALL_USAGE).cost is None


def test_the_batch_summary_fits_the_artifact_page_with_failures_and_why_first():
    usage = Usage(input_tokens=2_100, cache_write_tokens=5_300, cache_read_tokens=41_000, output_tokens=1_900)
    pricing = RunPricing("claude-sonnet-4-5", PriceTable())
    results = [
        ListingResult(sku="NIGHT-001", status="completed", listing_url="https://shop.example.com/listings/1001",
                      model_calls=9, replay="recorded", cost_usd=pricing.cost(usage).total_usd, usage=usage,
                      tokens=usage.total_tokens),
        ListingResult(sku="NIGHT-002", status="aborted", model_calls=4, replay="handed_over", cost_usd=0.031,
                      feedback="The marketplace rejected the price: 'Enter a price between 1 and 10,000'. " * 4),
        ListingResult(sku="NIGHT-003", status="completed", skipped=True, listing_url="https://shop.example.com/l/9"),
        ListingResult(sku="NIGHT-004", status="error", cost_usd=0.0, feedback=(
            "PermanentModelError: model API returned 400: invalid_request_error: the listing of SKU NIGHT-004 "
            "is set to fail (/tmp/trial/faults.json)")),
    ]
    rows = summary_rows(results)
    assert [row["sku"] for row in rows] == ["NIGHT-002", "NIGHT-004", "NIGHT-001", "NIGHT-003"]
    first = ["reason", "sku", "status", "cost", "listing_url"]
    assert list(rows[0])[: len(first)] == first
    assert rows[0]["reason"] == "The marketplace rejected the pric…"
    # An error's own words first, what wrapped it after (it was "PermanentModelError: model API returned 400: in…").
    assert rows[1]["reason"] == "the listing of SKU NIGHT-004 is s…"
    assert failure_reason(results[3]) == ("the listing of SKU NIGHT-004 is set to fail (/tmp/trial/faults.json) "
                                          "(PermanentModelError: model API returned 400: invalid_request_error)")
    assert cause_first("the run ended Crashed: Flow run infrastructure exited with non-zero status code -9.") == (
        "Flow run infrastructure exited with non-zero status code -9. (the run ended Crashed)")
    assert cause_first("row 3, photos.1: object not found: s3://b/k.jpg") == (
        "object not found: s3://b/k.jpg (row 3, photos.1)")
    assert rows[2]["reason"] == "" and rows[3]["status"] == "already done"

    # The token columns, by kind, recompute to the cost (cache writes are not fresh input).
    row = rows[2]
    price = PriceTable().price_of("claude-sonnet-4-5")
    assert price is not None
    recomputed = (row["fresh input tokens"] * price.input + row["cache write tokens"] * price.cache_write_price
                  + row["cache read tokens"] * price.cache_read_price + row["output tokens"] * price.output) / 1e6
    assert f"${recomputed:.4f}" == row["cost"]
    assert row["fresh input tokens"] + row["cache write tokens"] + row["cache read tokens"] + row["output tokens"] \
        == row["tokens"]

    # That these columns fit the ~844 px Prefect's artifact page gives the table is measured in a real
    # browser on a real server: tests/flows/listings/test_batch_crash_server.py.
    assert cost_line(results) == "Cost: $0.0980. "
    spend = BatchSpend(attempts=[AttemptSpend(attempt=1, cost_usd=0.0332, runs=3),
                                 AttemptSpend(attempt=2, cost_usd=0.0147, runs=2)])
    assert cost_line(results, spend) == "Cost: $0.0479 over 2 attempts (attempt 1: $0.0332, attempt 2: $0.0147). "
    assert cost_line(results, unpriced_model="claude-mythos-5").startswith(
        "Cost: unknown (the model claude-mythos-5 has no price")


def test_no_character_needs_an_emoji_font():
    step = Step(index=2, url="http://x", title="Review", tool_calls=[call("click"), call("fill", ok=False)],
                ended=WorkerStatus.completed, timings=StepTimings(total_ms=5))
    pricing = RunPricing("claude-sonnet-4-5", PriceTable())
    texts = [step_markdown(step, cost=pricing.cost(CALL_USAGE))]
    for status in WorkerStatus:
        result = WebtaskResult(status=status, feedback="done", steps=2, max_steps=5, model="claude-sonnet-4-5",
                               cost=pricing.cost(CALL_USAGE), replay_key="k", replayed_steps=1, trace="/t/trace.zip")
        texts.append(summary_markdown(result, task="List it"))
    assert not [text for text in texts if EMOJI.search(text)]
    assert "`playwright show-trace /t/trace.zip`" in texts[-1]
