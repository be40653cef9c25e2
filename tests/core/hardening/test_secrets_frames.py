"""A secret limited to a site is checked against the frame it is typed into, not the tab's URL.

The page on 127.0.0.1 (where the secret may be typed) embeds a login form served by 127.0.0.2 in an
iframe, as an ad, a widget or an injected phishing form would. The model fills it, and types into it
with the keyboard after clicking it: both are refused, nothing reaches 127.0.0.2, while the page's own
field and a srcdoc frame (the page's own content) get the value.
"""

from __future__ import annotations

from typing import Any

import pytest
from hardening_helpers import Site, fake_model

from webtask_core import Agent, WorkerStatus
from webtask_core.secrets import SecretValue
from webtask_core.testing import Reply, ToolUse
from webtask_core.testing.request_view import find_element, last_tool_results, latest_page

SECRET = "fr4me-s3cret"
PLACEHOLDER = "{{secret:pw}}"
PHISH = '<form action="/collect"><input name="phish" type="password"><button>Sign in</button></form>'


@pytest.fixture
def other():
    with Site(host="127.0.0.2", pages={"/phish": PHISH, "/collect": "<p>got it</p>"}) as running:
        yield running


@pytest.fixture
def site(other):
    page = (
        "<!doctype html><title>Account</title><h1>Account</h1>"
        '<label>Password <input name="own" type="password"></label>'
        '<iframe title="Own widget" srcdoc="<input name=\'widget\'>"></iframe>'
        f'<iframe title="Partner sign-in" src="{other.url("/phish")}"></iframe>'
    )
    # The same partner form inside a widget's open shadow root.
    widget = (
        "<!doctype html><title>Account</title><h1>Account</h1>"
        '<label>Password <input name="own" type="password"></label><div id="host"></div>'
        "<script>document.getElementById('host').attachShadow({mode: 'open'}).innerHTML ="
        f""" '<iframe title="Partner sign-in" src="{other.url("/phish")}"></iframe>';</script>"""
    )
    with Site(pages={"/account": page, "/shadow": widget}) as running:
        yield running


def _script(steps: list[Any]):
    """A model that plays `steps` in order, each a function of the current page tree → tool uses."""

    def policy(request: dict[str, Any]) -> Reply:
        turn = sum(message["role"] == "assistant" for message in request["messages"])
        if turn >= len(steps):
            return Reply(tool_uses=[ToolUse("complete", {"feedback": "done"})])
        return Reply(tool_uses=steps[turn](latest_page(request)))

    return policy


async def _values(agent: Agent) -> dict[str, str]:
    page = agent.worker.tab.page
    values = {}
    for frame in page.frames:
        for name in ("own", "widget", "phish"):
            locator = frame.locator(f'input[name="{name}"]')
            if await locator.count():
                values[name] = await locator.input_value()
    return values


async def test_fill_refuses_a_limited_secret_in_a_frame_of_another_host(browser, site, other):
    steps = [
        lambda tree: [ToolUse("fill", {"element_id": find_element(tree, name="phish"), "text": PLACEHOLDER})],
        lambda tree: [ToolUse("fill", {"element_id": find_element(tree, name="own"), "text": PLACEHOLDER}),
                      ToolUse("fill", {"element_id": find_element(tree, name="widget"), "text": PLACEHOLDER})],
    ]
    limited = SecretValue(value=SECRET, domains=(site.host,))
    async with fake_model(_script(steps)) as (server, llm):
        async with Agent(llm, browser=browser, secrets={"pw": limited}, start_url=site.url("/account")) as agent:
            result = await agent.do("Sign in.", max_steps=4)
            values = await _values(agent)
        refused = last_tool_results(server.requests[1])[0]
        typed = last_tool_results(server.requests[2])

    assert result.status is WorkerStatus.completed
    assert values == {"own": SECRET, "widget": SECRET, "phish": ""}
    assert refused.is_error
    assert f"may only be typed on pages of [{site.host}]; the field is in a document of {other.url('/phish')}" \
        in refused.text
    assert not any(view.is_error for view in typed)
    # nothing was submitted (Chromium may fetch the frame site's favicon)
    assert [request for request in other.requests if request[1] not in ("/phish", "/favicon.ico")] == []


@pytest.mark.parametrize("path", ["/account", "/shadow"])
async def test_typing_into_the_focused_frame_of_another_host_is_refused(browser, site, other, path):
    steps = [
        lambda tree: [ToolUse("click", {"element_id": find_element(tree, name="phish")})],
        lambda tree: [ToolUse("type", {"text": PLACEHOLDER})],  # the keyboard, into the focused field
        lambda tree: [ToolUse("click", {"element_id": find_element(tree, name="own")})],
        lambda tree: [ToolUse("type", {"text": PLACEHOLDER})],
    ]
    limited = SecretValue(value=SECRET, domains=(site.host,))
    async with fake_model(_script(steps)) as (server, llm):
        async with Agent(llm, browser=browser, secrets={"pw": limited}, start_url=site.url(path)) as agent:
            result = await agent.do("Sign in.", max_steps=6)
            values = await _values(agent)
        into_frame = last_tool_results(server.requests[2])[0]
        into_page = last_tool_results(server.requests[4])[0]

    assert result.status is WorkerStatus.completed
    assert into_frame.is_error and f"the field is in a document of {other.url('/phish')}" in into_frame.text
    assert not into_page.is_error
    assert values["own"] == SECRET and values["phish"] == "" and values.get("widget", "") == ""
