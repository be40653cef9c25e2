"""Before a submit, the page's own saves finish first (own_saves.py): a save due soon runs and its
answer is handled, a field's change starts its save when the click would, and work due later or a
page with nothing pending is not waited for."""

from __future__ import annotations

import asyncio

from playwright.async_api import Route

from webtask_core.browser import BrowserTab

SAVE_ANSWER_S = 0.3  # the page's save is answered this late

# A field that saves the page 400 ms after its last change (a debounced autosave), keeping the id the
# answer hands back; and one more timeout due in 3 s, which is not the page's save about to start.
AUTOSAVE = """(events) => {
  const field = document.createElement('input');
  field.id = 'title';
  document.body.append(field);
  let timer = null;
  const save = () => { clearTimeout(timer); timer = setTimeout(() => {
    fetch('/autosave', {method: 'POST', body: field.value}).then((answer) => answer.text())
      .then((id) => { window.savedId = id; });
  }, 400); };
  for (const name of events) field.addEventListener(name, save);
  setTimeout(() => { window.late = true; }, 3000);
}"""


async def open_autosave_page(session: BrowserTab, sites, events: tuple[str, ...] = ("input", "change")) -> list[str]:
    saved: list[str] = []

    async def slow_save(route: Route) -> None:
        saved.append(route.request.post_data or "")
        await asyncio.sleep(SAVE_ANSWER_S)
        await route.fulfill(status=200, content_type="text/plain", body="7")

    assert session.page is not None
    await session.page.route("**/autosave", slow_save)
    await session.navigate(sites.url("settle.html"))
    await session.page.evaluate(AUTOSAVE, list(events))
    return saved


async def test_a_save_due_soon_runs_and_its_answer_is_handled_before_the_submit(browser_session, sites):
    saved = await open_autosave_page(browser_session, sites)
    page = browser_session.page
    assert page is not None
    await page.fill("#title", "Brass lamp")  # an input event: the save is due in 400 ms
    said = await browser_session.wait_for_own_saves()
    assert saved == ["Brass lamp"]
    assert await page.evaluate("window.savedId") == "7"  # the answer's handler ran: the submit carries the id
    assert "for the page's own saves" in said
    assert await page.evaluate("window.late") is None  # a timeout due in 3 s is no save about to start


async def test_a_click_leaves_the_field_first_so_its_change_saves_before_the_submit(browser_session, sites):
    saved = await open_autosave_page(browser_session, sites, events=("change",))  # saves once a field is left
    page = browser_session.page
    assert page is not None
    await page.focus("#title")
    await page.keyboard.type("Walnut desk")
    assert await browser_session.wait_for_own_saves() == ""  # without blur: nothing pending, nothing waited
    assert saved == []
    await browser_session.wait_for_own_saves(blur=True)
    assert saved == ["Walnut desk"]
    assert await page.evaluate("window.savedId") == "7"


async def test_a_page_with_nothing_pending_is_not_waited_for(browser_session, sites):
    await browser_session.navigate(sites.url("settle.html"))
    assert await browser_session.wait_for_own_saves(blur=True) == ""
