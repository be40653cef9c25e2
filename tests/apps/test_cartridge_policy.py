"""The Cartridge product policy's decisions on pages of the shop (trees as the worker printed them
from Cartridge 1.3.4's admin, cut to the part that matters), its refusals of bad task data, and the
reading of the shop's rich text. No browser, no application: the default suite runs these."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cartridge_case import PRODUCTS, markdown_lines
from cartridge_policy import CartridgeProductPolicy, rich_text_keys

from webtask_core.testing.replies import Reply

SITE = "http://127.0.0.1:8000"
DATA = {**PRODUCTS[0], "photo": "photo", "username": "staff", "password": "{{secret:cartridge_password}}",
        "site_url": f"{SITE}/admin/shop/product/"}

LIST_AFTER_SAVE = """\
- h1 "Select Product to change"
- a-22 (href="add/") "Add Product"
- form
  - table
    - row
      - input-1 (type="checkbox" name="_selected_action" value="1")
      - a-27 (href="/admin/shop/product/1/change/")
      - a-28 (href="/admin/shop/product/1/change/") "Red Trail Shoe"
      - group
        - input-2 (type="radio" name="form-0-status" value="1") "Draft"
        - input-3 (type="radio" name="form-0-status" value="2" checked) "Published"
      - a-29 (href="/shop/product/red-trail-shoe/") "View on site"
- item
  - text: "The Product “"
  - a-3 (href="/admin/shop/product/1/change/") "Red Trail Shoe"
  - text: "” was changed successfully."
"""

RICH_TEXT_AREA = "Rich Text Area. Press ALT-F9 for menu. Press ALT-F10 for toolbar. Press ALT-0 for help"
ADD_FORM = """\
- h1 "Add Product"
- form
  - fieldset
    - input-0 (type="text" name="title" value="Red Trail Shoe" required) "Title:"
    - group
      - text: "Status:"
      - input-1 (type="radio" name="status" value="1" required) "Draft"
      - input-2 (type="radio" name="status" value="2" checked required) "Published"
    - input-3 (type="checkbox" name="available" checked) "Available for purchase"
    - group
      - text: "Published from:"
      - input-4 (type="text" name="publish_date_0" value="2026-03-14")
      - input-5 (type="text" name="publish_date_1" value="09:30")
    - iframe "{area}"
      - body-0 (value="Light trail shoe with a **grippy sole** for wet days." contenteditable) "{area}"
    - group
      - text: "Product categories:"
      - group
        - h2 "Available Product categories"
        - select-0 (name="categories_old" options="Shoes | Bags | Accessories | Sale | Gifts")
      - list
        - a-30 "Choose"
        - a-31 "Remove"
      - group
        - h2 "Chosen Product categories"
        - select-1 (name="categories" options="")
  - h2-0 "Meta data"
""".replace("{area}", RICH_TEXT_AREA)

UPLOAD_PAGE = """\
- group
  - h1 "› › Upload"
  - form-0
    - input-0 (type="file" name="Filedata" value="CRT-TRAIL-RED.jpg" multiple) "Browse"
    - input-1 (type="submit" name="_save") "Upload"
"""

LIBRARY = """\
- table
  - row
    - a-7 (hint="Select")
    - a-8 (href="/media/uploads/product/crt-trail-red.jpg")
    - a-9 (href="/media/uploads/product/crt-trail-red.jpg") "crt-trail-red.jpg"
  - row
    - a-10 (hint="Select")
    - a-11 (href="/media/uploads/product/crt-clutch-blk.jpg")
    - a-12 (href="/media/uploads/product/crt-clutch-blk.jpg") "crt-clutch-blk.jpg"
- list
  - a-2 (href="/admin/media-library/upload/?pop=1&dir=product") "Upload"
"""


def request(data: dict[str, Any], url: str, tree: str, *, earlier: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    task = (f"<task>\nCreate this product.\n```json\n{json.dumps(data)}\n```\n</task>\n"
            "<resources>\n- photo (image/jpeg, 1 KB)\n</resources>")
    page = f'<page url="{url}" title="Shop" step="3">\n{tree}</page>'
    return {"messages": [{"role": "user", "content": [{"type": "text", "text": task}]}, *(earlier or []),
                         {"role": "user", "content": [{"type": "text", "text": page}]}]}


def decide(data: dict[str, Any], url: str, tree: str, **kwargs: Any) -> Reply:
    return CartridgeProductPolicy()(request(data, url, tree, **kwargs))


def calls(reply: Reply) -> list[tuple[str, dict[str, Any]]]:
    return [(use.name, use.input) for use in reply.tool_uses]


def test_it_reports_the_saved_product_with_the_address_the_list_links_to() -> None:
    reply = decide(DATA, f"{SITE}/admin/shop/product/", LIST_AFTER_SAVE)
    [(name, arguments)] = calls(reply)
    assert name == "complete"
    assert arguments["feedback"] == (f"Created the product Red Trail Shoe (SKU CRT-TRAIL-RED); the shop shows it at "
                                     f"{SITE}/shop/product/red-trail-shoe/.")


def test_on_the_add_form_it_chooses_the_categories_it_was_asked_for_next() -> None:
    reply = decide({**DATA, "categories": ["Shoes", "Sale"]}, f"{SITE}/admin/shop/product/add/", ADD_FORM)
    assert calls(reply) == [("select_option", {"element_id": "select-0", "option": ["Shoes", "Sale"]}),
                            ("click", {"element_id": "a-30"})]


def test_the_content_is_typed_with_the_keyboard_or_filled_as_markdown() -> None:
    tree = ADD_FORM.replace('value="Light trail shoe with a **grippy sole** for wet days." ', "")
    keys = decide(DATA, f"{SITE}/admin/shop/product/add/", tree)
    assert calls(keys) == [("click", {"element_id": "body-0"}), ("type", {"text": "Light trail shoe with a "}),
                           ("press_key", {"key": "Control+b"}), ("type", {"text": "grippy sole"}),
                           ("press_key", {"key": "Control+b"}), ("type", {"text": " for wet days."})]
    fill = CartridgeProductPolicy(rich_text="fill")(request(DATA, f"{SITE}/admin/shop/product/add/", tree))
    assert calls(fill) == [("fill", {"element_id": "body-0", "text": DATA["description"]})]


def test_rich_text_keys_press_enter_between_lines_and_bold_at_the_start() -> None:
    assert rich_text_keys("**Soft** scarf.\nOne piece.") == [
        ("press", "Control+b"), ("type", "Soft"), ("press", "Control+b"), ("type", " scarf."),
        ("press", "Enter"), ("type", "One piece.")]


def test_a_long_content_cut_by_the_tree_counts_as_written_when_what_shows_matches() -> None:
    long = PRODUCTS[2]["description"]
    shown = long[:99] + "…"
    tree = ADD_FORM.replace("Light trail shoe with a **grippy sole** for wet days.", shown)
    reply = decide({**DATA, "description": long}, f"{SITE}/admin/shop/product/add/", tree)
    assert calls(reply)[0][0] == "select_option"  # on to the categories: the content is as asked
    other = ADD_FORM.replace("Light trail shoe with a **grippy sole** for wet days.", "Something else…")
    refused = decide({**DATA, "description": long}, f"{SITE}/admin/shop/product/add/", other)
    assert calls(refused)[0][0] == "abort" and "holds text I did not expect" in calls(refused)[0][1]["reason"]


def test_the_upload_page_names_the_file_and_the_library_row_of_that_file_is_selected() -> None:
    upload = decide(DATA, f"{SITE}/admin/media-library/upload/?pop=1", UPLOAD_PAGE)
    assert calls(upload) == [("click", {"element_id": "input-1"})]
    assert upload.text == "Uploading the photo, CRT-TRAIL-RED.jpg."
    earlier = [{"role": "assistant", "content": [{"type": "text", "text": upload.text}]}]
    select = decide(DATA, f"{SITE}/admin/media-library/browse/?pop=1", LIBRARY, earlier=earlier)
    assert calls(select) == [("click", {"element_id": "a-7"})]
    # Without a note of what it uploaded (replay did it), the file named after its SKU is its photo;
    # another product's file never is: with none of its own listed, it uploads.
    handed_over = decide(DATA, f"{SITE}/admin/media-library/browse/?pop=1", LIBRARY)
    assert calls(handed_over) == [("click", {"element_id": "a-7"})]
    other = decide({**DATA, "sku": "CRT-SCARF-BLUE"}, f"{SITE}/admin/media-library/browse/?pop=1", LIBRARY)
    assert calls(other) == [("click", {"element_id": "a-2"})]


@pytest.mark.parametrize(("change", "url", "tree", "reason"), [
    ({"tags": None}, "/admin/shop/product/add/", ADD_FORM, "the task's product data lacks tags"),
    ({"tags": "trail, running"}, "/admin/shop/product/add/", ADD_FORM, "categories and tags should be lists"),
    ({"categories": ["Shoes", "Hats"]}, "/admin/shop/product/add/", ADD_FORM,
     "the shop has no category Hats (it offers Shoes, Bags, Accessories, Sale, Gifts)"),
    ({}, "/admin/shop/product/add/", ADD_FORM.replace('- h1 "Add Product"', '- text: "Please correct the error below."'),
     "the shop rejected the product: Please correct the error"),
    ({"photo": "photo_back"}, "/admin/media-library/upload/", UPLOAD_PAGE,
     "the photo photo_back is not among the resources I was given"),
    ({}, "/admin/pages/page/", "- h1 \"Pages\"\n", "I did not expect the page"),
])
def test_bad_data_or_an_unexpected_page_ends_in_an_abort_that_says_why(
        change: dict[str, Any], url: str, tree: str, reason: str) -> None:
    data = {key: value for key, value in {**DATA, **change}.items() if value is not None}
    [(name, arguments)] = calls(decide(data, SITE + url, tree))
    assert name == "abort" and reason in arguments["reason"]


def test_rich_text_is_keys_or_fill() -> None:
    with pytest.raises(ValueError, match="rich_text is 'keys' or 'fill', not 'html'"):
        CartridgeProductPolicy(rich_text="html")  # type: ignore[arg-type]


def test_the_shops_html_reads_as_the_markdown_like_lines_a_model_writes() -> None:
    stored = '<p>A slim clutch in&nbsp;<strong>black satin</strong>.</p>\n<p>Fits a phone, <em>keys</em><br>and cards.</p>'
    assert markdown_lines(stored) == ["A slim clutch in **black satin**.", "Fits a phone, *keys*", "and cards."]
    assert markdown_lines("One **two**\n\nthree", markdown=True) == ["One **two**", "three"]
    # Asterisks typed as text (an editor that took the markdown literally) are not bold.
    assert markdown_lines("<p>A **bold** phrase</p>") == ["A \\*\\*bold\\*\\* phrase"] != \
        markdown_lines("A **bold** phrase", markdown=True)


def test_what_the_tree_left_out_is_scrolled_to_and_what_the_page_lacks_is_said() -> None:
    trimmed = ('- … 212 more above (64 interactive)\n'
               '- input-12 (type="text" name="variations-0-sku" value="3")\n')
    reply = decide(DATA, f"{SITE}/admin/shop/product/3/change/", trimmed)
    assert calls(reply) == [("scroll", {"direction": "up", "amount": 1.0})]
    # Nothing left out: the page may still be loading; it waits once, then gives up saying why.
    half = trimmed.splitlines()[1] + "\n"
    wait = decide(DATA, f"{SITE}/admin/shop/product/3/change/", half)
    assert calls(wait) == [("wait_for", {"timeout_s": 5})]
    earlier = [{"role": "assistant", "content": [{"type": "text", "text": wait.text}]}]
    [(name, arguments)] = calls(decide(DATA, f"{SITE}/admin/shop/product/3/change/", half, earlier=earlier))
    assert name == "abort" and arguments["reason"] == "the product's change form shows no title field"
    other = '- input-0 (type="text" name="title" value="Wool Scarf" required) "Title:"\n'
    [(name, arguments)] = calls(decide(DATA, f"{SITE}/admin/shop/product/3/change/", other))
    assert arguments["reason"] == "this is not the product I was creating: its title is 'Wool Scarf'"
