"""What the scripted marketplace model does where only a person can help (the site's checks.py):
asks with ``ask_human`` and uses the answer, as a careful model would.

- the log-in's second factor: with ``"totp": "{{totp:NAME}}"`` in the task data it types that (the
  code of the seed, no person needed; one more try when the site rejects it); otherwise it asks for
  the code (``kind: code``, secret) and types the placeholder the answer names;
- the security check after a burst of listings: asks for the characters in the picture (``text``);
- before Publish, when the task data has ``"approval": "<why>"``: asks for approval (``approve``).

A question nobody can answer (no handler) is an abort with the tool's own words.
"""

from __future__ import annotations

import re
from typing import Any

from .replies import Reply, ToolUse
from .request_view import find_element, last_tool_results, page_urls

__all__ = ["human_step", "approval_step", "ask_human_results"]

_PLACEHOLDER = re.compile(r"\{\{secret:[A-Za-z0-9_.\-]+\}\}")
_ANSWERED = re.compile(r"^the person answered(?: \([^)]*\))?: (.*?)(?: Comment: .*)?$", re.S)
_MAX_ASKS = 2


def ask_human_results(request: dict[str, Any]) -> list[tuple[bool, str]]:
    """Every ask_human result of the conversation, oldest first: (is_error, text)."""
    asked: set[str] = set()
    results: list[tuple[bool, str]] = []
    for message in request.get("messages", []):
        for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_use" and block.get("name") == "ask_human":
                asked.add(block.get("id", ""))
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in asked:
                content = block.get("content")
                text = " ".join(part.get("text", "") for part in content) if isinstance(content, list) else str(content)
                results.append((bool(block.get("is_error")), text))
    return results


def _visits(request: dict[str, Any], path: str) -> int:
    return sum(1 for url in page_urls(request) if url.split("?")[0].rstrip("/").endswith(path))


def _fresh_answer(request: dict[str, Any]) -> tuple[str | None, str | None]:
    """The answer to an ask_human of the last turn (its text to type), or why nobody answered."""
    fresh = [(result.is_error, result.text) for result in last_tool_results(request) if result.tool_name == "ask_human"]
    if not fresh:  # none, or answered in an earlier turn (and used then)
        return None, None
    is_error, text = fresh[-1]
    if is_error:
        return None, text
    if text.startswith("no answer"):
        return None, text
    placeholder = _PLACEHOLDER.search(text)
    if placeholder:
        return placeholder.group(0), None
    answered = _ANSWERED.match(text)
    return (answered.group(1).strip(), None) if answered else (None, None)


def _abort(reason: str) -> Reply:
    return Reply(text=reason, tool_uses=[ToolUse("abort", {"reason": reason})])


def _enter(tree: str, field_name: str, button_text: str, value: str, note: str) -> Reply:
    field, button = find_element(tree, name=field_name), find_element(tree, tag="button", text=button_text)
    if field is None or button is None:
        return _abort(f"the page has no {field_name} field and {button_text} button that I can see")
    return Reply(text=note, tool_uses=[ToolUse("fill", {"element_id": field, "text": value}),
                                       ToolUse("click", {"element_id": button})])


def _ask(request: dict[str, Any], question: str, kind: str, why: str, path: str) -> Reply:
    if len(ask_human_results(request)) > _MAX_ASKS:
        return _abort(f"the site keeps rejecting what the person gave for {path}")
    return Reply(text=why, tool_uses=[ToolUse("ask_human", {"question": question, "kind": kind, "why": why})])


def human_step(request: dict[str, Any], tree: str, path: str, data: dict[str, Any]) -> Reply | None:
    """The reply on a page only a person can get past, or None when this is not such a page."""
    if path == "/login/verify":
        rejected = "not valid" in tree
        totp = data.get("totp")
        if isinstance(totp, str) and totp:
            if rejected and _visits(request, "/login/verify") > 2:
                return _abort("the site rejected two codes of the authenticator seed; the seed is probably wrong")
            note = "The code was rejected; typing the next one." if rejected else "Typing the authenticator code."
            return _enter(tree, "code", "Verify", totp, note)
        answer, nobody = _fresh_answer(request)
        if nobody:
            return _abort(f"the site asks for a sign-in code and I cannot get one: {nobody}")
        if answer is not None:
            return _enter(tree, "code", "Verify", answer, "Typing the code the person gave.")
        by_mail = "e-mailed" in tree
        return _ask(request, "Please enter the 6-digit sign-in code " + (
            "the marketplace just e-mailed to the account's address." if by_mail
            else "shown by the account's authenticator app."), "code",
            "The marketplace asks for a second factor after the password.", path)
    if path == "/challenge":
        answer, nobody = _fresh_answer(request)
        if nobody:
            return _abort(f"the site shows a security check only a person can pass: {nobody}")
        if answer is not None:
            return _enter(tree, "answer", "Continue", answer, "Typing the characters the person read.")
        return _ask(request, "Please type the characters shown in the security check picture.", "text",
                    "The marketplace shows a security check (characters in a picture) after several listings.",
                    path)
    return None


def approval_step(request: dict[str, Any], data: dict[str, Any]) -> Reply | None:
    """Ask for approval before Publish when the task wants it and it was not given yet (a rejection
    ends the task by itself)."""
    why = data.get("approval")
    if not why:
        return None
    answers = [text for is_error, text in ask_human_results(request) if not is_error]
    if any(text.startswith("approved") for text in answers):
        return None
    nobody = [text for is_error, text in ask_human_results(request) if is_error]
    if nobody:
        return _abort(f"this listing needs approval before it is published and nobody can give it: {nobody[-1]}")
    return Reply(text="This listing needs a person's approval before I publish it.", tool_uses=[ToolUse(
        "ask_human", {"question": f"Publish SKU {data.get('sku')} ({data.get('title')}) at {data.get('price')}?",
                      "kind": "approve", "why": str(why)})])
