"""An example upstream flow: a nightly ETL job that writes a listing manifest and its photos to S3,
then hands them to ``batch-listing-upload``.

Two ways to chain them (deployments/README.md, "ETL chaining"):

- a subflow call: ``listings_etl(..., run_batch=True, site_url=..., username=...)`` calls the batch
  when the manifest is written, in the same process, and fails when the batch does;
- a deployment trigger: the ``batch-listing-upload/after-etl`` deployment in prefect.yaml starts
  when a ``listings-etl`` flow run completes, with the same manifest URI as its parameter.

The "extract" here makes up a small catalogue with drawn product photos (Pillow), so the example
runs anywhere; a real job would read its products from a database or an export.
"""

from __future__ import annotations

import asyncio
import io
import json
import posixpath
import random
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from webtask_core.errors import ConfigError
from webtask_core.storage import parse_s3_uri
from webtask_flows.listings.records import validate_listings
from webtask_flows.run_end import RUN_END_HOOKS
from webtask_flows.settings import S3Source, resolve_s3_client

__all__ = ["listings_etl", "sample_products", "product_photo", "PRODUCTS"]

# (title, category, condition, colour) of the made-up catalogue; categories match the demo shop.
PRODUCTS: tuple[tuple[str, str, str, tuple[int, int, int]], ...] = (
    ("Red leather ankle boots", "Women's Shoes", "Like new", (178, 34, 52)),
    ("Canvas weekender bag", "Bags", "Good", (196, 164, 112)),
    ("Silver hoop earrings", "Jewelry", "New with tags", (192, 192, 200)),
    ("Denim trucker jacket", "Men's Jackets", "Good", (60, 90, 150)),
    ("Ceramic table lamp", "Home", "Fair", (90, 150, 120)),
    ("Wooden train set", "Toys", "Like new", (200, 140, 60)),
    ("Trail running shoes", "Sports & Outdoors", "Good", (40, 160, 200)),
    ("Linen summer dress", "Women's Dresses", "New with tags", (230, 200, 210)),
)


def product_photo(colour: tuple[int, int, int], label: str, *, variant: int = 0, size: int = 320) -> bytes:
    """A small JPEG "product photo": a coloured object on a plain background, with its label."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (size, size), (245, 243, 238))
    draw = ImageDraw.Draw(image)
    inset = size // 6 + 12 * variant
    shape = (inset, inset, size - inset, size - inset)
    if variant % 2:
        draw.ellipse(shape, fill=colour, outline=(40, 40, 40), width=3)
    else:
        draw.rounded_rectangle(shape, radius=size // 10, fill=colour, outline=(40, 40, 40), width=3)
    draw.text((12, size - 24), f"{label} #{variant + 1}", fill=(30, 30, 30))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=85)
    return buffer.getvalue()


def sample_products(count: int, *, prefix: str = "DEMO", seed: int = 7) -> list[tuple[dict[str, Any], list[bytes]]]:
    """``count`` manifest rows (photos named ``photos/<sku>-<n>.jpg``) with their photo bytes."""
    if not 1 <= count <= 500:
        raise ConfigError("count", f"must be between 1 and 500, got {count}")
    rng = random.Random(seed)
    made = []
    for number in range(1, count + 1):
        title, category, condition, colour = PRODUCTS[(number - 1) % len(PRODUCTS)]
        sku = f"{prefix}-{number:03d}"
        photos = [product_photo(colour, sku, variant=v) for v in range(1 + number % 2)]
        row = {
            "sku": sku,
            "title": title if number <= len(PRODUCTS) else f"{title} ({number})",
            "description": f"{title}, from our catalogue.\nShips within two days.",
            "price": f"{rng.randint(12, 180)}.{rng.choice(['00', '50', '99'])}",
            "category": category,
            "condition": condition,
            "photos": [f"photos/{sku}-{n}.jpg" for n in range(1, len(photos) + 1)],
        }
        made.append((row, photos))
    return made


@task(cache_policy=NO_CACHE)
def extract_products(count: int, prefix: str) -> list[tuple[dict[str, Any], list[bytes]]]:
    return sample_products(count, prefix=prefix)


@task(cache_policy=NO_CACHE)
async def write_manifest(manifest_uri: str, products: list[tuple[dict[str, Any], list[bytes]]],
                         s3: S3Source = None) -> str:
    """Photos next to the manifest (``photos/...``, relative paths in the rows), then the manifest
    itself last, so a batch never sees a manifest whose photos are not there yet."""
    location = parse_s3_uri(manifest_uri)
    folder = posixpath.dirname(location.key)
    rows = [row for row, _ in products]
    checked = validate_listings(rows)  # the same check the batch makes: fail here, not tonight
    if checked.problems:
        raise ConfigError("products", "; ".join(str(p) for p in checked.problems))
    client = await resolve_s3_client(s3)
    uploads = [
        asyncio.to_thread(client.put_object, Bucket=location.bucket, Key=posixpath.join(folder, relative),
                          Body=content, ContentType="image/jpeg")
        for row, photos in products for relative, content in zip(row["photos"], photos)
    ]
    await asyncio.gather(*uploads)
    body = "".join(json.dumps(row) + "\n" for row in rows).encode()
    await asyncio.to_thread(client.put_object, Bucket=location.bucket, Key=location.key, Body=body,
                            ContentType="application/x-ndjson")
    return manifest_uri


@flow(name="listings-etl", on_completion=RUN_END_HOOKS, on_failure=RUN_END_HOOKS, on_crashed=RUN_END_HOOKS,
      on_cancellation=RUN_END_HOOKS)
async def listings_etl(
    manifest_uri: str,
    count: int = 4,
    sku_prefix: str = "DEMO",
    run_batch: bool = False,
    site_url: str | None = None,
    username: str | None = None,
    password_secret: str = "shop-password",
    batch_options: dict[str, Any] | None = None,
) -> str:
    """Write ``count`` listings and their photos to ``manifest_uri`` (``s3://bucket/.../x.jsonl``);
    with ``run_batch``, upload them at once with ``batch-listing-upload`` (``batch_options`` are
    its other parameters). Returns the manifest URI."""
    logger = get_run_logger()
    if run_batch and not (site_url and username):
        raise ConfigError("run_batch", "needs site_url and username for the batch")
    products = extract_products(count, sku_prefix)
    await write_manifest(manifest_uri, products)
    logger.info("Wrote %d listing(s) and their photos: %s", len(products), manifest_uri)
    if run_batch:
        from webtask_flows.listings.batch import batch_listing_upload

        await batch_listing_upload(manifest=manifest_uri, site_url=site_url, username=username,
                                   password_secret=password_secret, **(batch_options or {}))
    return manifest_uri
