"""``fill`` of markdown-like text into the rich-text editors of real applications (issue 27): the
scripted model writes a product's body with one ``fill`` (``rich_text="fill"``), and the live run,
no replay, stores it with real bold and italic in the application's own database, no asterisks.

Each tool result of those fills is read from the model's next request: it says what the editor
shows, which is the body asked for (the tree's notation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_process import DjangoAppProcess
from replay_runs import describe_runs, run_items
from wagtail_case import wagtail_case

from webtask_core import WorkerStatus
from webtask_core.browser import Browser
from webtask_core.replay import ScriptStore
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM

pytestmark = [pytest.mark.slow, pytest.mark.apps, pytest.mark.timeout(600)]


def fill_results(llm: FakeLLM, text: str) -> list[tuple[bool, str]]:
    """(is_error, content) of every tool result answering a ``fill`` of `text`."""
    calls: dict[str, Any] = {}
    answers = []
    for request in llm.requests:
        for message in request["messages"]:
            for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_use" and block["name"] == "fill" and block["input"].get("text") == text:
                    calls[block["id"]] = block
                elif block.get("type") == "tool_result" and block["tool_use_id"] in calls:
                    content = block["content"]
                    if isinstance(content, list):
                        content = " ".join(part.get("text", "") for part in content)
                    answers.append((bool(block.get("is_error")), content))
    return list(dict.fromkeys(answers))  # a result shows again in every later request


async def test_a_body_filled_as_markdown_is_stored_bold_and_italic_by_wagtail(
        wagtail_shop: DjangoAppProcess, browser: Browser, tmp_path: Path) -> None:
    case = wagtail_case(wagtail_shop, rich_text="fill")
    # A product of its own (the session's shop may hold the replay test's), its body with both marks.
    data = {**case.items[1], "title": "Quilted Weekender", "sku": "WT-FILL-WEEKENDER",
            "body": "Quilted **waxed canvas** weekender with *brass* fittings.\nA second line, **bold** to its end."}
    store = ScriptStore(LocalSessionStore(tmp_path / "sessions"))
    llm = FakeLLM(case.policy)
    [live] = await run_items(case, llm, browser, store, tmp_path / "photos", [data])

    # Only this product's: the session's shop holds the other apps tests' products too.
    problems = [problem for problem in case.stored_problems([live]) if problem.startswith(live.label)]
    assert live.result.status is WorkerStatus.completed, describe_runs([live], problems)
    assert not problems, describe_runs([live], problems)
    answers = fill_results(llm, data["body"])
    assert answers and not any(is_error for is_error, _ in answers), answers
    assert all("the editor shows it so" in text for _, text in answers), answers
