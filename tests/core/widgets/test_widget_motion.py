"""Holding still before a replayed action (browser/motion.settle_motion) on a page of real widgets: a
page with nothing scheduled holds still at once; one with a calendar fading in by script (jQuery UI,
from npm) or a list a timer opens after the focus is waited for until it has shown — also where the
wait runs inside the next action's probe (``BrowserTab.hold_still_first``: one round trip for both)
or before the next look at the page."""

from __future__ import annotations

import pytest

from webtask_core.browser import Browser
from webtask_core.browser.motion import settle_building, settle_motion

PENDING = "() => window[Symbol.for('webtask.pending')]()"


@pytest.fixture
async def tab(widget_site):
    browser = await Browser.launch()
    try:
        tab = await browser.new_tab()
        await tab.navigate(widget_site.url("motion.html"))
        assert tab.page is not None
        yield tab
    finally:
        await browser.close()


@pytest.fixture
async def page(tab):
    return tab.page


def _id_of(observation, name: str) -> str:
    return next(element_id for element_id, info in observation.elements.items() if info.attributes.get("name") == name)


async def test_a_page_with_nothing_scheduled_holds_still(page):
    assert await page.evaluate(PENDING) == 0  # jQuery and jQuery UI loaded, nothing due to run
    assert await settle_motion(page)
    await page.click("#note")  # a plain field: focusing it schedules nothing
    assert await page.evaluate(PENDING) == 0
    assert await settle_motion(page)


async def test_a_list_a_timer_opens_after_the_focus_is_waited_for(page):
    # What the page had scheduled as the focus came (read by a listener after the page's own, in that
    # task): read by a look of its own, a busy machine's round trip outlasted the 120 ms
    await page.evaluate(f"""() => document.getElementById('carrier').addEventListener('focus', () => {{
      window.atFocus = [({PENDING})(), Boolean(document.getElementById('carriers'))];
    }}, {{once: true}})""")
    await page.click("#carrier")
    assert await page.evaluate("window.atFocus") == [1, False]  # the page's timer, due in 120 ms; no list yet
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
      window.ticks = setInterval(() => {}, 40);
      window.poll = setInterval(() => {}, 500);  // an autosave's check (Wagtail's): a poll, not motion
      clearTimeout(timer); cancelAnimationFrame(frame);
    }""")
    assert await page.evaluate(PENDING) == 1  # the fast interval ticks until it is cleared; the poll never counts
    await page.evaluate("() => clearInterval(window.ticks)")
    assert await page.evaluate(PENDING) == 0


async def test_an_animation_that_outlasts_the_bound_is_not_waited_for_one_that_ends_within_it_is(page):
    # A badge pinging 5 times over 25 s (Wagtail's sidebar does): it covers nothing on its way, and the
    # wait would end at the bound anyway (it cost 1.5 s before every replayed call on Wagtail).
    await page.evaluate("""() => {
      const badge = document.createElement('span');
      badge.textContent = '3';
      document.body.append(badge);
      badge.animate([{boxShadow: '0 0 0 0 orange'}, {boxShadow: '0 0 0 10px transparent'}], {duration: 5000, iterations: 5});
    }""")
    started = await page.evaluate("performance.now()")
    assert await settle_motion(page)
    assert await page.evaluate("performance.now()") - started < 1000
    # A panel sliding in for 0.6 s is waited for until it is in place.
    await page.evaluate("""() => {
      const panel = document.createElement('div');
      panel.id = 'panel'; panel.textContent = 'Shipping options';
      document.body.append(panel);
      panel.animate([{transform: 'translateX(300px)'}, {transform: 'none'}], {duration: 600});
    }""")
    assert await settle_motion(page)
    assert await page.evaluate("document.getElementById('panel').getAnimations().length") == 0


async def test_an_action_held_still_first_waits_in_its_probe_for_the_fade(tab, page):
    note = _id_of(await tab.observe(), "note")
    # What the calendar showed at the moment the fill typed into the note (the fill comes right after the probe).
    await page.evaluate("""() => document.getElementById('note').addEventListener('input', () => {
      window.calendarOpacity = getComputedStyle(document.getElementById('ui-datepicker-div')).opacity;
    }, {once: true})""")
    await page.click("#ship-date")  # the calendar starts fading in (400 ms, by jQuery's frames)
    tab.hold_still_first()
    await tab.fill(note, "fragile")
    assert await page.evaluate("() => window.calendarOpacity") == "1"
    assert await page.input_value("#note") == "fragile"
    assert not tab._runner.hold_still  # taken by that action, not left for the next


async def test_a_look_after_hold_still_first_sees_what_a_timer_opened(tab, page):
    await tab.observe()
    await page.click("#carrier")  # its list opens 120 ms later
    tab.hold_still_first()
    observation = await tab.observe()
    assert "Royal Mail" in observation.tree
    assert not tab._runner.hold_still


async def test_a_widget_built_on_a_timer_after_the_load_is_waited_for(widget_site):
    # An editor its page starts 2 s after the load (issue 25: a recording read before it was built): a
    # recorded step waits for the timers the page set while it was young; a poll set later is no build.
    browser = await Browser.launch()
    try:
        tab = await browser.new_tab()
        await tab.navigate(widget_site.url("motion.html"))
        page = tab.page
        assert page is not None
        await page.evaluate("""() => setTimeout(() => {
          const editor = document.createElement('div');
          editor.id = 'late-editor'; editor.contentEditable = 'true'; editor.textContent = 'Body';
          document.body.append(editor);
        }, 1500)""")
        assert await settle_building(page)
        assert await page.locator("#late-editor").count() == 1
        await page.wait_for_timeout(max(0, 2600 - await page.evaluate("performance.now()")))  # no longer young
        await page.evaluate("() => { const poll = () => setTimeout(poll, 500); poll(); }")
        started = await page.evaluate("performance.now()")
        assert await settle_building(page)
        assert await page.evaluate("performance.now()") - started < 1000
    finally:
        await browser.close()


async def test_the_wait_for_a_build_counts_from_when_the_page_has_it_due(widget_site):
    # A step that begins looking long before the page's build is due (a busy machine's recorded step at
    # 0.3 s, TinyMCE due at 2 s: under load 17 the 3 s counted from the step ran out first) still covers
    # it: the bound counts from the build's due time on the page's clock. The page sets its timer itself,
    # at its load, so the page is young when it does whatever the machine's load.
    browser = await Browser.launch()
    try:
        tab = await browser.new_tab()
        page = tab.page
        assert page is not None
        await page.add_init_script("""window.addEventListener('load', () => setTimeout(() => {
          const editor = document.createElement('div');
          editor.id = 'late-editor'; editor.contentEditable = 'true'; editor.textContent = 'Body';
          document.body.append(editor);
        }, 2900))""")
        await tab.navigate(widget_site.url("motion.html"))
        assert await page.evaluate("window[Symbol.for('webtask.building')]()") == 1
        assert await settle_building(page, max_s=1.0)  # 1 s from the call ends before the 2.9 s are due
        assert await page.locator("#late-editor").count() == 1
        # pending_only: with nothing pending, a page that keeps changing (a ticker) is taken at once
        await page.evaluate("""() => setInterval(() => document.body.append(document.createElement('i')), 20)""")
        started = await page.evaluate("performance.now()")
        assert await settle_building(page, max_s=3.0, pending_only=True)
        assert await page.evaluate("performance.now()") - started < 1000
    finally:
        await browser.close()
