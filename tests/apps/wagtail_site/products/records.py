"""What the Wagtail site stored, read back from its own database: every product page as plain data.

Both sides of the process boundary live here. In the site's interpreter (``manage.py shell``),
``print_products()`` prints every ProductPage as one JSON line; from the tests,
``stored_products(app)`` runs that through ``DjangoAppProcess.query`` and returns ``StoredProduct``s.
Django is imported inside the site-side functions only, so the tests can import this module.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app_process import DjangoAppProcess

__all__ = ["StoredProduct", "stored_products", "print_products", "body_html"]

# Draftail stamps every block with a random key; it is not content.
_BLOCK_KEY = re.compile(r'\s+data-block-key="[^"]*"')


def body_html(html: str) -> str:
    """The rich text's HTML without Draftail's block keys."""
    return _BLOCK_KEY.sub("", html)


@dataclass(frozen=True)
class StoredProduct:
    title: str
    sku: str
    price: str  # the Decimal as stored ("59.90")
    category: str  # the choice's label ("Footwear")
    condition: str  # the choice's label ("Like new")
    release_date: str  # ISO ("2025-03-14")
    image_sha256: str  # of the stored original file ("" without an image)
    image_name: str  # the original file's name as uploaded ("red_shoe.jpg")
    image_title: str
    body: str  # the rich text's HTML, block keys left out
    tags: tuple[str, ...]  # sorted
    live: bool
    unpublished_changes: bool
    revisions: int
    url_path: str  # the live page's path ("/products/red-trail-shoe/")


def stored_products(app: DjangoAppProcess) -> list[StoredProduct]:
    """Every product page on the site, oldest first (synchronous: a ``manage.py shell`` run)."""
    rows: Any = app.query("from products.records import print_products; print_products()")
    return [StoredProduct(**{**row, "tags": tuple(row["tags"])}) for row in rows]


def print_products() -> None:
    """(In the site's interpreter.) Print every ProductPage as a JSON list on one line."""
    from products.models import ProductPage

    rows = []
    for page in ProductPage.objects.order_by("pk").select_related("image"):
        image = page.image
        digest = name = ""
        if image is not None:
            with image.file.open("rb") as stored:
                digest = hashlib.sha256(stored.read()).hexdigest()
            name = image.file.name.rsplit("/", 1)[-1]
        rows.append({
            "title": page.title, "sku": page.sku, "price": str(page.price),
            "category": page.get_category_display(), "condition": page.get_condition_display(),
            "release_date": page.release_date.isoformat(), "image_sha256": digest, "image_name": name,
            "image_title": image.title if image is not None else "", "body": body_html(page.body),
            "tags": sorted(page.tags.names()), "live": page.live,
            "unpublished_changes": page.has_unpublished_changes, "revisions": page.revisions.count(),
            "url_path": page.get_url() or "",
        })
    print(json.dumps(rows))
