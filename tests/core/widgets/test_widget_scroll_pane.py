"""Controls a page positions absolutely (Tom Select's clear button, from npm) inside a pane that
scrolls, not the page: scrolled out of the pane's view above, they are still in the tree, marked out
of view, as the fields beside them are — not taken for boxes parked off the page. Their number must not
depend on where the pane stands, or a replayed step on a pane scrolled elsewhere than when recorded
sees controls come and go (Wagtail's editor: a field's comment button)."""

from __future__ import annotations

from webtask_core.browser import BrowserTab, Observation


def clear_buttons(observation: Observation) -> list[str]:
    return [element.id for element in observation.elements.values() if element.text == "×" and element.role == "button"]


async def test_positioned_controls_scrolled_out_of_a_pane_above_stay_in_the_tree(browser_session: BrowserTab, widget_site):
    await browser_session.navigate(widget_site.url("scroll-pane.html"))
    at_top = await browser_session.observe()
    assert len(clear_buttons(at_top)) == 2, at_top.tree
    assert browser_session.page is not None
    await browser_session.page.evaluate("document.getElementById('pane').scrollTop = 10000")
    scrolled = await browser_session.observe()
    assert clear_buttons(scrolled) == clear_buttons(at_top), scrolled.tree
    lines = scrolled.tree.splitlines()
    above = next(index for index, line in enumerate(lines) if "(in view)" in line)
    assert all(any(button in line for line in lines[:above]) for button in clear_buttons(scrolled)), scrolled.tree


async def test_a_box_parked_above_the_page_is_still_left_out(browser_session: BrowserTab, widget_site):
    await browser_session.navigate(widget_site.url("scroll-pane.html"))
    assert browser_session.page is not None
    await browser_session.page.evaluate("""() => {
      const parked = document.createElement('button');
      parked.textContent = 'Parked menu';
      parked.style.cssText = 'position: absolute; top: -9999px; left: 0';
      document.getElementById('pane').append(parked);
    }""")
    await browser_session.page.evaluate("document.getElementById('pane').scrollTop = 300")
    observation = await browser_session.observe()
    assert "Parked menu" not in observation.tree
