"""Acting on element ids: the effect on the page, the message returned, and the errors the model sees."""

from __future__ import annotations

import json
import socket

import pytest

from webtask_core.browser import BrowserTab, Observation
from webtask_core.browser.tree_lines import text_lines
from webtask_core.errors import ActionError


async def open_page(session: BrowserTab, sites, page: str) -> Observation:
    await session.navigate(sites.url(page))
    return await session.observe()


def by_name(observation: Observation) -> dict[str, str]:
    return {e.name: e.id for e in observation.elements.values() if e.name}


def by_text(observation: Observation) -> dict[str, str]:
    return {e.text: e.id for e in observation.elements.values() if e.text}


async def submitted(session: BrowserTab) -> dict[str, str]:
    return json.loads(await session.page.text_content("#summary"))


async def test_fill_every_input_kind_and_submit(browser_session, sites, tmp_path):
    observation = await open_page(browser_session, sites, "form.html")
    ids = by_name(observation)
    receipt = tmp_path / "receipt.pdf"
    receipt.write_bytes(b"%PDF-1.4 receipt")
    assert await browser_session.fill(ids["title"], "Blue suede shoes") == f'filled {ids["title"]} with "Blue suede shoes"'
    await browser_session.fill(ids["email"], "seller@example.com")
    await browser_session.fill(ids["price"], "59")
    message = await browser_session.fill(ids["password"], "correct horse")
    assert message == f"filled {ids['password']} with a password (13 characters)"
    await browser_session.fill(ids["description"], "Worn twice.\nNo box.")
    assert await browser_session.check(ids["shipping"]) == f"checked {ids['shipping']}"
    used = next(e.id for e in observation.elements.values() if e.name == "condition" and e.text == "Used")
    await browser_session.check(used)
    assert await browser_session.select_option(ids["category"], "shoes") == f'selected "Shoes" in {ids["category"]}'
    await browser_session.fill(ids["available"], "2026-12-24")
    assert await browser_session.fill(ids["quantity"], "7") == f'set {ids["quantity"]} to "7"'
    await browser_session.set_input_files(ids["receipt"], [receipt])
    tree = (await browser_session.observe()).tree
    assert 'value="receipt.pdf"' in tree
    message = await browser_session.click(by_text(await browser_session.observe())["Next"])
    assert message == f"clicked {by_text(await browser_session.observe())['Next']}"
    assert await submitted(browser_session) == {
        "title": "Blue suede shoes", "email": "seller@example.com", "price": "59", "password": "correct horse",
        "description": "Worn twice.\nNo box.", "shipping": "free", "condition": "used", "category": "shoes",
        "available": "2026-12-24", "quantity": "7", "receipt": "receipt.pdf", "photos": "",
    }


async def test_radio_check_and_uncheck_rules(browser_session, sites):
    observation = await open_page(browser_session, sites, "form.html")
    radios = [e.id for e in observation.elements.values() if e.name == "condition"]
    assert await browser_session.check(radios[0]) == f"{radios[0]} was already checked"
    await browser_session.check(radios[1])
    assert await browser_session.page.is_checked("input[value=used]")
    with pytest.raises(ActionError, match="radio button and cannot be unchecked"):
        await browser_session.check(radios[1], checked=False)
    shipping = by_name(observation)["shipping"]
    await browser_session.check(shipping)
    assert await browser_session.check(shipping, checked=False) == f"unchecked {shipping}"
    assert not await browser_session.page.is_checked("input[name=shipping]")


async def test_check_says_when_the_page_keeps_a_checkbox_unchecked(browser_session, sites):
    await open_page(browser_session, sites, "form.html")
    await browser_session.page.set_content(
        '<label><input type="checkbox" name="locked" onclick="event.preventDefault()"> Locked</label>'
    )
    locked = by_name(await browser_session.observe())["locked"]
    with pytest.raises(ActionError, match=f"clicking {locked} did not make it checked"):
        await browser_session.check(locked)
    assert not await browser_session.page.is_checked("input[name=locked]")


async def test_label_standing_for_a_hidden_checkbox(browser_session, sites):
    observation = await open_page(browser_session, sites, "form.html")
    toggle = by_text(observation)["Featured listing"]
    assert toggle.startswith("label-")
    assert await browser_session.check(toggle) == f"checked {toggle}"
    assert await browser_session.page.is_checked("input[name=featured]")
    assert f'- {toggle} (type="checkbox" name="featured" checked) "Featured listing"' in (await browser_session.observe()).tree


async def test_upload_two_files_to_hidden_input_behind_label(browser_session, sites, tmp_path):
    photos = by_name(await open_page(browser_session, sites, "form.html"))["photos"]
    front, back = tmp_path / "front.jpg", tmp_path / "back.jpg"
    front.write_bytes(b"\xff\xd8" + b"a" * 1000)
    back.write_bytes(b"\xff\xd8" + b"b" * 2500)
    message = await browser_session.set_input_files(photos, [front, back])
    assert message == f"attached 2 files to {photos}: front.jpg, back.jpg"
    assert await browser_session.page.text_content("#photo-list") == "front.jpg:1002, back.jpg:2502"


async def test_upload_errors(browser_session, sites, tmp_path):
    ids = by_name(await open_page(browser_session, sites, "form.html"))
    one, two = tmp_path / "1.pdf", tmp_path / "2.pdf"
    one.write_bytes(b"1")
    two.write_bytes(b"2")
    with pytest.raises(ActionError, match=f"^{ids['receipt']} accepts a single file, but 2 were given$"):
        await browser_session.set_input_files(ids["receipt"], [one, two])
    with pytest.raises(ActionError, match="is not a file input"):
        await browser_session.set_input_files(ids["title"], [one])


async def test_select_option_by_its_exact_text_and_errors(browser_session, sites):
    ids = by_name(await open_page(browser_session, sites, "select.html"))
    assert await browser_session.select_option(ids["colour"], "Colour 42") == f'selected "Colour 42" in {ids["colour"]}'
    assert await browser_session.page.input_value("select") == "c42"
    await browser_session.select_option(ids["colour"], "  colour 07 ")  # case and spacing aside
    assert await browser_session.page.input_value("select") == "c7"
    # Never a near match or a value for a text: the model is told what it may have meant, and decides.
    with pytest.raises(ActionError, match='no option "c7"; the option whose value is "c7" reads "Colour 07"'):
        await browser_session.select_option(ids["colour"], "c7")
    with pytest.raises(ActionError, match='options with that in their text: "Colour 42"'):
        await browser_session.select_option(ids["colour"], "42")
    assert await browser_session.page.input_value("select") == "c7"
    with pytest.raises(ActionError) as caught:
        await browser_session.select_option(ids["colour"], "Mauve")
    assert str(caught.value) == (
        f'{ids["colour"]} has no option "Mauve"; options: "Colour 00", "Colour 01", "Colour 02", "Colour 03", '
        '"Colour 04", "Colour 05", "Colour 06", "Colour 07" … (60 in all)'
    )
    with pytest.raises(ActionError, match="is not a <select>"):
        await browser_session.select_option(ids["plain"], "x")


async def test_disabled_option_and_disabled_button(browser_session, sites):
    observation = await open_page(browser_session, sites, "form.html")
    with pytest.raises(ActionError, match='option "Tops" of select-0 is disabled'):
        await browser_session.select_option(by_name(observation)["category"], "Tops")
    draft = by_text(observation)["Save draft"]
    with pytest.raises(ActionError, match=f"^{draft} is disabled$"):
        await browser_session.click(draft)
    carrier = by_name(observation)["carrier"]  # inside a disabled <fieldset>
    assert observation.elements[carrier].disabled
    with pytest.raises(ActionError, match=f"^{carrier} is disabled$"):
        await browser_session.fill(carrier, "DHL")


async def test_fill_refuses_the_wrong_kind_of_element(browser_session, sites):
    ids = by_name(await open_page(browser_session, sites, "form.html"))
    with pytest.raises(ActionError, match="is a <select>; use select_option"):
        await browser_session.fill(ids["category"], "Shoes")
    with pytest.raises(ActionError, match="use check"):
        await browser_session.fill(ids["shipping"], "yes")
    with pytest.raises(ActionError, match="use upload"):
        await browser_session.fill(ids["photos"], "x.jpg")


async def test_unknown_malformed_and_stale_ids(browser_session, sites):
    await open_page(browser_session, sites, "dynamic.html")
    with pytest.raises(ActionError, match="^unknown element id button-9; use an id from the current page state$"):
        await browser_session.click("button-9")
    with pytest.raises(ActionError, match="is not an element id"):
        await browser_session.click("Continue")
    await browser_session.click("button-0")  # replaces the step: the old button is gone
    with pytest.raises(ActionError, match="^button-0 is stale: the page changed since it was observed"):
        await browser_session.click("button-0")
    await browser_session.observe()
    assert await browser_session.fill("input-0", "XYZ") == 'filled input-0 with "XYZ"'


async def test_ids_from_a_page_left_behind_are_stale(browser_session, sites):
    await open_page(browser_session, sites, "tabs.html")
    await browser_session.navigate(sites.url("tab_target.html"))
    with pytest.raises(ActionError, match="stale"):
        await browser_session.click("a-0")


async def test_listener_span_and_property_handler_click(browser_session, sites):
    ids = by_text(await open_page(browser_session, sites, "clickables.html"))
    await browser_session.click(ids["Listener span"])
    assert await browser_session.page.text_content("#log") == "listener span clicked"
    await browser_session.click(ids["Property handler"])
    assert await browser_session.page.text_content("#log") == "property handler clicked"


async def test_covered_element_is_reported_and_partly_covered_one_is_clicked(browser_session, sites):
    ids = by_text(await open_page(browser_session, sites, "covered.html"))
    cover = r'div\.cookie-banner \("We use cookies Accept"\)'  # the banner itself, with the start of its text
    with pytest.raises(ActionError, match=f"^{ids['Buy now']} is covered by {cover}; close or move"):
        await browser_session.click(ids["Buy now"])
    assert await browser_session.page.text_content("#log") == ""
    await browser_session.click(ids["Half visible"])  # its lower part shows below the banner
    assert await browser_session.page.text_content("#log") == "half clicked"
    await browser_session.click(ids["Accept"])
    await browser_session.click(ids["Buy now"])
    assert await browser_session.page.text_content("#log") == "under clicked"


async def test_hidden_element_is_an_error(browser_session, sites):
    await open_page(browser_session, sites, "clickables.html")
    await browser_session.page.add_style_tag(content="#listener { display: none }")
    with pytest.raises(ActionError, match="^span-0 is hidden"):
        await browser_session.click("span-0")


async def test_long_page_click_scrolls_into_view_and_scrolling(browser_session, sites):
    observation = await open_page(browser_session, sites, "long.html")
    ids = by_text(observation)
    await browser_session.click(ids["Bottom button"])
    assert await browser_session.page.text_content("button") == "Bottom clicked"
    await browser_session.page.evaluate("window.scrollTo(0, 0)")
    message = await browser_session.scroll("down")
    assert message.startswith("scrolled down 1 viewport(s); now scrolled ")
    assert await browser_session.page.evaluate("window.scrollY") == 800
    await browser_session.scroll("up", amount=5)
    assert await browser_session.scroll("up") == "already at the top of the page; nothing moved"
    panel = next(e.id for e in observation.elements.values() if e.tag == "div")
    assert await browser_session.scroll("down", element_id=panel) == (
        f"scrolled {panel} down 1 of its heights; it now shows 50-100% of its content"  # its own height: 120 px
    )
    assert await browser_session.page.evaluate("document.getElementById('panel').scrollTop") == 120
    with pytest.raises(ActionError, match="direction must be"):
        await browser_session.scroll("sideways")  # type: ignore[arg-type]


async def test_type_press_key_and_hover(browser_session, sites):
    await open_page(browser_session, sites, "shadow.html")
    assert await browser_session.type("blue", element_id="input-0") == 'typed "blue" into input-0'
    assert await browser_session.type(" shoes") == 'typed " shoes" with the keyboard'
    assert await browser_session.press_key("Enter") == "pressed Enter"
    assert await browser_session.hover("button-0") == "hovering over button-0"
    await browser_session.click("button-0")
    observation = await browser_session.observe()
    assert 'searched for blue shoes' in text_lines(observation.tree)
    with pytest.raises(ActionError, match="Unknown key"):
        await browser_session.press_key("NotAKey")


async def test_wait_for_text_and_timeout(browser_session, sites):
    await open_page(browser_session, sites, "dynamic.html")
    await browser_session.page.evaluate(
        "setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p>Saved!</p>'), 300)"
    )
    message = await browser_session.wait_for(text="Saved!", timeout_s=5)
    assert message.startswith('text "Saved!" appeared after ')
    with pytest.raises(ActionError, match=r'^wait_for: text "Never" did not appear within 0.3 s$'):
        await browser_session.wait_for(text="Never", timeout_s=0.3)
    assert (await browser_session.wait_for(element_id="button-0")).startswith("button-0 appeared")
    with pytest.raises(ActionError, match="not both"):
        await browser_session.wait_for(text="Saved!", element_id="button-0")
    with pytest.raises(ActionError, match="at most 15 seconds"):
        await browser_session.wait_for(text="x", timeout_s=60)


async def test_navigate_go_back_and_navigation_reports(browser_session, sites):
    assert await browser_session.navigate(sites.url("tabs.html")) == f"navigated to {sites.url('tabs.html')}"
    assert browser_session.url == sites.url("tabs.html")
    await browser_session.navigate(sites.url("clickables.html"))
    await browser_session.observe()
    message = await browser_session.click("a-0")
    assert message == f"clicked a-0; page navigated to {sites.url('listing/4')}"
    assert await browser_session.go_back() == f"went back to {sites.url('clickables.html')}"
    assert (await browser_session.navigate(sites.url("missing.html"))).endswith("(HTTP 404)")


async def test_navigate_errors(browser_session, sites):
    with pytest.raises(ActionError, match="^go_back: there is no previous page in this tab$"):
        await browser_session.go_back()
    with pytest.raises(ActionError, match="is not an http"):
        await browser_session.navigate("file:///etc/passwd")
    with pytest.raises(ActionError, match="is not an http"):
        await browser_session.navigate("example.com")
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    with pytest.raises(ActionError, match=f"^navigate to http://127.0.0.1:{closed_port}/: net::ERR_CONNECTION_REFUSED"):
        await browser_session.navigate(f"http://127.0.0.1:{closed_port}/")
    # The failed navigation left Chromium's error page in the history; going back leaves it.
    assert await browser_session.go_back() == "went back to about:blank"


async def test_dialogs_are_answered_and_reported(browser_session, sites):
    await open_page(browser_session, sites, "tabs.html")
    await browser_session.page.evaluate(
        "document.querySelector('button').onclick = () => { window.answer = confirm('Really open?'); }"
    )
    message = await browser_session.click("button-0")
    assert message == 'clicked button-0; the page showed a confirm dialog "Really open?", which was accepted'
    assert await browser_session.page.evaluate("window.answer") is True


async def test_check_an_aria_checkbox_widget(browser_session, sites):
    gift = by_text(await open_page(browser_session, sites, "clickables.html"))["Gift wrap"]
    assert await browser_session.check(gift) == f"checked {gift}"
    assert await browser_session.page.get_attribute("#gift", "aria-checked") == "true"
    await browser_session.observe()
    assert await browser_session.check(gift) == f"{gift} was already checked"
    with pytest.raises(ActionError, match="is not a checkbox, radio button or switch"):
        await browser_session.check(by_text(await browser_session.observe())["Bold text"])


async def test_an_element_under_a_sticky_bar_is_scrolled_clear_of_it(browser_session, sites):
    # "Save draft" lies in the viewport but under the fixed footer; "Publish", once scrolled to, under
    # the sticky header. A person scrolls it clear of the bar; so does the click.
    await browser_session.navigate(sites.url("sticky.html"))
    observation = await browser_session.observe()
    low = next(e.id for e in observation.elements.values() if e.text == "Save draft")
    high = next(e.id for e in observation.elements.values() if e.text == "Publish")
    assert await browser_session.click(low) == f"clicked {low}"
    await browser_session.page.evaluate("window.scrollTo(0, document.getElementById('high').offsetTop - 30)")
    assert await browser_session.click(high) == f"clicked {high}"
    assert await browser_session.page.evaluate("[low.textContent, high.textContent]") == ["Saved", "Published"]


async def test_the_probe_is_sent_once_per_document_and_kept_again_where_the_page_dropped_it(browser_session, sites):
    """Every document holds probe.js from the context's init script, so a probe sends its key, not its
    text; a document that lost it (a page clearing window's symbols) gets it again on the next probe."""
    from webtask_core.browser.scripts import kept_script

    key = kept_script("probe.js").key
    held = f"() => typeof window[Symbol.for({json.dumps(key)})] === 'function'"
    observation = await open_page(browser_session, sites, "form.html")
    assert await browser_session.page.evaluate(held)
    sent: list[str] = []
    connection = browser_session.page._impl_obj._connection  # what this client sends Playwright's driver
    send = connection.send_message_to_server

    def counting(obj, method, params, no_reply=False):  # type: ignore[no-untyped-def]
        sent.append(json.dumps(params, default=str))
        return send(obj, method, params, no_reply)

    connection.send_message_to_server = counting
    try:
        await browser_session.fill(by_name(observation)["title"], "Blue suede shoes")
        assert sent and max(len(message) for message in sent) < 6000  # probe.js alone is 11 KB
        await browser_session.page.evaluate(
            "() => { for (const s of Object.getOwnPropertySymbols(window)) "
            "if (String(s).includes('webtask.probe')) delete window[s]; }")
        assert not await browser_session.page.evaluate(held)
        await browser_session.fill(by_name(observation)["email"], "seller@example.com")
        assert await browser_session.page.evaluate(held)
    finally:
        connection.send_message_to_server = send
    assert await browser_session.page.input_value("[name=email]") == "seller@example.com"
