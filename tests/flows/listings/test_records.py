"""Manifests are validated whole, before any browser starts; every bad row is reported at once."""

from __future__ import annotations

import json

import pytest

from webtask_core.errors import ConfigError
from webtask_flows.listings.records import (
    ListingRecord,
    ManifestError,
    load_task_template,
    parse_manifest,
    photo_resource_names,
    render_listing_task,
)

GOOD = {
    "sku": "BOOT-1", "title": "Red boots", "description": "Leather, size 38", "price": "45.50",
    "category": "Women's Shoes", "condition": "Good", "photos": ["s3://b/boot-1/a.jpg", "s3://b/boot-1/b.jpg"],
}


def test_jsonl_and_csv_give_the_same_listing():
    jsonl = json.dumps(GOOD) + "\n"
    csv_text = (
        "sku,title,description,price,category,condition,photos,colour\n"
        'BOOT-1,Red boots,"Leather, size 38",45.50,Women\'s Shoes,Good,s3://b/boot-1/a.jpg|s3://b/boot-1/b.jpg,red\n'
    )
    from_jsonl = parse_manifest(jsonl, source="m.jsonl").valid[0]
    from_csv = parse_manifest(csv_text, source="m.csv").valid[0]
    assert from_csv.photos == from_jsonl.photos == GOOD["photos"]
    assert from_csv.extra_fields == {"colour": "red"}  # free-form columns are kept
    assert from_csv.price == from_jsonl.price


def test_every_invalid_row_is_reported_by_row_number_and_field():
    rows = [
        GOOD,
        {**GOOD, "sku": "B-2", "price": "-3"},
        {**GOOD, "sku": "B-3", "photos": []},
        {k: v for k, v in GOOD.items() if k != "title"} | {"sku": "B-4"},
        GOOD,
    ]
    text = "\n".join(json.dumps(r) for r in rows) + "\nnot json\n"
    result = parse_manifest(text, source="m.jsonl")
    assert [listing.sku for listing in result.valid] == ["BOOT-1"]
    found = {(p.row, p.field) for p in result.problems}
    assert found == {(2, "price"), (3, "photos"), (4, "title"), (5, "sku"), (6, "(line)")}
    error = ManifestError("m.jsonl", result.problems)
    assert "row 2, price" in str(error) and "row 5, sku: duplicate of row 1" in str(error)


def test_csv_without_a_required_column_names_it():
    with pytest.raises(ManifestError, match="price: column missing"):
        parse_manifest("sku,title,description,category,condition,photos\n", source="m.csv")


def test_content_hash_changes_with_content_only():
    a = ListingRecord.model_validate(GOOD)
    assert a.content_hash() == ListingRecord.model_validate(dict(GOOD)).content_hash()
    assert a.content_hash() != ListingRecord.model_validate({**GOOD, "price": "46"}).content_hash()


def test_task_names_photos_as_resources_and_carries_the_listing_as_json():
    listing = ListingRecord.model_validate(GOOD)
    names = photo_resource_names(listing)
    assert list(names) == ["BOOT_1_photo_1", "BOOT_1_photo_2"]
    task = render_listing_task(
        load_task_template(), listing, photo_names=list(names), site_url="http://shop",
        username="demo", password="{{secret:shop_password}}",
    )
    data = json.loads(task.split("```json")[1].split("```")[0])
    assert data["photos"] == ["BOOT_1_photo_1", "BOOT_1_photo_2"]
    assert data["password"] == "{{secret:shop_password}}"  # the placeholder, never a value
    assert "s3://" not in task  # the model never sees where the files come from


def test_a_custom_template_with_an_unknown_variable_is_rejected_clearly():
    template = load_task_template("List {{ listing.sku }} for {{ nonsense }}")
    with pytest.raises(ConfigError, match="task_template"):
        render_listing_task(template, ListingRecord.model_validate(GOOD), photo_names=["p"],
                            site_url="x", username="u", password="p")
