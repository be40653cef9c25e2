"""The Wagtail test shop as the tests start it: migrated (or copied from the cached migrated
database), seeded with a staff superuser and the "Products" page, served on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

from app_process import DjangoAppProcess

__all__ = ["shop_process", "STAFF_USERNAME", "STAFF_PASSWORD", "SECTION", "PAGE_TYPE", "CATEGORIES", "CONDITIONS"]

STAFF_USERNAME = "editor"
STAFF_PASSWORD = "wagtail-editor-pass"  # a throwaway test account
SECTION = "Products"  # the page the products go under (seeded)
PAGE_TYPE = "Product page"  # Wagtail's name for products.ProductPage
# The labels of products/models.py's choices, as the editor shows them.
CATEGORIES = ("Footwear", "Bags", "Outerwear", "Accessories")
CONDITIONS = ("New", "Like new", "Used", "Refurbished")
SEED_VERSION = 1  # raise when the seed command changes: the cached database is then made again


def shop_process(root: Path) -> DjangoAppProcess:
    """``with shop_process(tmp) as shop: shop.url("/admin/")``; the database and media under ``root``."""
    return DjangoAppProcess("wagtail_site", root, seed=("seed_shop", STAFF_USERNAME, STAFF_PASSWORD),
                            seed_version=SEED_VERSION, ready_path="/admin/login/")
