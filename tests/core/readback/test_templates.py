"""The listing page's lines kept as templates of the run's values: a later page is checked in code
(0 model calls) where it still fits them, and where it does not the check says so (the caller reads
the page with the model) rather than guessing."""

from __future__ import annotations

from typing import Any

import pytest

from webtask_core.readback import FieldReading, ReadBack
from webtask_core.readback.compare import compare_field, compare_pictures
from webtask_core.readback.page import page_lines
from webtask_core.readback.templates import Inconclusive, check_templates, record_templates

CHROME = '''- group
  - a-0 (href="/listings") "Closet Exchange"
  - nav "Main"
    - a-1 (href="/listings") "My listings"
    - a-2 (href="/help") "Help"
  - text: "Signed in as demo"
  - button-0 "Log out"
'''


def listing_page(title: str, price: str, category: str, quantity: str, pictures: int, *, extra: str = "",
                 quantity_label: str = "Quantity") -> str:
    images = "".join(f'    - img "Photo {n} of {title}"\n' for n in range(1, pictures + 1))
    return CHROME + f'''- group
  - article
    - h1 "{title}"
    - text: "{price}"
{extra}{images}    - text: "Category"
    - text: "{category}"
    - text: "{quantity_label}"
    - text: "{quantity}"
    - text: "Listed"
    - text: "Nov 27, 2025 15:22 UTC"
    - a-3 (href="/listings") "Back to my listings"
- text: "© Closet Exchange"
'''


def item(title: str = "Blue suede shoes, size 8", price: Any = "45.00", category: str = "Women's Shoes",
         quantity: Any = "3", photos: int = 2) -> ReadBack:
    return ReadBack(fields={"title": title, "price": price, "category": category, "quantity": quantity,
                            "photos": [f"photo_{n}" for n in range(photos)]})


READING = {"title": FieldReading(shown="x"), "price": FieldReading(shown="x"),
           "category": FieldReading(shown="x", label="Category"), "quantity": FieldReading(shown="x", label="Quantity")}


def recorded(spec: ReadBack, tree: str, pictures: int = 2) -> Any:
    lines = page_lines(tree)
    checks = [compare_field(name, value, "shown") for name, value in spec.expected.items()]
    checks = [check.model_copy(update={"verdict": "match"}) for check in checks]
    checks.append(compare_pictures("photos", spec.fields["photos"], pictures))
    return record_templates(lines, spec, READING, checks, pictures, key="k")


def verdicts(checks: list[Any]) -> dict[str, str]:
    return {check.field: check.verdict for check in checks}


@pytest.fixture
def templates() -> Any:
    return recorded(item(), listing_page("Blue suede shoes, size 8", "$45.00", "Women's Shoes", "3", 2))


def test_lines_showing_fields_become_templates_and_the_sites_own_words_stay(templates):
    texts = [line.text for line in templates.lines]
    assert "{{param:title}}" in texts and "{{param:price}}" in texts and "{{param:category}}" in texts
    assert "{{param:quantity}}" in texts and "Help" in texts and "Listed" in texts
    assert templates.fields == ["category", "price", "quantity", "title"] and templates.pictures_fixed == 0
    (quantity,) = [line for line in templates.lines if line.fields == ["quantity"]]
    assert quantity.label == "quantity"  # a weak number is only ever read after its label


def test_another_listing_as_asked_passes_in_code(templates):
    spec = item(title="Red leather bag", price=1234.5, category="Bags", quantity=12, photos=3)
    checks = check_templates(templates, page_lines(listing_page("Red leather bag", "$1,234.50", "Bags", "12", 3)), spec)
    assert set(verdicts(checks).values()) == {"match"}
    assert {check.field: check.shown for check in checks}["price"] == "$1,234.50"


def test_what_the_site_stored_otherwise_is_a_mismatch_naming_the_field(templates):
    spec = item(title="Paperback atlas with a very long title", price="46.00", quantity="7", photos=2)
    page = listing_page("Paperback atlas with a very long", "$54.74", "Women's Shoes", "5", 1)
    checks = {check.field: check for check in check_templates(templates, page_lines(page), spec)}
    assert {name for name, check in checks.items() if check.verdict == "mismatch"} == {"title", "price", "quantity",
                                                                                       "photos"}
    assert checks["price"].shown == "$54.74" and checks["quantity"].shown == "5"
    assert checks["photos"].shown == "1 picture(s)" and checks["category"].verdict == "match"


def test_a_second_price_the_page_added_contradicts_the_first(templates):
    page = listing_page("Blue suede shoes, size 8", "$45.00", "Women's Shoes", "3", 2,
                        extra='    - text: "$53.55"\n')
    checks = {check.field: check for check in check_templates(templates, page_lines(page), item())}
    assert checks["price"].verdict == "mismatch" and "$53.55" in checks["price"].note


def test_a_relabelled_value_is_never_read_under_another_label(templates):
    page = listing_page("Blue suede shoes, size 8", "$45.00", "Women's Shoes", "3", 2, quantity_label="Pieces left")
    with pytest.raises(Inconclusive, match="no longer shows"):
        check_templates(templates, page_lines(page), item())


def test_a_page_whose_fixed_lines_changed_is_inconclusive(templates):
    page = '- h1 "Blue suede shoes, size 8"\n- text: "Price"\n- text: "$45.00"\n- text: "Stock"\n- text: "3"\n'
    with pytest.raises(Inconclusive, match="fixed lines changed"):
        check_templates(templates, page_lines(page), item())


def test_a_value_equal_to_the_sites_own_words_is_not_bound_to_them():
    spec = item(category="Help")  # the nav's "Help" link is the site's, not the listing's
    tree = listing_page("Blue suede shoes, size 8", "$45.00", "Help", "3", 2)
    templates = recorded(spec, tree)
    assert [line.text for line in templates.lines if line.kind == "a"].count("Help") == 1
    other = item(category="Bags")
    checks = check_templates(templates, page_lines(listing_page("Blue suede shoes, size 8", "$45.00", "Bags", "3", 2)),
                             other)
    assert set(verdicts(checks).values()) == {"match"}


def test_a_sentence_about_the_listing_keeps_its_title_and_price_as_placeholders():
    spec = ReadBack(fields={"title": "Brass desk lamp DR-REC", "price": "24.50"}, pictures=None)
    tree = '- h1 "Listing published"\n- text: "“Brass desk lamp DR-REC” is live at 24.50."\n- a-0 (href="/l") "Back"\n'
    reading = {"title": FieldReading(shown="Brass desk lamp DR-REC"), "price": FieldReading(shown="24.50")}
    checks = [compare_field(name, value, str(value)) for name, value in spec.expected.items()]
    templates = record_templates(page_lines(tree), spec, reading, checks, None)
    assert "“{{param:title}}” is live at {{param:price}}." in [line.text for line in templates.lines]
    now = ReadBack(fields={"title": "Paperback atlas DR-7", "price": "61.00"}, pictures=None)
    page = '- h1 "Listing published"\n- text: "“Paperback atlas DR-7” is live at 72.59."\n- a-0 (href="/l") "Back"\n'
    checks = {check.field: check for check in check_templates(templates, page_lines(page), now)}
    assert checks["title"].verdict == "match" and checks["price"].verdict == "mismatch"
    assert checks["price"].shown == "72.59"


def test_a_field_only_shown_on_a_bare_line_with_no_label_is_not_kept():
    spec = ReadBack(fields={"title": "Blue suede shoes", "category": "Bags"}, pictures=None)
    tree = '- h1 "Blue suede shoes"\n- text: "Bags"\n- text: "Listed today"\n'
    reading = {"title": FieldReading(shown="Blue suede shoes"), "category": FieldReading(shown="Bags")}
    checks = [compare_field(name, value, value) for name, value in spec.expected.items()]
    with pytest.raises(Inconclusive, match="category"):
        record_templates(page_lines(tree), spec, reading, checks, None)


def test_fields_the_recorded_page_did_not_show_are_not_shown():
    spec = ReadBack(fields={"title": "Blue suede shoes", "sku": "SHOE-1"}, pictures=None)
    tree = '- h1 "Blue suede shoes"\n- text: "Listed today"\n'
    reading = {"title": FieldReading(shown="Blue suede shoes"), "sku": FieldReading()}
    checks = [compare_field("title", "Blue suede shoes", "Blue suede shoes"), compare_field("sku", "SHOE-1", None)]
    templates = record_templates(page_lines(tree), spec, reading, checks, None)
    later = ReadBack(fields={"title": "Red bag", "sku": "BAG-2"}, pictures=None)
    checks = verdicts(check_templates(templates, page_lines('- h1 "Red bag"\n- text: "Listed today"\n'), later))
    assert checks == {"title": "match", "sku": "not_shown"}
