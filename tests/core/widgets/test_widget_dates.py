"""Controls known only by a class name get a name (jquery-datetimepicker as Wagtail uses it,
air-datepicker, tag-it): a calendar's arrows are "previous month"/"next month", days outside the shown
month and the chosen day are marked, a tag's close link is "remove tag <tag>", the tag input is named
by its field's label. Acted on by those names alone, judged through each widget's own API."""

from __future__ import annotations

import asyncio

from webtask_core.browser import BrowserTab, Observation
from webtask_core.errors import ActionError


def named(observation: Observation, text: str) -> str:
    found = [e.id for e in observation.elements.values() if e.text == text]
    assert found, f"no element named {text!r} in:\n{observation.tree}"
    return found[0]


def day(observation: Observation, number: str, *, outside: bool = False) -> str:
    for element in observation.elements.values():
        if element.text == number and bool(element.attributes.get("outside-month")) == outside:
            return element.id
    raise AssertionError(f"no day {number} (outside the month: {outside}) in:\n{observation.tree}")


async def opened(tab: BrowserTab, field: str, marker: str) -> Observation:
    """Click the field, then look until the picker shows (both open a moment after the focus)."""
    await tab.click(named(await tab.observe(), field))
    for _ in range(30):
        observation = await tab.observe()
        if marker in observation.tree:
            return observation
        await asyncio.sleep(0.1)
    raise AssertionError(f"the picker of {field} did not open:\n{observation.tree}")


async def test_air_datepicker_by_its_named_arrows_and_marked_days(browser_session, widget_site):
    await browser_session.navigate(widget_site.url("dates.html"))
    observation = await opened(browser_session, "Sale ends", "next month")
    assert '"previous month"' in observation.tree and '"March, 2026"' in observation.tree
    assert [e.text for e in observation.elements.values() if e.attributes.get("aria-selected") == "true"] == ["20"]
    assert '(outside-month) "1"' in observation.tree and '(outside-month) "28"' in observation.tree
    await browser_session.click(named(observation, "next month"))
    observation = await browser_session.observe()
    assert '"April, 2026"' in observation.tree
    await browser_session.click(day(observation, "2"))  # April 2nd, not the 2nd of May shown after it
    assert await browser_session.page.evaluate("airPicker.selectedDates.map((d) => d.toDateString())") == ["Thu Apr 02 2026"]


async def test_xdsoft_datetimepicker_by_its_named_arrows(browser_session, widget_site):
    await browser_session.navigate(widget_site.url("dates.html"))
    observation = await opened(browser_session, "Go live at", "next month")
    assert [e.text for e in observation.elements.values() if e.attributes.get("aria-selected") == "true"] == ["14"]
    await browser_session.click(named(observation, "next month"))
    observation = await browser_session.observe()
    try:
        await browser_session.click(day(observation, "10"))
    except ActionError as error:
        # The picker draws the new month on a 10 ms timer; under load the look can come before it,
        # and the click then finds its day replaced: the tool says so, and a model looks again.
        assert "is stale" in str(error), error
        print("xdsoft: the look after 'next month' was stale; looked again")  # the run log shows when it is needed
        await browser_session.click(day(await browser_session.observe(), "10"))
    assert await browser_session.page.evaluate("document.getElementById('go-live').value") == "2026-04-10"


async def test_xdsoft_month_drawn_on_a_timer_is_read_right_after_next_month(browser_session, widget_site):
    """jquery-datetimepicker draws the month a click on "next month" asks for 10 ms later (a timer): the
    settle after the click waits for it, so the very next look shows the new month, never the old one,
    on a page slowed four times (Chromium's CPU throttling, as a loaded machine does)."""
    await browser_session.navigate(widget_site.url("dates.html"))
    cdp = await browser_session.page.context.new_cdp_session(browser_session.page)
    await cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
    observation = await opened(browser_session, "Go live at", "next month")
    months = ["April", "May", "June", "July", "August", "September"]
    for month in months:
        await browser_session.click(named(observation, "next month"))
        observation = await browser_session.observe()
        shown = await browser_session.page.evaluate("document.querySelector('.xdsoft_month span').textContent")
        assert shown == month and f'"{month}"' in observation.tree, (month, shown, observation.tree)
    await browser_session.click(day(observation, "10"))  # no stale id: the look was of this month's days
    assert await browser_session.page.evaluate("document.getElementById('go-live').value") == "2026-09-10"


async def test_tag_it_tags_removed_and_added_by_name(browser_session, widget_site):
    await browser_session.navigate(widget_site.url("dates.html"))
    observation = await browser_session.observe()
    assert '"remove tag leather"' in observation.tree
    await browser_session.click(named(observation, "remove tag weekend"))
    tags = [e.id for e in (await browser_session.observe()).elements.values() if e.text == "Tags" and e.tag == "input"]
    assert len(tags) == 1  # the tag input, named by the label of the field it fills
    await browser_session.type("boots", element_id=tags[0])
    await browser_session.press_key("Enter")
    assert await browser_session.page.evaluate("$('#tags').tagit('assignedTags')") == ["leather", "boots"]
    assert await browser_session.page.evaluate("document.getElementById('tags').value") == "leather,boots"


async def test_a_calendars_day_is_this_runs_only_in_this_runs_month_and_year(browser_session, widget_site):
    # Four real pickers show March 2026 in their own way ("March" and "2026" apart, "March, 2026", a
    # month select and a year select): the day 14 recorded for 2026-03-14 is this run's day for
    # 2026-03-14 only, never for 2024-03-14 (the same month of another year: Wagtail's calendar under
    # load showed today's year) nor for 2026-05-14.
    from webtask_core.replay.folding import Normaliser
    from webtask_core.replay.signature import PageView

    for field in ("Release date (xdsoft)", "Release date (air)", "Release date (jQuery UI)", "Release date (Pikaday)"):
        await browser_session.navigate(widget_site.url("calendars.html"))
        observation = await opened(browser_session, field, '"14"')
        recorded = PageView.of(observation, Normaliser({"release_date": "2026-03-14"}))
        days = [element_id for element_id, fingerprint in recorded.fingerprints.items()
                if fingerprint.text == "{release_date.day}"]
        assert len(days) == 1, (field, observation.tree)
        day_14 = recorded.fingerprints[days[0]]
        assert recorded.resolve(day_14) == (days[0], ""), (field, observation.tree)
        found, why = PageView.of(observation, Normaliser({"release_date": "2024-03-14"})).resolve(day_14)
        assert found is None and "not of this run's release_date (2024)" in why, (field, why, observation.tree)
        found, why = PageView.of(observation, Normaliser({"release_date": "2026-05-14"})).resolve(day_14)
        assert found is None and "not the month of this run's release_date (may)" in why, (field, why, observation.tree)
