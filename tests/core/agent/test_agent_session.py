"""The stateless worker: resuming from a stored session, retrying a step, swapping in a new browser."""

from __future__ import annotations

import pytest
from agent_helpers import fake_model, request_text

from webtask_core import TaskRecord, Worker, WorkerStatus
from webtask_core.errors import BrowserCrashedError, ConfigError, ModelTransientError, SessionFormatError
from webtask_core.llm.types import Message, TextBlock
from webtask_core.testing import ReplayPolicy, Reply, ToolUse
from webtask_core.testing.request_view import task_text


async def test_a_stored_session_resumes_the_conversation(tab, shop):
    script = [
        Reply(text="Opening the log-in page.", tool_uses=[ToolUse("navigate", {"url": shop.url("/login")})]),
        Reply(tool_uses=[ToolUse("set_output", {"output": "login page"}), ToolUse("complete", {"feedback": "open"})]),
        ToolUse("complete", {"feedback": "still open"}),
    ]
    async with fake_model(ReplayPolicy(script)) as (server, llm):
        worker = Worker(llm, tab)
        first = await worker.do("Open the log-in page.", max_steps=5)
        stored = TaskRecord.from_json(first.to_json())
        second = await worker.do("Check the log-in page is still open.", previous_session=stored)
        request = server.requests[-1]

    assert first.status is WorkerStatus.completed and first.output == "login page"
    assert first.pairs[-1].role == "user" and first.final_url == shop.url("/login")
    assert second.status is WorkerStatus.completed
    assert task_text(request) == "Check the log-in page is still open."
    text = request_text(request)
    assert "<previous_tasks>" in text and "[completed] Open the log-in page." in text and 'output: "login page"' in text
    assert "The earlier tasks are finished" in text
    assert [b["name"] for m in request["messages"] for b in m["content"] if b.get("type") == "tool_use"] == [
        "navigate", "set_output", "complete"]
    assert second.pairs[: len(first.pairs) - 1] == first.pairs[:-1] and len(second.pairs) == len(first.pairs) + 2
    assert [task.task for task in second.previous_tasks] == ["Open the log-in page."]


async def test_a_step_retried_after_a_transient_error_is_recorded_once(tab, shop):
    script = [ToolUse("navigate", {"url": shop.url("/login")}), ToolUse("complete", {"feedback": "done"})]
    async with fake_model(ReplayPolicy(script)) as (server, llm):
        worker = Worker(llm, tab)
        ctx = worker.start("Open the log-in page.")
        server.inject("overloaded", times=3)  # one try and the SDK's two retries
        with pytest.raises(ModelTransientError):
            await worker.step(ctx)
        assert ctx.steps == [] and ctx.pairs == [] and ctx.history.records == []
        step = await worker.step(ctx)
        assert step.index == 1 and len(ctx.steps) == 1 and len(ctx.pairs) == 2
        await worker.step(ctx)
        session = await worker.finish(ctx)
        statuses = [exchange.status for exchange in server.exchanges]
    assert statuses == [529, 529, 529, 200, 200]
    assert session.status is WorkerStatus.completed
    assert [s.index for s in session.steps] == [1, 2] and session.steps_used == 2
    assert [m.role for m in session.pairs] == ["assistant", "user"] * 2


async def test_a_relaunched_browser_can_be_swapped_in_between_steps(browser, shop):
    tabs = {"current": await browser.new_tab()}
    script = [ToolUse("navigate", {"url": shop.url("/login")}), ToolUse("complete", {"feedback": "done"})]
    async with fake_model(ReplayPolicy(script)) as (_server, llm):
        worker = Worker(llm, lambda: tabs["current"])
        ctx = worker.start("Open the log-in page.")
        await worker.step(ctx)
        await tabs["current"].close()  # the page is gone, as after a crash
        with pytest.raises(BrowserCrashedError):
            await worker.step(ctx)
        assert len(ctx.steps) == 1
        tabs["current"] = await browser.new_tab()
        await tabs["current"].navigate(ctx.current_url)  # the caller restores where the task was
        await worker.step(ctx)
        session = await worker.finish(ctx)
        await tabs["current"].close()
    assert session.status is WorkerStatus.completed and session.steps_used == 2
    assert session.steps[1].url == shop.url("/login")


def test_bad_input_is_refused_before_any_work():
    worker = Worker(llm=None, browser=lambda: None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="task"):
        worker.start("  ")
    with pytest.raises(ConfigError, match="max_steps"):
        worker.start("do it", max_steps=0)
    broken = TaskRecord.model_validate({
        "status": "completed", "task_description": "t", "max_steps": 1, "started_at": "2024-01-01T00:00:00Z",
        "finished_at": "2024-01-01T00:00:00Z",
        "pairs": [Message(role="user", content=[TextBlock(text="hi")]).model_dump()],
    })
    with pytest.raises(SessionFormatError, match="pairs"):
        worker.start("do it", previous_session=broken)
