"""Scripted models for the widget pages. Each reads only what a model gets: the current page's tree
and the last tool results (webtask_core.testing.request_view), never the page itself."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from webtask_core import Agent, AgentResult
from webtask_core.browser import BrowserTab
from webtask_core.browser.tree_lines import text_lines
from webtask_core.testing import FakeLLM, Reply, ToolUse
from webtask_core.testing.request_view import TreeElement, last_tool_results, latest_page, tree_elements
from webtask_core.worker import WorkerOptions

Policy = Callable[[dict[str, Any]], Reply]


class Seen:
    """The page state and tool results of one request, as the model reads them."""

    def __init__(self, request: dict[str, Any]):
        self.tree = latest_page(request)
        self.elements = tree_elements(self.tree)
        self.results = last_tool_results(request)

    def shows(self, words: str) -> bool:
        """Whether the page shows ``words`` whole: a text line of them, or an element named so."""
        return words in text_lines(self.tree) or any(element.text == words for element in self.elements)

    def failure(self) -> str | None:
        return next((result.text for result in self.results if result.is_error), None)

    def find(self, text: str | None = None, **attributes: str) -> TreeElement | None:
        """The first element whose name (or label) holds `text`, ignoring case, with these attributes
        (a value of "" asks only that the flag or attribute is there)."""
        for element in self.elements:
            if text is not None and text.casefold() not in f"{element.text} {element.label}".casefold():
                continue
            if all(element.attributes.get(key.replace("_", "-")) == value if value else
                   key.replace("_", "-") in element.attributes for key, value in attributes.items()):
                return element
        return None

    def after(self, line_text: str, **attributes: str) -> TreeElement | None:
        """The first element on a line below the first line holding `line_text`, with these attributes."""
        lines = [line.strip() for line in self.tree.splitlines()]
        start = next((i for i, line in enumerate(lines) if line_text in line), None)
        if start is None:
            return None
        for element in self.elements:
            if element.line in lines[start + 1:] and all(
                element.attributes.get(key) == value if value else key in element.attributes
                for key, value in attributes.items()
            ):
                return element
        return None


def scripted(decide: Callable[[Seen], Reply]) -> Policy:
    """A policy from what it decides on the page it sees; a failed tool call ends the task (abort with
    the tool's message), so a test fails saying what went wrong."""

    def policy(request: dict[str, Any]) -> Reply:
        seen = Seen(request)
        failure = seen.failure()
        return give_up(failure) if failure else decide(seen)

    return policy


def filling(fields: Callable[[Seen], list[tuple[TreeElement | None, str, str]]], what: str) -> Policy:
    """Fill each (element, text to type, the value it shows then) found on the page; done when every
    one shows its value."""

    def decide(seen: Seen) -> Reply:
        wanted = fields(seen)
        found = [(element, text, shown) for element, text, shown in wanted if element is not None]
        if len(found) < len(wanted):
            return give_up(f"no {what}")
        if all(element.attributes.get("value") == shown for element, _, shown in found):
            return finish(f"{what}: done")
        return act(*(call("fill", element_id=element.id, text=text) for element, text, _ in found))

    return scripted(decide)


def act(*uses: ToolUse) -> Reply:
    return Reply(text="", tool_uses=list(uses))


def call(name: str, **arguments: Any) -> ToolUse:
    return ToolUse(name, arguments)


def finish(feedback: str) -> Reply:
    return act(call("complete", feedback=feedback))


def give_up(reason: str) -> Reply:
    return act(call("abort", reason=reason))


async def run_task(tab: BrowserTab, url: str, task: str, policy: Policy, *,
                   resources: Mapping[str, Path] | None = None, max_steps: int = 12) -> AgentResult:
    """The task in words, the scripted model, the real page: the agent's result."""
    agent = Agent(FakeLLM(policy), browser=tab, start_url=url, resources=resources,
                  options=WorkerOptions(screenshots=False))
    try:
        return await agent.do(task, max_steps=max_steps)
    finally:
        await agent.close()
