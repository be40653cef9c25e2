"""Rendering of the step, table and summary artifacts: keys, secrets, odd text."""

from __future__ import annotations

import hashlib

import pytest

from webtask_core.llm.types import Usage
from webtask_core.record import Step, StepTimings, ToolCallRecord, WorkerStatus
from webtask_core.secrets import SecretValues
from webtask_flows.artifacts import (
    ARTIFACT_KEY_PATTERN,
    step_markdown,
    steps_table,
    summary_artifact_key,
    summary_markdown,
)
from webtask_flows.run_result import WebtaskResult

SECRET = "hunter2-very-secret"


def _step() -> Step:
    return Step(
        index=3, url="http://127.0.0.1:8000/login", title="Log in | Shop",
        model_text=f"Typing the password.\n\nThe page said `{SECRET}` back to me.",
        tool_calls=[
            ToolCallRecord(id="t1", name="fill", input={"element_id": "input-1", "text": "{{secret:shop_password}}"},
                           ok=True, message=f"filled input-1 (the page shows {SECRET})"),
            ToolCallRecord(id="t2", name="click", input={"element_id": "button-9"}, ok=False,
                           message="button-9 is not on the page"),
        ],
        usage=Usage(input_tokens=1200, output_tokens=80, cache_read_tokens=1000),
        timings=StepTimings(observe_ms=120, model_ms=800, act_ms=300, total_ms=1230),
        screenshot="QUJD" * 40, warnings=["the same click failed twice"],
    )


def test_step_markdown_shows_everything_and_no_secret():
    text = step_markdown(_step(), secrets=SecretValues({"shop_password": SECRET}), attempts=2)
    assert SECRET not in text
    assert text.startswith("### Step 3 — Log in | Shop")
    assert "> Typing the password." in text and "{{secret:shop_password}}" in text
    assert '1. ok **fill** `{"element_id": "input-1", "text": "{{secret:shop_password}}"}`' in text
    assert "2. FAILED **click**" in text and "button-9 is not on the page" in text
    assert "**Warnings**: the same click failed twice" in text
    assert "input 1200 · output 80 · cache read 1000" in text and "attempts 2" in text
    assert text.rstrip().endswith("(data:image/jpeg;base64," + "QUJD" * 40 + ")")


def test_backticks_in_parameters_keep_the_inline_code_intact():
    step = Step(index=1, url="http://x/", title="", tool_calls=[
        ToolCallRecord(id="t", name="type", input={"text": "a `b` c"}, ok=True, message="typed")])
    assert '`` {"text": "a `b` c"} ``' in step_markdown(step)


def test_table_and_summary():
    rows = steps_table([_step()], attempts={3: 2}, task_ms={3: 1300.4}, secrets=SecretValues({"p": SECRET}))
    assert rows[0]["step"] == 3 and rows[0]["attempts"] == 2 and rows[0]["task_ms"] == 1300
    assert rows[0]["ok"] is False and SECRET not in str(rows)
    result = WebtaskResult(status=WorkerStatus.aborted, feedback="gave up", steps=3, max_steps=20,
                           usage=Usage(input_tokens=5, output_tokens=7), tokens=12, duration_s=4.25,
                           output={"url": "http://x/1"}, session_key="shop-demo")
    text = summary_markdown(result, task="List the boots\nwith details")
    assert "webtask aborted" in text and "**Task**: List the boots" in text and "| Steps | 3 of 20 |" in text
    # A failed task says why before anything else.
    assert text.index("**Why**: gave up") < text.index("**Task**")
    assert "| Tokens | 12 (input 5 · output 7" in text and "| Time | 4.2 s |" in text
    assert '"url": "http://x/1"' in text


@pytest.mark.parametrize("session_key, sku, expected", [
    ("shop-demo", None, "webtask-summary-shop-demo"),
    ("shop-demo", "SKU-7", "webtask-summary-shop-demo"),
    (None, "SKU-7", "webtask-listing-sku-7-" + hashlib.sha1(b"SKU-7").hexdigest()[:6]),
    (None, "sku-7", "webtask-listing-sku-7"),
    # Neither: the summary stays with its run (one shared key would mix unrelated runs' summaries).
    (None, None, None),
])
def test_summary_keys(session_key, sku, expected):
    assert summary_artifact_key(session_key, sku) == expected


def test_summary_keys_of_odd_session_keys_stay_valid_and_distinct():
    keys = {summary_artifact_key(key) for key in ("Shop_Demo", "shop-demo", "shop.demo", "x" * 128)}
    assert len(keys) == 4 and all(ARTIFACT_KEY_PATTERN.fullmatch(key) for key in keys)
