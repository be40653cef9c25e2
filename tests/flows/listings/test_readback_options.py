"""What a batch reads back: every field of a listing's row (its photos by count, its extra columns
as attributes), as the task template's ``readback:`` options narrow and label them; bad options are
named before any listing runs."""

from __future__ import annotations

import pytest

from webtask_core.errors import ConfigError
from webtask_flows.listings.records import ListingRecord
from webtask_flows.listings.runs import plan_jobs

ROW = ListingRecord(sku="BOOT-1", title="Red boots", description="Leather", price="45.50", category="Shoes",
                    condition="Good", photos=["a.jpg", "b.jpg"], quantity="3", brand="Acme")
TEMPLATE = """task: |
  List {{ listing.sku }}.
  ```json
  {{ listing_json }}
  ```
readback:
  check: [title, price, quantity, photos]
  labels: {price: Preis, quantity: Menge}
  search_url: "https://shop.example/suche?sku={sku}"
"""


def plan(template: str | None = None, verify: str = "always") -> dict:
    (job,) = plan_jobs([ROW], site_url="https://shop.example/", username="ops", password_secret="pw",
                       task_template=template, max_steps=20, model=None, allowed_domains=None, verify=verify)
    return job.parameters


def test_every_field_of_the_row_is_read_back_by_default():
    parameters = plan()
    fields = parameters["readback"]["fields"]
    assert fields == {"sku": "BOOT-1", "title": "Red boots", "description": "Leather", "price": "45.50",
                      "category": "Shoes", "condition": "Good", "photos": ["BOOT_1_photo_1", "BOOT_1_photo_2"],
                      "quantity": "3", "brand": "Acme"}
    assert parameters["verify"] == "always" and "check" not in parameters["readback"]


def test_the_template_names_the_fields_to_check_and_how_the_page_labels_them(tmp_path):
    path = tmp_path / "german_shop.yaml"
    path.write_text(TEMPLATE)
    readback = plan(str(path))["readback"]
    assert readback["check"] == ["title", "price", "quantity", "photos"]
    assert readback["labels"] == {"price": "Preis", "quantity": "Menge"}
    assert readback["search_url"] == "https://shop.example/suche?sku={sku}"


def test_verify_off_sends_no_read_back():
    parameters = plan(verify="off")
    assert "readback" not in parameters and "verify" not in parameters


@pytest.mark.parametrize(("options", "problem"), [
    ("  check: [colour]\n", "names colour, which are not in readback.fields"),
    ("  labels: {colour: Farbe}\n", "names colour, which are not in readback.fields"),
    ("  search_url: \"https://shop.example/?q={ean}\"\n", "uses {ean}, which is not in readback.fields"),
    ("  sometimes: true\n", "`readback:` takes check, labels"),
])
def test_bad_read_back_options_are_named_before_any_listing_runs(options, problem):
    with pytest.raises(ConfigError) as caught:
        plan("task: |\n  List it.\nreadback:\n" + options)
    assert problem in str(caught.value)
