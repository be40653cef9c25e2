"""Every page of the demo marketplace fetched over HTTP (no browser), with the run's variable parts
(draft ids, dates) masked, to compare a layout's HTML against golden files."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import httpx
from PIL import Image

from webtask_core.testing.marketplace import Marketplace

GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("WEBTASK_UPDATE_GOLDEN") == "1"  # WEBTASK_UPDATE_GOLDEN=1 pytest ... rewrites them
_DRAFT_ID = re.compile(r"/listings/drafts/[0-9a-f]{16}")
_WHEN = re.compile(r"[A-Z][a-z]{2} \d{2}, \d{4} \d{2}:\d{2} UTC")


def mask(text: str) -> str:
    return _WHEN.sub("DATE", _DRAFT_ID.sub("/listings/drafts/DRAFT", text))


def jpeg_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 24), (200, 30, 90)).save(buffer, "JPEG")
    return buffer.getvalue()


def listing_fields(sku: str, title_field: str = "title") -> dict[str, str]:
    return {title_field: "Blue suede shoes", "description": "Worn twice.", "price": "45",
            "category": "womens-shoes", "condition": "like-new", "sku": sku}


def logged_in_client(shop: Marketplace) -> httpx.Client:
    """A logged-in client, to use in a `with` block."""
    client = httpx.Client(base_url=shop.base_url, follow_redirects=True)
    with httpx.Client(base_url=shop.base_url) as login:
        response = login.post("/login", data={"username": "demo", "password": "demo-pass"})
    assert response.status_code == 303, response.text
    client.cookies.update(response.cookies)
    return client


def walk_pages(shop: Marketplace) -> dict[str, str]:
    """name -> masked body of each page a person meets listing one item (and the static files)."""
    pages: dict[str, str] = {}
    with httpx.Client(base_url=shop.base_url, follow_redirects=True) as anonymous:
        pages["login"] = anonymous.get("/login").text
        pages["login-rejected"] = anonymous.post("/login", data={"username": "demo", "password": "no"}).text
        for name in ("site.css", "photos.js", "cookies.js"):
            pages[name] = anonymous.get(f"/static/{name}").text
    with logged_in_client(shop) as client:
        pages["listings-empty"] = client.get("/listings").text
        pages["search-none"] = client.get("/listings", params={"sku": "GOLD-1"}).text
        pages["new"] = client.get("/listings/new").text
        rejected = listing_fields("GOLD-1") | {"price": "abc"}
        pages["new-rejected"] = client.post("/listings/new", data=rejected).text
        draft = client.post("/listings/new", data=listing_fields("GOLD-1"),
                            files=[("photos", ("front.jpg", jpeg_bytes(), "image/jpeg"))])
        pages["draft"] = draft.text
        pages["listing-published"] = client.post(f"{draft.url.path}/publish").text
        pages["search-found"] = client.get("/listings", params={"sku": "GOLD-1"}).text
        pages["help"] = client.get("/help").text
        pages["draft-missing"] = client.get("/listings/drafts/0000000000000000").text
    return {name: mask(body) for name, body in pages.items()}


def _file_name(page: str) -> str:
    return page if "." in page else f"{page}.html"  # static files keep their own extension


def assert_golden_pages(folder: str, pages: dict[str, str]) -> None:
    root = GOLDEN / folder
    if UPDATE_GOLDEN:
        root.mkdir(parents=True, exist_ok=True)
        for name, body in pages.items():
            (root / _file_name(name)).write_text(body, encoding="utf-8")
    assert root.is_dir(), f"missing golden folder {root}; run with WEBTASK_UPDATE_GOLDEN=1 to create it"
    assert sorted(path.name for path in root.iterdir()) == sorted(map(_file_name, pages))
    for name, body in pages.items():
        assert body == (root / _file_name(name)).read_text(encoding="utf-8"), f"{name} differs in golden/{folder}"
