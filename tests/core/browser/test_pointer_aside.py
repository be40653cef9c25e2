"""Before keys are typed the mouse leaves the page (ActionRunner.put_pointer_aside), unless a hover put
it on an element on purpose: what a hover shows (a field's comment button, a list row's actions) must
not depend on where a click left the mouse and how far the page moved under it since, or a replayed
step sees controls its recording did not."""

from __future__ import annotations

from webtask_core.browser import BrowserTab

# Two fields, each with a button shown only while the pointer is over the field (as a CMS's row actions
# or a field's comment button show under :hover); the page counts the pointer entering and leaving.
HOVER_FIELDS = """() => {
  const style = document.createElement('style');
  style.textContent = `.field button { display: none } .field:hover button { display: inline } .field { padding: 40px 0 }`;
  document.head.append(style);
  window.moves = [];
  for (const name of ['title', 'price']) {
    const field = document.createElement('div');
    field.className = 'field';
    field.innerHTML = `<label>${name} <input id="${name}" aria-label="${name}"></label><button>comment on ${name}</button>`;
    field.addEventListener('mouseenter', () => window.moves.push('enter ' + name));
    field.addEventListener('mouseleave', () => window.moves.push('leave ' + name));
    document.body.append(field);
  }
}"""


async def open_hover_fields(session: BrowserTab, sites) -> None:
    await session.navigate(sites.url("settle.html"))
    assert session.page is not None
    await session.page.evaluate(HOVER_FIELDS)


def element_named(observation, words: str) -> str:
    return next(element_id for element_id, element in observation.elements.items() if words in element.text)


async def test_typing_after_a_click_takes_the_mouse_off_the_page(browser_session, sites):
    await open_hover_fields(browser_session, sites)
    seen = await browser_session.observe()
    await browser_session.click(element_named(seen, "title"))
    assert "comment on title" in (await browser_session.observe()).tree  # the click left the mouse on it
    await browser_session.fill(element_named(seen, "price"), "12")
    after = await browser_session.observe()
    assert "comment on title" not in after.tree and "comment on price" not in after.tree
    assert browser_session.page is not None
    assert await browser_session.page.evaluate("window.moves") == ["enter title", "leave title"]
    await browser_session.press_key("Tab")  # already off the page: not moved again
    assert await browser_session.page.evaluate("window.moves") == ["enter title", "leave title"]


async def test_keys_after_a_hover_leave_the_mouse_where_the_hover_put_it(browser_session, sites):
    await open_hover_fields(browser_session, sites)
    seen = await browser_session.observe()
    await browser_session.hover(element_named(seen, "price"))
    await browser_session.type("7", element_named(seen, "price"))
    assert "comment on price" in (await browser_session.observe()).tree
    assert browser_session.page is not None
    assert await browser_session.page.evaluate("window.moves") == ["enter price"]
