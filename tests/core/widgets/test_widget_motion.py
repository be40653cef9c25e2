"""Holding still before a replayed action (browser/motion.settle_motion) on a page of real widgets: a
page with nothing scheduled holds still at once; one with a calendar fading in by script (jQuery UI,
from npm) or a list a timer opens after the focus is waited for until it has shown."""

from __future__ import annotations

import pytest

from webtask_core.browser import Browser
from webtask_core.browser.motion import settle_motion

PENDING = "() => window[Symbol.for('webtask.pending')]()"


@pytest.fixture
async def page(widget_site):
    browser = await Browser.launch()
    try:
        tab = await browser.new_tab()
        await tab.navigate(widget_site.url("motion.html"))
        assert tab.page is not None
        yield tab.page
    finally:
        await browser.close()


async def test_a_page_with_nothing_scheduled_holds_still(page):
    assert await page.evaluate(PENDING) == 0  # jQuery and jQuery UI loaded, nothing due to run
    assert await settle_motion(page)
    await page.click("#note")  # a plain field: focusing it schedules nothing
    assert await page.evaluate(PENDING) == 0
    assert await settle_motion(page)


async def test_a_list_a_timer_opens_after_the_focus_is_waited_for(page):
    await page.click("#carrier")
    assert await page.evaluate(PENDING) == 1  # the page's timer, due in 120 ms
    assert await settle_motion(page)
    assert await page.locator("#carriers").is_visible()


async def test_a_calendar_fading_in_by_script_is_waited_for(page):
    await page.click("#ship-date")
    assert await settle_motion(page)
    calendar = page.locator("#ui-datepicker-div")
    assert await calendar.is_visible()
    assert await calendar.evaluate("e => getComputedStyle(e).opacity") == "1"  # the fade ended
    assert await page.evaluate(PENDING) == 0


async def test_a_cleared_timer_and_a_cancelled_frame_are_no_longer_pending(page):
    await page.evaluate("""() => {
      const timer = setTimeout(() => {}, 500), frame = requestAnimationFrame(() => {});
      window.poll = setInterval(() => {}, 200);
      clearTimeout(timer); cancelAnimationFrame(frame);
    }""")
    assert await page.evaluate(PENDING) == 1  # the interval polls until it is cleared
    await page.evaluate("() => clearInterval(window.poll)")
    assert await page.evaluate(PENDING) == 0
