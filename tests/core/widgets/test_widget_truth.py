"""What select_option says is what the widget holds, for every call (tests/core/widgets/witness.py):
Shoelace's sl-select multiple (tags over its input, labels through <slot>s), Slim Select (a list that
re-renders), intl-tel-input's country list (a button showing a flag, a search field in its popup) and
virtual-select-plugin (a list rendering only the rows in view), each judged through its own API."""

from __future__ import annotations

import pytest
from widget_helpers import Seen, act, call, finish, give_up, run_task, scripted
from witness import Witness, chosen_in

from webtask_core.browser import BrowserTab, Observation
from webtask_core.errors import ActionError
from webtask_core.testing import Reply

SHOELACE = "(el) => (el.closest('sl-select') || el.getRootNode().host).selectedOptions.map((o) => o.getTextLabel())"
SLIM = """(el) => {
  const select = document.querySelector('select[data-id="' + el.dataset.id + '"]');
  const slim = [colourSelect, materialSelect].find((s) => s.selectEl === select);
  return slim.getSelected().map((value) => Array.from(select.options).find((o) => o.value === value).text);
}"""
PHONE = "() => { const c = iti.getSelectedCountry(); return [c.name + ' (+' + c.dialCode + ')']; }"
VIRTUAL = """(el) => {
  const box = el.closest('.vscomp-ele');
  const held = [].concat(box.value || []);
  return held.map((code) => countries.find((c) => c.value === code).label);
}"""


def witness(tab: BrowserTab, labels_of: str) -> Witness:
    return Witness(tab, {"select_option": chosen_in(labels_of)})


def find(observation: Observation, text: str, role: str | None = None) -> str:
    for element in observation.elements.values():
        if element.text == text and (role is None or element.attributes.get("role") == role):
            return element.id
    raise AssertionError(f"no {role or 'element'} {text!r} in:\n{observation.tree}")


async def test_shoelace_multiple_select_takes_each_size_and_says_so(browser_session, widget_site):
    await browser_session.navigate(widget_site.url("sizes.html"))
    seen = witness(browser_session, SHOELACE)
    sizes = find(await browser_session.observe(), "Sizes", "combobox")
    said = await seen.select_option(sizes, ["EU 38", "EU 39"])
    assert said.startswith(f'selected "EU 38", "EU 39" in {sizes}; it shows "EU 38') and "EU 39" in said
    # The tags now lie over the input: the widget is opened by a free part of it, as a person does.
    sizes = find(await browser_session.observe(), "Sizes", "combobox")
    assert (await seen.select_option(sizes, "EU 40")).startswith(f'selected "EU 40" in {sizes}')
    assert '"EU 38" was already selected' in await seen.select_option(sizes, "EU 38")
    seen.check()
    assert await browser_session.page.evaluate("document.getElementById('sizes').value") == ["38", "39", "40"]


@pytest.mark.parametrize("run", [1, 2, 3])
async def test_slim_select_reads_the_choice_once_it_holds(browser_session, widget_site, run):
    # Slim Select empties its box for a moment while it renders the choice (seen as "now shows ''").
    await browser_session.navigate(widget_site.url("sizes.html"))
    seen = witness(browser_session, SLIM)
    observation = await browser_session.observe()
    colour, materials = find(observation, "Colour", "combobox"), find(observation, "Materials", "combobox")
    assert await seen.select_option(colour, "Navy") == f'selected "Navy" in {colour}; it shows "Navy"'
    assert await seen.select_option(materials, ["Rubber", "Leather"]) == (
        f'selected "Rubber", "Leather" in {materials}; it shows "Leather Rubber"')
    with pytest.raises(ActionError, match='has no option "Wool"'):
        await seen.select_option(materials, "Wool")
    seen.check()
    assert await browser_session.page.evaluate("[colourSelect.getSelected(), materialSelect.getSelected()]") == [
        ["navy"], ["leather", "rubber"]]


async def test_a_country_is_chosen_by_its_flag_button_or_its_search_field(browser_session, widget_site):
    await browser_session.navigate(widget_site.url("phone.html"))
    seen = witness(browser_session, PHONE)
    button = next(e.id for e in (await browser_session.observe()).elements.values() if e.tag == "button"
                  and e.text.startswith("Change country"))
    said = await seen.select_option(button, "Germany (+49)")
    assert said.startswith(f'selected "Germany (+49)" in {button}; it shows "+49 ') and "Germany (+49)" in said
    await browser_session.click(button)  # open, then choose in its search field (typed into)
    search = find(await browser_session.observe(), "Search", "combobox")
    assert (await seen.select_option(search, "Uruguay (+598)")).startswith(f'selected "Uruguay (+598)" in {search}')
    seen.check()
    assert await browser_session.page.evaluate("iti.getSelectedCountry().iso2") == "uy"


async def test_a_virtual_list_is_scrolled_through_before_an_option_is_missing(browser_session, widget_site):
    await browser_session.navigate(widget_site.url("country.html"))
    seen = witness(browser_session, VIRTUAL)
    total = await browser_session.page.evaluate("countries.length")
    observation = await browser_session.observe()
    ships_to, ships_from = find(observation, "Ships to", "combobox"), find(observation, "Ships from", "combobox")
    # Uruguay and Zimbabwe are far below the ten rows the list renders; no search field to type into.
    said = await seen.select_option(ships_to, ["Uruguay", "Zimbabwe", "Chile"])
    assert said.startswith(f'selected "Uruguay", "Zimbabwe", "Chile" in {ships_to}')
    with pytest.raises(ActionError, match=rf'has no option "Atlantis"; options: "Afghanistan", .* \({total} in all, '
                                          "the list scrolled through to its end"):
        await seen.select_option(ships_to, "Atlantis")
    ships_from = find(await browser_session.observe(), "Ships from", "combobox")
    assert (await seen.select_option(ships_from, "Uruguay")) == f'selected "Uruguay" in {ships_from}; it shows "Uruguay"'
    seen.check()
    held = await browser_session.page.evaluate(
        "['#ships-to', '#ships-from'].map((id) => [].concat(document.querySelector(id).value)"
        ".map((code) => countries.find((c) => c.value === code).label))")
    assert held == [["Uruguay", "Zimbabwe", "Chile"], ["Uruguay"]]


@scripted
def sizes_policy(seen: Seen) -> Reply:
    """EU 38 and EU 39 in two calls (a model told the first worked goes on with the second)."""
    sizes = seen.find("Sizes", role="combobox")
    if sizes is None and not any(result.tool_name == "wait_for" for result in seen.results):
        # Shoelace defines its elements after the page's load: a model that sees no drop-down yet waits once.
        return act(call("wait_for", timeout_s=5))
    if sizes is None:
        return give_up("no Sizes drop-down")
    done = {result.text for result in seen.results if result.tool_name == "select_option"}
    if not done:
        return act(call("select_option", element_id=sizes.id, option="EU 38"))
    if not any("EU 39" in text for text in done):
        return act(call("select_option", element_id=sizes.id, option="EU 39"))
    return finish("sizes EU 38 and EU 39")


async def test_an_agent_choosing_sizes_one_call_at_a_time_is_told_the_truth(browser_session, widget_site):
    seen = witness(browser_session, SHOELACE)
    result = await run_task(seen, widget_site.url("sizes.html"), "The shoe comes in EU 38 and EU 39.",  # type: ignore[arg-type]
                            sizes_policy)
    assert result.status.value == "completed", result.feedback
    seen.check()
    assert await browser_session.page.evaluate("document.getElementById('sizes').value") == ["38", "39"]
