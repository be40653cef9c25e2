"""New-listing pages built from real widget libraries (npm, pinned), each filled in by a scripted
model that reads only the page tree and the tool results, and judged by the widget's own JS API:
SortableJS, Dropzone, a zone that opens the file chooser, TinyMCE, Tom Select, Choices.js,
noUiSlider, Shoelace, a table of inputs, Pikaday and Tagify."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from PIL import Image
from widget_helpers import Seen, act, call, filling, finish, give_up, run_task, scripted
from witness import Witness, chosen_in

from webtask_core import WorkerStatus
from webtask_core.testing import Reply


def completed(result: Any) -> None:
    assert result.status is WorkerStatus.completed, f"{result.status.value}: {result.feedback}"


# ---- drag to reorder (SortableJS) ------------------------------------------------------------------


@scripted
def cover_policy(seen: Seen) -> Reply:
    if "Saved: sole.jpg" in seen.tree:
        return finish("sole.jpg is the cover")
    items = [element for element in seen.elements if element.has("draggable")]
    sole = next((item for item in items if item.text == "sole.jpg"), None)
    if not items or sole is None:
        return give_up("no photo I can drag")
    if items[0] is not sole:
        return act(call("drag", element_id=sole.id, to_element_id=items[0].id))
    save = seen.find("Save photo order")
    return act(call("click", element_id=save.id)) if save else give_up("no save button")


async def test_photos_are_reordered_by_dragging(browser_session, widget_site):
    result = await run_task(browser_session, widget_site.url("photos.html"),
                            "Make sole.jpg the cover photo (the first one), keep the others in their order, and save.",
                            cover_policy)
    completed(result)
    assert await browser_session.page.evaluate("sortable.toArray()") == ["sole.jpg", "front.jpg", "side.jpg"]


# ---- files: a zone that only takes drops, a zone that opens the file chooser (Dropzone, page script) --


def png(path: Path, colour: str) -> Path:
    buffer = io.BytesIO()
    Image.new("RGB", (24, 16), colour).save(buffer, "PNG")
    path.write_bytes(buffer.getvalue())
    return path


@scripted
def upload_policy(seen: Seen) -> Reply:
    if "Chosen: receipt.pdf" in seen.tree:
        return finish("photos and receipt added")
    if any(result.tool_name == "upload" for result in seen.results):  # the photos are in: the receipt next
        chooser = seen.find("choose the receipt")
        return act(call("upload", element_id=chooser.id, resources=["receipt"])) if chooser else give_up("no receipt")
    zone = seen.find("Drop photos here")
    if zone is None:
        return give_up("no place to drop the photos")
    return act(call("upload", element_id=zone.id, resources=["photo_front", "photo_side"]))


async def test_files_are_dropped_on_a_zone_and_chosen_in_a_file_chooser(browser_session, widget_site, tmp_path):
    receipt = tmp_path / "receipt.pdf"
    receipt.write_bytes(b"%PDF-1.4 receipt")
    resources = {"photo_front": png(tmp_path / "front.png", "red"), "photo_side": png(tmp_path / "side.png", "blue"),
                 "receipt": receipt}
    result = await run_task(browser_session, widget_site.url("upload.html"),
                            "Add the photos photo_front and photo_side to the listing, and attach the receipt.",
                            upload_policy, resources=resources)
    completed(result)
    page = browser_session.page
    assert await page.evaluate("photoZone.files.map((f) => f.name + ':' + f.size)") == [
        f"front.png:{resources['photo_front'].stat().st_size}", f"side.png:{resources['photo_side'].stat().st_size}"]
    assert await page.evaluate("receipts") == [f"receipt.pdf:{receipt.stat().st_size}"]


# ---- rich text in an iframe (TinyMCE) ------------------------------------------------------------


@scripted
def description_policy(seen: Seen) -> Reply:
    editor = seen.find("Description", contenteditable="")
    bold = seen.find("Bold", aria_pressed="")
    if editor is None or bold is None:
        return give_up("no description editor with a Bold button")
    value, pressed = editor.attributes.get("value", ""), bold.attributes["aria-pressed"] == "true"
    if value == "":
        if not pressed:
            return act(call("click", element_id=editor.id), call("click", element_id=bold.id))
        return act(call("type", text="Hand-made"))
    if value == "**Hand-made**":
        return act(call("click", element_id=bold.id)) if pressed else act(call("type", text=" boots."))
    if value == "**Hand-made** boots.":
        return finish("description written")
    return give_up(f"the description reads {value!r}")


async def test_rich_text_in_an_iframe_is_written_with_bold(browser_session, widget_site):
    result = await run_task(browser_session, widget_site.url("description.html"),
                            'Write the description "Hand-made boots." with "Hand-made" in bold.', description_policy)
    completed(result)
    assert await browser_session.page.evaluate("tinymce.activeEditor.getContent()") == (
        "<p><strong>Hand-made</strong> boots.</p>")


# ---- custom selects over hidden native ones (Tom Select, Choices.js) ----------------------------------


class SelectPolicy:
    """Choose each field's option(s) in the widget named like the field, one field a step (what was
    done is in the conversation, as for a model); done when the tree shows every choice."""

    def __init__(self, choices: dict[str, str | list[str]]):
        self.pending = list(choices.items())
        self.wanted = [name for value in choices.values() for name in ([value] if isinstance(value, str) else value)]

    def __call__(self, request: dict[str, Any]) -> Reply:
        return scripted(self.decide)(request)

    def decide(self, seen: Seen) -> Reply:
        if self.pending:
            field, wanted = self.pending.pop(0)
            widget = seen.find(field, role="combobox") or seen.find(field, role="listbox") or seen.find(field)
            if widget is None:
                return give_up(f"no {field} drop-down")
            return act(call("select_option", element_id=widget.id, option=wanted))
        missing = [name for name in self.wanted if not seen.shows(name)]
        return give_up(f"the page does not show {missing}") if missing else finish("all chosen")


# The labels a Tom Select / Choices.js widget holds, through its own API, for the witness (every call judged).
TOM_LABELS = """(el) => {
  const widget = [categorySelect, colourSelect].find((s) => s.wrapper.contains(el));
  return [].concat(widget.getValue()).filter((value) => value !== '').map((value) => widget.options[value].text);
}"""
CHOICES_LABELS = """(el) => {
  const widget = [conditionChoices, materialChoices].find((c) => c.containerOuter.element.contains(el));
  return [].concat(widget.getValue()).map((item) => item.label);
}"""


async def test_tom_select_single_and_multiple(browser_session, widget_site):
    seen = Witness(browser_session, {"select_option": chosen_in(TOM_LABELS)})
    result = await run_task(seen, widget_site.url("category.html"),  # type: ignore[arg-type]
                            "Set the category to Bags and the colours to Brown and Tan.",
                            SelectPolicy({"Category": "Bags", "Colours": ["Brown", "Tan"]}))
    completed(result)
    seen.check()
    page = browser_session.page
    assert await page.evaluate("[categorySelect.getValue(), colourSelect.getValue()]") == ["bags", ["brown", "tan"]]
    assert await page.evaluate("new FormData(document.querySelector('form')).getAll('colours')") == ["brown", "tan"]


async def test_choices_single_and_multiple(browser_session, widget_site):
    seen = Witness(browser_session, {"select_option": chosen_in(CHOICES_LABELS)})
    result = await run_task(seen, widget_site.url("details.html"),  # type: ignore[arg-type]
                            "The condition is Like new; the materials are Leather and Suede.",
                            SelectPolicy({"Condition": "Like new", "Materials": ["Leather", "Suede"]}))
    completed(result)
    seen.check()
    page = browser_session.page
    assert await page.evaluate("[conditionChoices.getValue(true), materialChoices.getValue(true)]") == [
        "like-new", ["leather", "suede"]]


# ---- sliders (noUiSlider) ----------------------------------------------------------------------------


# A person types the number; the slider shows it in its own format.
price_policy = filling(lambda seen: [(seen.find("Asking price", role="slider"), "45", "$45"),
                                     (seen.after("Shipping weight (kg)", role="slider"), "2.5", "2.50")],
                       "sliders for the price and the weight")


async def test_sliders_are_set_to_a_value(browser_session, widget_site):
    result = await run_task(browser_session, widget_site.url("price.html"),
                            "Ask $45 for it; it weighs 2.5 kg to ship.", price_policy)
    completed(result)
    assert await browser_session.page.evaluate("[priceSlider.noUiSlider.get(), weightSlider.noUiSlider.get()]") == [
        "$45", "2.50"]


# ---- shadow-DOM controls (Shoelace) -------------------------------------------------------------------


@scripted
def options_policy(seen: Seen) -> Reply:
    offers, shipping = seen.find("Accept offers", type="checkbox"), seen.find("Free shipping", type="checkbox")
    if (offers is None or shipping is None) and not any(result.tool_name == "wait_for" for result in seen.results):
        # Shoelace's autoloader defines <sl-checkbox> once its module loads: on a busy machine the
        # first look can come before it did (the labels show, the boxes not yet). A reader waits.
        return act(call("wait_for", timeout_s=5))
    if offers is None or shipping is None:
        return give_up("no checkboxes named Accept offers and Free shipping")
    if offers.has("checked") and not shipping.has("checked"):
        return finish("offers accepted, no free shipping")
    return act(call("check", element_id=offers.id, checked=True), call("check", element_id=shipping.id, checked=False))


async def test_shadow_dom_checkboxes_by_their_slotted_labels(browser_session, widget_site):
    result = await run_task(browser_session, widget_site.url("options.html"),
                            "Accept offers on this listing, and do not offer free shipping.", options_policy)
    completed(result)
    assert await browser_session.page.evaluate("[offers.checked, shipping.checked]") == [True, False]


# ---- a table of inputs (django-oscar's stock records) --------------------------------------------------


stock_policy = filling(lambda seen: [(seen.find("Num in stock, Leather Loft"), "7", "7"),
                                     (seen.find("Price (excl. tax), Leather Loft"), "119.00", "119.00")],
                       "stock and price fields for Leather Loft")


async def test_inputs_in_a_table_by_their_headers(browser_session, widget_site):
    result = await run_task(browser_session, widget_site.url("stock.html"),
                            "Leather Loft has 7 in stock, at 119.00.", stock_policy)
    completed(result)
    values = await browser_session.page.evaluate("Object.fromEntries(new FormData(document.querySelector('form')))")
    assert values["stockrecords-1-num_in_stock"] == "7" and values["stockrecords-1-price"] == "119.00"
    assert values["stockrecords-0-num_in_stock"] == "3" and values["stockrecords-0-price"] == "120.00"


# ---- a date picker (Pikaday) ------------------------------------------------------------------------


@scripted
def date_policy(seen: Seen) -> Reply:
    # Pikaday names the field "Use the arrow keys to pick a date" while its calendar is open.
    field = seen.find("Available from") or seen.find(name="available")
    if field is None:
        return give_up("no Available from field")
    if field.attributes.get("value") == "2026-03-14":
        return finish("available from 14 March 2026")
    month = next((e for e in seen.elements if e.tag == "select" and "March" in e.attributes.get("options", "")), None)
    day = next((e for e in seen.elements if e.tag == "button" and e.text == "14"), None)
    if month is None or day is None:
        return act(call("click", element_id=field.id))  # opens the calendar
    if month.attributes.get("value") != "March":
        return act(call("select_option", element_id=month.id, option="March"))
    return act(call("click", element_id=day.id))


async def test_a_date_is_picked_in_the_calendar(browser_session, widget_site):
    result = await run_task(browser_session, widget_site.url("available.html"),
                            "Make the listing available from 14 March 2026.", date_policy)
    completed(result)
    assert await browser_session.page.evaluate("picker.toString()") == "2026-03-14"


# ---- a tag input (Tagify) --------------------------------------------------------------------------


@scripted
def tags_policy(seen: Seen) -> Reply:
    field = seen.find("Tags")
    if field is None:
        return give_up("no Tags field")
    if seen.shows("leather") and seen.shows("boots"):
        return finish("tagged")
    word = "boots" if seen.shows("leather") else "leather"
    return act(call("type", element_id=field.id, text=word), call("press_key", key="Enter"))


async def test_tags_are_typed_into_a_tag_input(browser_session, widget_site):
    result = await run_task(browser_session, widget_site.url("tags.html"), "Tag the listing with leather and boots.",
                            tags_policy)
    completed(result)
    assert await browser_session.page.evaluate("tagify.value.map((tag) => tag.value)") == ["leather", "boots"]
