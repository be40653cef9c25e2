"""The Wagtail product pages as an `AppCase`: the products (the first recorded, the others replayed),
their photos, the task text, and the check of what Wagtail stored (its own database, through
``products/records.py``).

The products differ where replay has to show it binds this run's values: titles of other lengths,
tags not in the title and a different number of them, conditions whose words the admin also uses
(recorded with "New", replayed with "Used", "Like new", "Refurbished"), other categories and dates,
bodies of other lengths (one over 80 characters) with their bold and italic words elsewhere, and a
photo of its own for each (JPEG and PNG, other names).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

from app_process import DjangoAppProcess
from PIL import Image
from pydantic import SecretStr
from replay_runs import AppCase, ItemRun, foreign_members, foreign_owner
from wagtail_editor import RichText, body_segments
from wagtail_policy import WagtailProductPolicy
from wagtail_site.products.records import StoredProduct, stored_products
from wagtail_site.shop import STAFF_PASSWORD, STAFF_USERNAME, shop_process

from webtask_core.readback import ReadBack
from webtask_core.replay import script_key
from webtask_core.worker import WorkerOptions

__all__ = ["PRODUCTS", "wagtail_case", "open_wagtail_case", "expected_body_html", "slug_of", "readback_of"]

# What a product's page is read back for (issue 26): every value the task asked for.
READ_BACK = ("title", "sku", "price", "category", "condition", "release_date", "tags", "body")

# (the product's fields, its photo's file name and colour)
PRODUCTS: tuple[tuple[dict[str, Any], str, tuple[int, int, int]], ...] = (
    ({"title": "Red Trail Shoe", "sku": "WT-SHOE-RED", "price": "59.90", "category": "Footwear", "condition": "New",
      "release_date": "2025-03-14", "tags": ["outdoor", "summer sale"],
      "body": "Light trail shoe with a **grippy sole** and *red mesh* upper."},
     "red_trail_shoe.jpg", (200, 40, 50)),
    ({"title": "Silver Tote", "sku": "WT-BAG-SILVER", "price": "24.50", "category": "Bags", "condition": "Used",
      "release_date": "2024-11-02", "tags": ["gift", "weekend", "city carry"],
      "body": "A roomy tote in brushed silver with **two inner pockets** and a magnetic clasp that keeps "
              "everything in place on *busy* days."},
     "tote-silver.png", (180, 180, 190)),
    ({"title": "Waxed Cotton Field Jacket with Corduroy Collar", "sku": "WT-JKT-FIELD-01", "price": "189.00",
      "category": "Outerwear", "condition": "Like new", "release_date": "2023-09-30", "tags": ["heritage"],
      "body": "Barely worn. *Waxed* finish, **corduroy collar**."},
     "field_jacket.jpg", (60, 80, 40)),
    ({"title": "Gold Ballet Flat", "sku": "WT-SHOE-GOLD", "price": "42.75", "category": "Footwear",
      "condition": "Refurbished", "release_date": "2026-01-05", "tags": ["evening", "leather", "resoled", "size 38"],
      "body": "Soft **gold leather**, new soles."},
     "gold-flat.jpg", (210, 170, 60)),
    ({"title": "Canvas Belt", "sku": "WT-ACC-BELT-7", "price": "9.95", "category": "Accessories", "condition": "Used",
      "release_date": "2022-06-21", "tags": ["basics", "unisex"],
      "body": "*Sturdy* cotton canvas with a brass buckle. **One size.**"},
     "belt.png", (120, 90, 60)),
)
_PHOTOS = {product["sku"]: (name, colour) for product, name, colour in PRODUCTS}


def task_for(data: dict[str, Any]) -> str:
    return ("In the site's Wagtail admin, add this product as a new Product page under the Products page: "
            "fill in every field, choose the photo as its image (upload it), write the body with its bold "
            "and italic words, add the tags, then publish the page and report its live URL.\n"
            f"```json\n{json.dumps(data, indent=2)}\n```")


def make_photo(data: dict[str, Any], folder: Path) -> dict[str, Path]:
    """The product's own photo, a small real image of its colour under its own file name."""
    name, colour = _PHOTOS.get(data["sku"], (f"{slug_of(data['title'])}.jpg", (90, 90, 90)))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    Image.new("RGB", (96, 64), colour).save(path, "PNG" if name.endswith(".png") else "JPEG")
    return {"photo": path}


def slug_of(title: str) -> str:
    """The slug Wagtail's editor makes of a title (ASCII titles: Django's slugify)."""
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", title.lower())).strip("-_")


def expected_body_html(markdown: str) -> str:
    """The HTML Wagtail stores for the body (Draftail's bold is <b>, italic <i>; a line a paragraph)."""
    paragraphs, current = [], ""
    for text, style in body_segments(markdown):
        if text == "\n":
            paragraphs.append(current)
            current = ""
            continue
        escaped = html.escape(text, quote=False)
        current += {"bold": f"<b>{escaped}</b>", "italic": f"<i>{escaped}</i>"}.get(style, escaped)
    paragraphs.append(current)
    return "".join(f"<p>{paragraph}</p>" for paragraph in paragraphs)


def _wanted(run: ItemRun) -> dict[str, Any]:
    data = run.data
    return {
        "title": data["title"], "sku": data["sku"], "price": str(Decimal(data["price"]).quantize(Decimal("0.01"))),
        "category": data["category"], "condition": data["condition"], "release_date": data["release_date"],
        "image_sha256": hashlib.sha256(run.resources["photo"].read_bytes()).hexdigest(),
        "image_title": data["title"], "body": expected_body_html(data["body"]), "tags": tuple(sorted(data["tags"])),
        "live": True, "unpublished_changes": False, "url_path": f"/products/{slug_of(data['title'])}/",
    }


def _stored_problems(app: DjangoAppProcess, runs: Sequence[ItemRun], before: frozenset[str] = frozenset()) -> list[str]:
    """Each product asked for: stored once, with exactly its values; a wrong value says whose it is
    when it is another product's; and nothing stored that was not asked for (`before`: the SKUs the
    session's shop held when the case began, another test's products)."""
    stored = [page for page in stored_products(app) if page.sku not in before]
    problems = []
    for run in runs:
        pages = [page for page in stored if page.sku == run.data["sku"]]
        if len(pages) != 1:
            problems.append(f"{run.label}: stored {len(pages)} times (SKU {run.data['sku']})")
            if not pages:
                continue
        problems += _field_problems(run, pages[0], runs)
    asked = {run.data["sku"] for run in runs}
    problems += [f"a page nobody asked for: {page.title!r} (SKU {page.sku})" for page in stored if page.sku not in asked]
    return problems


def _field_problems(run: ItemRun, page: StoredProduct, runs: Sequence[ItemRun]) -> list[str]:
    problems = []
    stored = vars(page)
    for key, wanted in _wanted(run).items():
        if stored[key] == wanted:
            continue
        owner = ""
        if key in ("title", "sku", "price", "category", "condition", "release_date"):
            owner = foreign_owner(key, stored[key], run, runs, lambda a, b: str(a) == str(b))
        elif key == "tags":
            owner = foreign_members(key, stored[key], run, runs)
        elif key == "body":
            owner = foreign_owner(key, stored[key], run, runs, lambda a, b: b is not None and a == expected_body_html(b))
        elif key == "image_title":
            owner = foreign_owner("title", stored[key], run, runs)
        problems.append(f"{run.label}: {key} stored {stored[key]!r}, asked {wanted!r}{owner}")
    return problems


def readback_of(data: dict[str, Any]) -> ReadBack:
    """The product read back from its live page, the URL the run reported: the body as the task wrote
    it (markdown), the page shows it rendered. Only the values the task data holds (task data without
    one is refused by the model, before anything is typed)."""
    return ReadBack(fields={name: data[name] for name in READ_BACK if name in data})


def wagtail_case(shop: DjangoAppProcess, *, rich_text: RichText = "keys") -> AppCase:
    """The case on a running shop; ``rich_text``: how the scripted model writes the body."""
    # Products other tests of the session stored before this case began are theirs, not this case's.
    before = frozenset(page.sku for page in stored_products(shop))
    items = [{**product, "photo": "photo", "username": STAFF_USERNAME, "password": "{{secret:wagtail_password}}",
              "site_url": shop.url("/admin/")} for product, _, _ in PRODUCTS]
    return AppCase(
        name="wagtail", script_key=script_key("wagtail-add-product", "wagtail-test-shop"), items=items,
        task=task_for, resources=make_photo, policy=WagtailProductPolicy(rich_text=rich_text),
        stored_problems=lambda runs: _stored_problems(shop, runs, before),
        options=WorkerOptions(secrets={"wagtail_password": SecretStr(STAFF_PASSWORD)}), readback=readback_of,
    )


@contextmanager
def open_wagtail_case(root: Path, *, rich_text: RichText = "keys") -> Iterator[AppCase]:
    """The shop started in `root` (outside pytest's fixtures: the benchmark), and its case."""
    with shop_process(root) as shop:
        yield wagtail_case(shop, rich_text=rich_text)
