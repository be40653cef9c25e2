"""What the scripted models of the real-application tests share: reading the task's product data
(or giving up on it, and on a run of failing turns, with a reason), replies that abort or click, and
logging in to a Django admin's log-in form."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from webtask_core.testing.replies import Reply, ToolUse
from webtask_core.testing.request_view import TreeElement, error_streak, last_tool_results, task_json

__all__ = ["abort", "click", "product_data", "django_log_in"]


def abort(reason: str) -> Reply:
    return Reply(text=reason, tool_uses=[ToolUse("abort", {"reason": reason})])


def click(element: TreeElement | str, why: str) -> Reply:
    element_id = element if isinstance(element, str) else element.id
    return Reply(text=why, tool_uses=[ToolUse("click", {"element_id": element_id})])


def product_data(request: dict[str, Any], required: Sequence[str], max_failed_turns: int) -> dict[str, Any] | Reply:
    """The task's ```json block, or the abort a careful model answers with: the data cannot be read,
    lacks one of `required`, or the last `max_failed_turns` replies each had a failing call."""
    try:
        data = task_json(request)
    except ValueError as exc:
        return abort(f"I cannot read the product data: {exc}")
    if not isinstance(data, dict):
        return abort("the task's ```json block is not an object")
    missing = [key for key in required if key not in data]
    if missing:
        return abort(f"the task's product data lacks {', '.join(missing)}")
    failures = error_streak(request)
    if failures >= max_failed_turns:
        errors = [text for _, is_error, text in last_tool_results(request) if is_error]
        return abort(f"the last {failures} attempts failed; last error: {errors[-1] if errors else '?'}")
    return data


def django_log_in(tree: str, elements: Sequence[TreeElement], username: str, password: str, *, site: str) -> Reply:
    """Fill a Django admin's log-in form and submit it, or abort when it refused the last try."""
    if "Please enter a correct" in tree:
        return abort(f"the {site} rejected the username or password")
    named: dict[str | None, TreeElement] = {}
    for element in elements:
        named.setdefault(element.attributes.get("name"), element)
    button = next((e for e in elements if e.attributes.get("type") == "submit"), None)
    if "username" not in named or "password" not in named or button is None:
        return abort("the log-in page has no username/password form that I can see")
    return Reply(text=f"Logging in as {username}.", tool_uses=[
        ToolUse("fill", {"element_id": named["username"].id, "text": username}),
        ToolUse("fill", {"element_id": named["password"].id, "text": password}),
        ToolUse("click", {"element_id": button.id}),
    ])
