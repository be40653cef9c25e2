"""What the shop stored, read through Oscar's models as plain data (synchronous: from async code
call these through ``asyncio.to_thread``)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

__all__ = ["StoredProduct", "stored_products"]


@dataclass(frozen=True)
class StoredProduct:
    title: str
    upc: str
    description_lines: tuple[str, ...]  # the HTML's text, line by line, blank lines left out
    product_class: str
    categories: tuple[str, ...]
    images: tuple[bytes, ...]  # the stored files' bytes, in display order
    stock: tuple[tuple[str, str, Decimal, int], ...]  # (partner, partner SKU, price, number in stock)


def stored_products() -> list[StoredProduct]:
    """Every product in the catalogue, oldest first."""
    from django.conf import settings
    from django.utils.html import strip_tags
    from oscar.core.loading import get_model

    products = get_model("catalogue", "Product").objects.order_by("pk").prefetch_related(
        "categories", "images", "stockrecords__partner")
    stored = []
    for product in products:
        text = strip_tags(product.description or "")
        stored.append(StoredProduct(
            title=product.title, upc=product.upc or "",
            description_lines=tuple(line.strip() for line in text.splitlines() if line.strip()),
            product_class=product.product_class.name if product.product_class else "",
            categories=tuple(sorted(category.name for category in product.categories.all())),
            images=tuple((Path(settings.MEDIA_ROOT) / image.original.name).read_bytes()
                         for image in sorted(product.images.all(), key=lambda image: image.display_order)),
            stock=tuple((record.partner.name, record.partner_sku, record.price, record.num_in_stock)
                        for record in product.stockrecords.all()),
        ))
    return stored
