"""Secrets through Agent.do, real Chromium, the fake Messages API: the value is typed, and shows nowhere.

Searched for the value (as typed, URL-encoded, JSON-escaped): every request the model received, the
stored session JSON, the result, and every log line at DEBUG (the anthropic SDK logs request bodies).
"""

from __future__ import annotations

import html
import json
import logging
from urllib.parse import unquote_plus

import pytest
from hardening_helpers import SHOP_PASSWORD, Site, fake_model, hits, is_mask_colour, mean_colour, request_images

from webtask_core import Agent, TaskRecord, WorkerStatus
from webtask_core.errors import ModelTransientError
from webtask_core.llm.types import ModelReply
from webtask_core.secrets import SecretValue
from webtask_core.testing import MarketplaceListingPolicy, ReplayPolicy, Reply, ToolUse
from webtask_core.testing.request_view import last_tool_results, latest_page, latest_url

SECRET = "Pa55 w0rd/x+&y"
PLACEHOLDER = "{{secret:pw}}"

FORM = """<!doctype html><title>Profile</title>
<h1>Profile</h1>
<form action="/echo" method="get">
  <label>Note <input id="note" name="note"></label>
  <label>Echoed <input id="echo" name="echo"></label>
  <p id="live"></p>
  <label>Password <input id="pw" type="password" name="pw"></label>
  <button>Send</button>
</form>
<script>
  document.getElementById('echo').addEventListener('input', (event) => {
    document.getElementById('live').textContent = 'You typed: ' + event.target.value;
  });
</script>"""


def _echo(path: str, query: dict[str, list[str]], body: bytes) -> tuple[int, str, dict[str, str]]:
    note = html.escape(query.get("note", [""])[0])
    password = html.escape(query.get("pw", [""])[0])
    page = (f"<!doctype html><title>Saved {note}</title><h1>Saved</h1><p>Your note: {note}</p>"
            f'<label>Again <input id="again" value="{password}"></label>')
    return 200, page, {}


@pytest.fixture
def site():
    with Site(pages={"/form": FORM, "/echo": _echo}) as running:
        yield running


def _everything(requests: list[dict]) -> list[str]:
    return [json.dumps(requests), json.dumps(requests, ensure_ascii=False)]


async def test_a_secret_in_fields_echoes_and_urls_never_reaches_the_model(browser, site, caplog):
    caplog.set_level(logging.DEBUG)
    script = ReplayPolicy([
        ToolUse("fill", {"element_id": "input-0", "text": PLACEHOLDER}),  # a plain text field
        ToolUse("fill", {"element_id": "input-1", "text": PLACEHOLDER}),  # the page echoes this one
        Reply(tool_uses=[ToolUse("fill", {"element_id": "input-2", "text": PLACEHOLDER}),
                         ToolUse("click", {"element_id": "button-0"})]),  # a GET form: into the URL
        ToolUse("complete", {"feedback": "Saved."}),
    ])
    async with fake_model(script) as (server, llm):
        async with Agent(llm, browser=browser, secrets={"pw": SECRET}, allowed_domains=["127.0.0.1"],
                         start_url=site.url("/form")) as agent:
            result = await agent.do("Fill the profile form.", max_steps=6)
            session = agent.last_session
        requests = server.requests

    assert result.status is WorkerStatus.completed, result.feedback
    # It was really typed: the form went to the server with the value.
    assert site.requests[-1][1].startswith("/echo?") and SECRET in unquote_plus(site.requests[-1][1])
    assert len(requests) == 4 and [r.ok for r in session.steps[0].tool_calls] == [True]

    # Nothing the model received shows the value, in any form.
    assert hits(SECRET, *_everything(requests)) == []
    assert f'value="{PLACEHOLDER}"' in latest_page(requests[1])  # the field shows the placeholder
    assert f"You typed: {PLACEHOLDER}" in latest_page(requests[2])  # the echo too
    assert "pw=%7B%7Bsecret%3Apw%7D%7D" in latest_url(requests[3]) or PLACEHOLDER in latest_url(requests[3])
    assert f"Your note: {PLACEHOLDER}" in latest_page(requests[3])
    assert "filled input-0 with" in last_tool_results(requests[1])[0].text

    # Screenshots: the field holding the value is masked; where the page itself shows the value in
    # text (no element to mask), no screenshot is sent at all.
    [shot] = request_images(requests[1])
    probe = await browser.new_tab()
    try:
        await probe.navigate(site.url("/form"))
        note_box = await probe.page.locator("#note").bounding_box()
        echo_box = await probe.page.locator("#echo").bounding_box()
    finally:
        await probe.close()
    assert is_mask_colour(mean_colour(shot, note_box)), mean_colour(shot, note_box)
    assert not is_mask_colour(mean_colour(shot, echo_box))  # only what holds a secret is masked
    assert request_images(requests[2]) == [] and request_images(requests[3]) == []

    # What is stored and returned, and every log line.
    assert session is not None
    stored = session.to_json()
    assert hits(SECRET, stored, result.model_dump_json(), caplog.text) == []
    assert PLACEHOLDER in session.final_dom and session.final_screenshot is None
    assert TaskRecord.from_json(stored) == session
    assert any("Request options" in record.getMessage() for record in caplog.records)  # SDK bodies were logged


async def test_the_marketplace_log_in_with_a_secret_leaves_no_trace(browser, shop, caplog):
    caplog.set_level(logging.DEBUG)
    task = ("Log in to the marketplace.\n```json\n"
            + json.dumps({"username": "demo", "password": "{{secret:shop_password}}", "site_url": shop.url("/login")})
            + "\n```")
    async with fake_model(MarketplaceListingPolicy(login_only=True)) as (server, llm):
        async with Agent(llm, browser=browser, secrets={"shop_password": SHOP_PASSWORD},
                         allowed_domains=["127.0.0.1"], start_url=shop.url("/login")) as agent:
            result = await agent.do(task, max_steps=8)
            session = agent.last_session
        requests = server.requests

    assert result.status is WorkerStatus.completed, result.feedback
    assert "Signed in as" in latest_page(requests[-1])
    assert hits(SHOP_PASSWORD, *_everything(requests), session.to_json(), caplog.text) == []
    filled = [call for step in session.steps for call in step.tool_calls if call.name in ("fill", "type")]
    assert any(call.input.get("text") == "{{secret:shop_password}}" for call in filled)
    assert all(request_images(request) for request in requests)  # password fields are always masked, never withheld


async def test_a_secret_is_not_typed_outside_its_domains(browser, site):
    script = ReplayPolicy([
        ToolUse("fill", {"element_id": "input-0", "text": "{{secret:pw}}"}),
        ToolUse("complete", {"feedback": "gave up"}),
    ])
    limited = SecretValue(value=SECRET, domains=("shop.example.com",))
    async with fake_model(script) as (server, llm):
        async with Agent(llm, browser=browser, secrets={"pw": limited}, start_url=site.url("/form")) as agent:
            await agent.do("Fill the form.", max_steps=3)
            typed = await agent.worker.tab.page.locator("#note").input_value()
        results = last_tool_results(server.requests[1])

    assert typed == ""
    assert results[0].is_error and "may only be typed on pages of [shop.example.com]" in results[0].text
    assert "ERROR" in latest_page(server.requests[1]) or "may only be typed" in json.dumps(server.requests[1])


class EchoingModel:
    """A model client whose second call fails with an error quoting the secret (as a proxy might)."""

    def __init__(self, llm, secret: str):
        self.llm, self.secret, self.model, self.calls = llm, secret, llm.model, 0

    async def complete(self, **kwargs) -> ModelReply:
        self.calls += 1
        if self.calls == 2:
            try:
                raise ValueError(f"upstream said: bad token {self.secret}")
            except ValueError as error:
                raise ModelTransientError(f"model API failed near '{self.secret}'") from error
        return await self.llm.complete(**kwargs)


async def test_an_error_leaving_a_step_never_shows_the_secret(browser, site):
    script = ReplayPolicy([ToolUse("fill", {"element_id": "input-0", "text": PLACEHOLDER})])
    async with fake_model(script) as (_, llm):
        async with Agent(EchoingModel(llm, SECRET), browser=browser, secrets={"pw": SECRET},
                         start_url=site.url("/form"), step_retries=0) as agent:
            with pytest.raises(ModelTransientError) as caught:
                await agent.do("Fill the form.", max_steps=3)
    error = caught.value
    assert str(error) == f"model API failed near '{PLACEHOLDER}'"
    assert isinstance(error.__cause__, ValueError) and PLACEHOLDER in str(error.__cause__)
    assert SECRET not in str(error.__context__) and error.__traceback__ is not None
