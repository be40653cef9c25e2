"""No secret can be read in a Playwright trace's film strip, where nothing can be scrubbed afterwards.

Real Chromium, the fake Messages API, a real trace. A secret typed into a field that is not a password
field (an API key, a token, a one-time code typed with the keyboard) is drawn as dots, as a password
is, so the film strip shows its length only; a page that shows the secret as text (an echo) gets no
film strip at all. The trace's text (actions, DOM snapshots, requests) never holds it either.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from hardening_helpers import Site, fake_model

from webtask_core import Agent, WorkerStatus
from webtask_core.browser.tracing import TraceRecorder
from webtask_core.secrets import SecretValues
from webtask_core.testing import ReplayPolicy, Reply, ToolUse

SECRET = "k3y-S3CR3T-99"
PLACEHOLDER = "{{secret:key}}"

KEYS = """<!doctype html><title>API access</title><h1>API access</h1>
<label>Note <input id="note"></label>
<label>API key <input id="key"></label>
<label>Token <input id="token"></label>
<label>Code <input id="code" inputmode="numeric"></label>
<label>Password <input id="pw" type="password"></label>"""

ECHO = """<!doctype html><title>Token</title><h1>Token</h1>
<label>Token <input id="token"></label><p id="live"></p>
<script>document.getElementById('token').addEventListener('input', (event) => {
  document.getElementById('live').textContent = 'Your token: ' + event.target.value; });</script>"""

TEXT_SECURITY = "e => getComputedStyle(e).webkitTextSecurity"


@pytest.fixture
def site():
    with Site(pages={"/keys": KEYS, "/echo": ECHO}) as running:
        yield running


async def _traced_run(browser, url: str, script: ReplayPolicy, folder: Path):
    secrets = SecretValues({"key": SECRET})
    tab = await browser.new_tab(allowed_domains=["127.0.0.1"])
    await tab.navigate(url)
    tracer = TraceRecorder(folder, scrub=secrets.scrub)
    await tracer.start(tab)
    async with fake_model(script) as (_, llm):
        async with Agent(llm, browser=tab, secrets={"key": SECRET}) as agent:
            result = await agent.do("Enter the API key.", max_steps=8)
    return tab, tracer, result


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as trace:
        return {name: trace.read(name) for name in trace.namelist()}


def _holding_the_secret(members: dict[str, bytes]) -> list[str]:
    forms = {SECRET, quote(SECRET), quote_plus(SECRET)}
    return [name for name, data in members.items() for form in forms if form.encode() in data]


async def test_a_secret_typed_into_plain_fields_is_drawn_as_dots_and_the_film_strip_stays(browser, site, tmp_path):
    script = ReplayPolicy([
        Reply(tool_uses=[ToolUse("fill", {"element_id": "input-0", "text": "plain words"}),
                         ToolUse("fill", {"element_id": "input-1", "text": PLACEHOLDER}),
                         ToolUse("type", {"element_id": "input-2", "text": PLACEHOLDER})]),
        ToolUse("click", {"element_id": "input-3"}),
        ToolUse("type", {"text": PLACEHOLDER}),  # the keyboard, into the focused field
        ToolUse("fill", {"element_id": "input-4", "text": PLACEHOLDER}),
        ToolUse("complete", {"feedback": "Entered."}),
    ])
    tab, tracer, result = await _traced_run(browser, site.url("/keys"), script, tmp_path)
    try:
        assert result.status is WorkerStatus.completed, result.feedback
        page = tab.page
        for field in ("key", "token", "code"):
            assert await page.locator(f"#{field}").input_value() == SECRET  # really typed
            assert await page.locator(f"#{field}").evaluate(TEXT_SECURITY) == "disc", field
        assert await page.locator("#note").evaluate(TEXT_SECURITY) == "none"  # only what holds a secret
        await page.locator("#pw").evaluate("e => { e.type = 'text'; }")  # a "show password" button
        assert await page.locator("#pw").evaluate(TEXT_SECURITY) == "disc"
        # What a picture of the field shows does not depend on what it holds, only on its length.
        await page.locator("#key").evaluate("e => e.blur()")
        with_secret = await page.locator("#key").screenshot()
        await page.locator("#key").evaluate("e => { e.value = 'x'.repeat(e.value.length); }")
        assert await page.locator("#key").screenshot() == with_secret
        path = await tracer.stop(tab)
    finally:
        await tab.close()

    assert path is not None and tracer.film_strips_dropped == 0
    members = _members(path)
    assert any(name.startswith("screencast/") for name in members)  # the film strip is kept
    assert _holding_the_secret(members) == []
    assert PLACEHOLDER.encode() in members["trace.trace"]


async def test_a_page_showing_the_secret_as_text_leaves_the_film_strip_out(browser, site, tmp_path, caplog):
    script = ReplayPolicy([
        ToolUse("fill", {"element_id": "input-0", "text": PLACEHOLDER}),
        ToolUse("complete", {"feedback": "Entered."}),
    ])
    tab, tracer, result = await _traced_run(browser, site.url("/echo"), script, tmp_path)
    try:
        assert result.status is WorkerStatus.completed, result.feedback
        assert await tab.page.locator("#live").text_content() == f"Your token: {SECRET}"  # the page echoes it
        path = await tracer.stop(tab)
    finally:
        await tab.close()

    assert path is not None and tracer.film_strips_dropped == 1
    members = _members(path)
    assert not [name for name in members if name.startswith("screencast/")]
    assert b'"screencast-frame"' not in members["trace.trace"]
    assert _holding_the_secret(members) == []
    assert f"Your token: {PLACEHOLDER}".encode() in members["trace.trace"]  # the snapshots still show the page
    assert "has no film strip" in caplog.text
