"""What the tree shows of the parts widget libraries are made of (widgets.html, plain markup shaped
like them; the real libraries are in tests/core/widgets): formatted rich text, pressed toolbar
toggles, items one drags, the controls of a table named by its headers, a library's hidden original
left out beside a transparent select that takes the clicks, a slider's value, and an editor's iframe
body named by the field it edits."""

from __future__ import annotations

from webtask_core.browser import BrowserTab, Observation
from webtask_core.browser.declared_roots import declares_closed_root
from webtask_core.browser.tree_lines import text_lines
from webtask_core.testing.request_view import tree_elements


async def widgets(session: BrowserTab, sites) -> Observation:
    await session.navigate(sites.url("widgets.html"))
    return await session.observe()


def line_of(observation: Observation, text: str) -> str:
    lines = [line.strip() for line in observation.tree.splitlines() if text in line]
    assert lines, f"no line with {text!r} in:\n{observation.tree}"
    return lines[0]


async def test_rich_text_shows_its_formatting_and_toggles_their_state(browser_session, sites):
    observation = await widgets(browser_session, sites)
    notes = line_of(observation, '"Notes"')
    assert notes.endswith(
        '(value="## Boots\\n**Hand-made** in *Spain*, see [x](/c).\\n- size 9\\n- brown **leather**\\n'
        '  1. calf\\n  2. suede" contenteditable) "Notes"')
    # Its text is its value; nothing inside it gets an id (an editor would save the mark in its content).
    assert not any(line.strip().startswith("- a-") for line in observation.tree.splitlines())
    assert not any(text.startswith("Hand-made") for text in text_lines(observation.tree))
    # Paragraphs are lines.
    assert '(value="First line\\nSecond line" contenteditable) "Plain notes"' in observation.tree
    # A policy reads the line breaks back.
    [element] = [e for e in tree_elements(observation.tree) if e.text == "Notes"]
    assert element.attributes["value"].splitlines() == ["## Boots", "**Hand-made** in *Spain*, see [x](/c).",
                                                        "- size 9", "- brown **leather**", "  1. calf", "  2. suede"]
    # Pressed by a class only (Quill's ql-active, Trix's trix-active): shown as aria-pressed.
    assert '(aria-pressed="true") "B"' in observation.tree and '- button-1 "I"' in observation.tree
    assert '(aria-pressed="true") "”"' in observation.tree


async def test_items_one_drags_get_ids_and_say_so(browser_session, sites):
    observation = await widgets(browser_session, sites)
    # A grab cursor its parent does not have (the <span> inside inherits it: not an item of its own).
    assert '(draggable) "Card A"' in observation.tree and '(draggable) "Card B"' in observation.tree
    assert '(draggable) "Drag me"' in observation.tree  # draggable="true"
    assert len([e for e in observation.elements.values() if e.attributes.get("draggable")]) == 3


async def test_controls_in_tables_are_named_by_their_headers(browser_session, sites):
    observation = await widgets(browser_session, sites)
    names = {e.name: e.text for e in observation.elements.values() if e.tag == "input"}
    assert names["title"] == "Title" and names["weight"] == "Weight"  # row headers (<th> beside them)
    assert names["stock-s-shop"] == names["stock-s-depot"] == "Stock"  # a column header spanning two


async def test_a_hidden_original_is_left_out_and_a_transparent_select_kept(browser_session, sites):
    observation = await widgets(browser_session, sites)
    selects = [e for e in observation.elements.values() if e.tag == "select"]
    assert [(e.name, e.attributes["value"]) for e in selects] == [("month", "March")]
    assert 'Hidden colour' in text_lines(observation.tree)  # its label stays as text


async def test_slider_values_and_editor_frames(browser_session, sites):
    observation = await widgets(browser_session, sites)
    assert '(role="slider" value="30 %" min="0" max="100") "Volume"' in observation.tree
    frame = observation.tree.split('- iframe "Rich Text Area"\n', 1)[1].splitlines()[0]
    assert frame.strip().endswith('(value="Hello *there*" contenteditable) "Long description"')
    body = next(e for e in observation.elements.values() if e.tag == "body")
    await browser_session.click(body.id)
    await browser_session.type(" and welcome")
    # The caret was at the end of the italic word: what was typed is italic too, and the tree says so.
    assert '(value="Hello *there and welcome*" contenteditable)' in (await browser_session.observe()).tree
    assert 'Tagged here' in text_lines(observation.tree)  # a zero-width space is no text


async def editing(session: BrowserTab, sites) -> Observation:
    await session.navigate(sites.url("editing.html"))
    return await session.observe()


async def test_inline_style_formatting_reads_as_marks_and_invisible_characters_are_dropped(browser_session, sites):
    observation = await editing(browser_session, sites)
    values = {e.text: e.attributes["value"] for e in tree_elements(observation.tree) if "contenteditable" in e.attributes}
    assert values["Styled notes"] == "**Hand-made** in *Spain*, **semi** **classed** ***both*** __under__."
    # A heading's own weight is no mark, nor a span set back to normal inside it.
    assert values["Joined notes"].splitlines() == ["Wordjoined, zerowidth, bom, softhyphen, joiner.", "### Heading plain"]
    assert 'Cafeteria menu' in text_lines(observation.tree)
    assert 'value="ABC"' in line_of(observation, 'name="code"')
    assert not any(ch in observation.tree for ch in "\u2060\u200b\u200c\u200d\ufeff\u00ad")


async def test_an_editor_is_named_by_the_label_of_the_field_it_writes(browser_session, sites):
    observation = await editing(browser_session, sites)
    # Draftail: a nameless role=textbox; its <label> points at the hidden input before it.
    assert line_of(observation, 'role="textbox"').endswith('(role="textbox" value="Text" contenteditable) "Body"')


async def test_options_of_a_closed_drop_down_are_left_out(browser_session, sites):
    observation = await editing(browser_session, sites)
    options = [e.text for e in observation.elements.values() if e.attributes.get("role") == "option"]
    assert options == ["S", "M"]  # the open one's; not the closed list's, not the parked one's
    assert "Parked option" not in observation.tree
    assert any(e.name == "photo" for e in observation.elements.values())  # a file input stays an upload target


async def test_an_open_modal_is_a_dialog_line_and_a_closed_ones_upload_field_is_left_out(browser_session, sites):
    await browser_session.navigate(sites.url("dialogs.html"))
    observation = await browser_session.observe()
    files = [e.name for e in observation.elements.values() if e.type == "file"]
    assert files == ["attachment"]  # the page's own hidden upload field stays; the closed modals' do not
    await browser_session.click(next(e.id for e in observation.elements.values() if e.text == "Choose an image"))
    # The modal holds one button now, later its content: a dialog line either way.
    for fill in ("", "<p>Loading images…</p><p>Recent</p>"):
        await browser_session.page.evaluate(
            "(html) => document.getElementById('chooser-body').insertAdjacentHTML('beforeend', html)", fill)
        observation = await browser_session.observe()
        assert "- dialog" in observation.tree, observation.tree
        assert [e.name for e in observation.elements.values() if e.type == "file"] == ["attachment", "image"]
    # A modal holding a single button is a dialog line too (a one-item container is otherwise pulled up).
    await browser_session.page.evaluate("document.getElementById('notice').style.display = 'block'")
    assert '- dialog\n - button-' in (await browser_session.observe()).tree


async def test_fields_in_a_closed_shadow_root_are_in_the_tree_and_take_actions(browser_session, sites):
    await browser_session.navigate(sites.url("closed_shadow.html"))
    observation = await browser_session.observe()
    holder = next(e.id for e in observation.elements.values() if e.text == "Card holder")
    pin = next(e.id for e in observation.elements.values() if e.text == "PIN")
    pay = next(e.id for e in observation.elements.values() if e.text == "Pay now")
    assert await browser_session.fill(holder, "Ada Lovelace") == f'filled {holder} with "Ada Lovelace"'
    await browser_session.type("4321", element_id=pin)
    await browser_session.click(pay)
    page = browser_session.page
    assert await page.evaluate("[document.querySelector('card-form').holder, document.querySelector('card-form').pin]") == [
        "Ada Lovelace", "4321"]
    tree = (await browser_session.observe()).tree
    assert 'Paid by Ada Lovelace' in text_lines(tree) and 'value="••••••"' in tree  # the PIN stays a secret


async def test_closed_shadow_roots_declared_in_html_are_in_the_tree_and_take_actions(browser_session, sites):
    # Made by the HTML parser (no attachShadow): in the page, a nested one, one in a frame from
    # another site, and one a script parses after the load (setHTMLUnsafe).
    await browser_session.navigate(sites.url("declared_shadow.html"))
    observation = await browser_session.observe()
    tree = observation.tree
    assert 'Codes are 12 letters long' in text_lines(tree) and 'Light text slotted in' in text_lines(tree), tree
    code = next(e.id for e in observation.elements.values() if e.text == "Gift card code")
    confirm = next(e.id for e in observation.elements.values() if e.text == "Confirm payment")
    assert await browser_session.fill(code, "GIFTCARD2026") == f'filled {code} with "GIFTCARD2026"'
    assert await browser_session.page.evaluate("document.querySelector('gift-card').code") == "GIFTCARD2026"
    await browser_session.click(confirm)
    add = next(e.id for e in (await browser_session.observe()).elements.values() if e.text == "Add a voucher field")
    await browser_session.click(add)
    observation = await browser_session.observe()
    assert any(e.text == "Voucher" for e in observation.elements.values()), observation.tree
    assert any(e.text == "Confirmed" for e in observation.elements.values()), observation.tree  # in the frame
    assert 'value="GIFTCARD2026"' in observation.tree


def test_a_source_declares_a_closed_root_only_with_a_closed_template():
    assert declares_closed_root(b'<x-a><template shadowrootmode="closed"></template></x-a>')
    assert declares_closed_root(b"<x-a><TEMPLATE ShadowRootMode = 'CLOSED'></TEMPLATE></x-a>")
    assert declares_closed_root(b"<x-a><template shadowrootmode=closed></template></x-a>")
    assert not declares_closed_root(b'<x-a><template shadowrootmode="open"></template></x-a>')
    assert not declares_closed_root(b"<p>closed shadow roots are explained below</p>")
