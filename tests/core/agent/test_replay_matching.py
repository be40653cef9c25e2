"""Replay on pages of other shapes than the demo shop, in real Chromium: a page that now shows two
controls like the recorded one is a mismatch (never a guess), a button that moved is still found, a
renamed one hands over, and the model's note says where replay stopped."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from webtask_core import Agent, WorkerStatus
from webtask_core.replay import Replay, ScriptStore, script_key
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM, Reply, ToolUse
from webtask_core.testing.page_site import PageSite
from webtask_core.testing.request_view import find_element, latest_page, latest_url

ONE_FORM = """<title>Inbox settings</title><h1>Inbox settings</h1>
<form method="post" action="/saved"><label>Signature <input name="signature"></label>
<button type="submit">Save</button></form>"""
# The same page after a redesign added a second form with the same button: which Save is meant?
TWO_FORMS = """<title>Inbox settings</title><h1>Inbox settings</h1>
<form method="post" action="/saved"><label>Signature <input name="signature"></label>
<button type="submit">Save</button></form>
<form method="post" action="/saved-other"><button type="submit">Save</button></form>"""
# The button moved above the field, in a toolbar; nothing else changed.
MOVED = """<title>Inbox settings</title><h1>Inbox settings</h1>
<div role="toolbar"><button type="submit" form="f">Save</button></div>
<form id="f" method="post" action="/saved"><label>Signature <input name="signature"></label></form>"""
SAVED = "<title>Saved</title><h1>Saved</h1><p>Your settings were saved.</p>"


def settings_policy(stopped: list[str]) -> Callable[[dict[str, Any]], Reply]:
    """A model that fills the signature and saves; notes any "replay stopped" line it is shown."""

    def policy(request: dict[str, Any]) -> Reply:
        last = json.dumps(request["messages"][-1])
        if "replay stopped" in last:
            stopped.append(last[last.index("replay stopped"):][:200])
        tree, url = latest_page(request), latest_url(request)
        if url.endswith("/saved"):
            return Reply("Saved.", [ToolUse("complete", {"feedback": "saved"})])
        field, buttons = find_element(tree, name="signature"), [
            line for line in tree.splitlines() if "button" in line and "Save" in line]
        if len(buttons) != 1:
            return Reply("Two Save buttons; I will not guess.", [ToolUse("abort", {"reason": "ambiguous Save"})])
        save = find_element(tree, tag="button", text="Save")
        return Reply("Filling in the signature.", [
            ToolUse("fill", {"element_id": field, "text": "Best, Ann"}),
            ToolUse("click", {"element_id": save}),
        ])

    return policy


async def run(browser, site: PageSite, store: ScriptStore, llm: FakeLLM) -> Any:
    tab = await browser.new_tab()
    try:
        agent = Agent(llm, browser=tab, start_url=site.url("/settings"))
        replay = Replay(key=script_key("inbox-settings", site.host), params={"name": "Ann"}, store=store)
        return await agent.do("Set my signature to 'Best, Ann' and save.", max_steps=6, replay=replay)
    finally:
        await tab.close()


async def test_a_control_that_is_no_longer_unique_is_never_clicked_by_replay(browser, tmp_path):
    store = ScriptStore(LocalSessionStore(tmp_path))
    stopped: list[str] = []
    llm = FakeLLM(settings_policy(stopped))
    with PageSite(pages={"/settings": ONE_FORM, "/saved": SAVED}) as site:
        first = await run(browser, site, store, llm)
        assert first.status is WorkerStatus.completed and first.replay == "recorded"
        site.pages["/settings"] = TWO_FORMS
        site.pages["/saved-other"] = SAVED
        site.requests.clear()
        before = len(llm.requests)
        second = await run(browser, site, store, llm)
    assert not any(method == "POST" for method, _ in site.requests), "replay clicked a Save it had to guess"
    assert second.status is WorkerStatus.aborted and second.replayed_steps == 0
    assert len(llm.requests) == before + 1  # the model saw the page and declined
    # The page check sees the second Save before any element is looked for; the model is told why.
    assert stopped and "replay stopped at step 1" in stopped[0] and "button button save" in stopped[0]
    assert store.load(store.keys()[0]).revision == 1  # a run that did not complete repairs nothing


async def test_a_button_that_moved_is_still_found_and_the_page_still_saved(browser, tmp_path):
    store = ScriptStore(LocalSessionStore(tmp_path))
    llm = FakeLLM(settings_policy([]))
    with PageSite(pages={"/settings": ONE_FORM, "/saved": SAVED}) as site:
        await run(browser, site, store, llm)
        site.pages["/settings"] = MOVED
        site.requests.clear()
        before = len(llm.requests)
        second = await run(browser, site, store, llm)
    assert second.status is WorkerStatus.completed and second.replay == "replayed"
    assert len(llm.requests) == before
    assert ("POST", "/saved") in site.requests


# The form is built by the page's own script a moment after it loads (an editor, a widget library):
# the first look sees no field; replay lets the page settle and looks again before asking the model.
BUILT_LATER = """<title>Inbox settings</title><h1>Inbox settings</h1>
<form method="post" action="/saved" id="f"></form>
<script>setTimeout(() => {
  document.getElementById('f').innerHTML = '<label>Signature <input name="signature"></label>' +
    '<button type="submit">Save</button>';
}, 700);</script>"""


async def test_a_form_still_building_is_looked_at_again_not_handed_over(browser, tmp_path):
    store = ScriptStore(LocalSessionStore(tmp_path))
    llm = FakeLLM(settings_policy([]))
    with PageSite(pages={"/settings": ONE_FORM, "/saved": SAVED}) as site:
        await run(browser, site, store, llm)
        site.pages["/settings"] = BUILT_LATER
        site.requests.clear()
        before = len(llm.requests)
        second = await run(browser, site, store, llm)
    assert second.status is WorkerStatus.completed and second.replay == "replayed", second.feedback
    assert len(llm.requests) == before and ("POST", "/saved") in site.requests
