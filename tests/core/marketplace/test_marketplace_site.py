"""The demo marketplace through a real Chromium: log-in, listing with photos, validation, SKU search,
cookie banner, delayed previews."""

from __future__ import annotations

import hashlib
from pathlib import Path

from playwright.async_api import Browser, Page, expect
from shop_helpers import create_listing, fill_listing_form, log_in

from webtask_core.testing.marketplace import Marketplace


async def test_pages_redirect_to_login_and_back(page: Page, shop: Marketplace) -> None:
    await page.goto(shop.url("/listings/new"))
    assert page.url == shop.url("/login?next=/listings/new")

    await page.get_by_label("Username").fill("demo")
    await page.get_by_label("Password").fill("wrong")
    await page.get_by_role("button", name="Log in").click()
    await expect(page.get_by_role("alert")).to_have_text("Incorrect username or password.")
    await expect(page.get_by_label("Username")).to_have_value("demo")

    await page.get_by_label("Password").fill("demo-pass")
    await page.get_by_role("button", name="Log in").click()
    await page.wait_for_url(shop.url("/listings/new"))
    await expect(page.get_by_role("heading", name="New listing")).to_be_visible()
    await expect(page.get_by_text("Signed in as demo")).to_be_visible()


async def test_create_listing_with_two_photos(logged_in: Page, shop: Marketplace, photos: list[Path]) -> None:
    page = logged_in
    await page.goto(shop.url("/listings/new"))
    await fill_listing_form(page, sku="SHOE-001", photos=photos, price="$1,045.50")
    await page.get_by_role("button", name="Next").click()

    await expect(page.get_by_role("heading", name="Review your listing")).to_be_visible()
    summary = page.locator("dl.summary")
    await expect(summary).to_contain_text("Blue suede shoes")
    await expect(summary).to_contain_text("$1,045.50")
    await expect(summary).to_contain_text("Women's Shoes")
    await expect(summary).to_contain_text("Like new")
    await expect(summary).to_contain_text("SHOE-001")
    assert shop.listings() == []  # nothing is published before "Publish"

    await page.get_by_role("button", name="Publish").click()
    await expect(page.get_by_text("Your listing is live!")).to_be_visible()
    images = page.locator("article img")
    await expect(images).to_have_count(2)
    await page.wait_for_function("() => [...document.querySelectorAll('article img')].every(img => img.complete)")
    loaded = await images.evaluate_all("imgs => imgs.map(img => img.naturalWidth)")
    assert loaded == [64, 40]

    [listing] = shop.listings()
    assert page.url == listing.url + "?published=1"
    assert (listing.sku, listing.title, listing.price) == ("SHOE-001", "Blue suede shoes", 1045.5)
    assert (listing.category, listing.condition) == ("Women's Shoes", "Like new")
    assert listing.description == "Worn twice.\nSize 8, no scuffs."
    assert [photo.filename for photo in listing.photos] == ["front.jpg", "back side.png"]
    for photo, source in zip(listing.photos, photos):
        assert photo.content == source.read_bytes()
        assert photo.sha256 == hashlib.sha256(source.read_bytes()).hexdigest()


async def test_invalid_price_is_reported_next_to_the_field(logged_in: Page, shop: Marketplace,
                                                           photos: list[Path]) -> None:
    page = logged_in
    await page.goto(shop.url("/listings/new"))
    for bad_price, message in [("-5", "Price must be greater than $0."),
                               ("forty", "Price must be a number, like 45 or 45.99."),
                               ("", "Enter a price.")]:
        await fill_listing_form(page, sku="SHOE-002", photos=photos, price=bad_price)
        await page.get_by_role("button", name="Next").click()
        await expect(page.get_by_role("alert")).to_have_text("Please fix the errors below.")
        price = page.get_by_label("Price (USD)")
        await expect(price).to_have_attribute("aria-invalid", "true")
        await expect(page.locator("#price-error")).to_have_text(f"Error: {message}")
        # Everything typed is kept (files cannot be, as on real sites).
        await expect(price).to_have_value(bad_price)
        await expect(page.get_by_label("Title")).to_have_value("Blue suede shoes")
        await expect(page.get_by_label("Category")).to_have_value("womens-shoes")
        await expect(page.get_by_label("Like new")).to_be_checked()
        await expect(page.get_by_label("SKU")).to_have_value("SHOE-002")
    assert shop.listings() == []


async def test_non_image_and_missing_photos_are_rejected(logged_in: Page, shop: Marketplace,
                                                         tmp_path: Path) -> None:
    page = logged_in
    fake = tmp_path / "notes.jpg"
    fake.write_text("this is not a picture")
    await page.goto(shop.url("/listings/new"))
    await fill_listing_form(page, sku="SHOE-003", photos=[fake])
    await page.get_by_role("button", name="Next").click()
    await expect(page.locator("#photos-error")).to_have_text(
        "Error: “notes.jpg” is not an image. Add JPEG, PNG, GIF or WebP photos."
    )

    await fill_listing_form(page, sku="SHOE-003", photos=[])
    await page.get_by_role("button", name="Next").click()
    await expect(page.locator("#photos-error")).to_have_text("Error: Add at least one photo.")
    assert shop.listings() == []


async def test_duplicate_sku_is_allowed_but_visible_in_search(logged_in: Page, shop: Marketplace,
                                                              photos: list[Path]) -> None:
    page = logged_in
    first = await create_listing(page, shop, sku="DUP-1", photos=photos[:1])
    second = await create_listing(page, shop, sku="DUP-1", photos=photos[1:])
    assert first != second
    assert len(shop.listing_by_sku("dup-1 ")) == 2

    await page.goto(shop.url("/listings"))
    await page.get_by_label("Search by SKU").fill("dup-1")
    await page.get_by_role("button", name="Search").click()
    await page.wait_for_url(shop.url("/listings?sku=dup-1"))
    await expect(page.get_by_role("status")).to_have_text("2 listings with SKU “dup-1”")
    await expect(page.locator("table.listings tbody tr")).to_have_count(2)

    await page.goto(shop.url("/listings?sku=OTHER-9"))
    await expect(page.get_by_role("status")).to_have_text("No listings with SKU “OTHER-9”.")
    await expect(page.locator("table.listings")).to_have_count(0)


async def test_cookie_banner_until_accepted(logged_in: Page, shop: Marketplace) -> None:
    page = logged_in
    banner = page.get_by_role("region", name="Cookie consent")
    await expect(banner).to_be_visible()
    box = await banner.bounding_box()
    assert box is not None and box["y"] + box["height"] == 800  # fixed to the bottom of the viewport

    await banner.get_by_role("button", name="Accept").click()
    await expect(banner).to_have_count(0)
    await page.reload()
    await expect(page.get_by_role("heading", name="My listings")).to_be_visible()
    await expect(banner).to_have_count(0)
    cookies = {cookie["name"]: cookie["value"] for cookie in await page.context.cookies()}
    assert cookies["cookie_consent"] == "accepted"


async def test_photo_previews_render_after_a_delay(chromium: Browser, photos: list[Path]) -> None:
    with Marketplace(users={"demo": "demo-pass"}, preview_delay_ms=1500) as slow_shop:
        context = await chromium.new_context()
        page = await context.new_page()
        await log_in(page, slow_shop, "/listings/new")
        await page.set_input_files("input[name=photos]", [str(path) for path in photos])

        status = page.locator("#photo-status")
        previews = page.locator("#photo-previews img")
        await expect(status).to_have_text("Preparing 2 photos…")
        assert await previews.count() == 0
        await expect(page.get_by_role("button", name="Next")).to_be_disabled()

        await expect(status).to_have_text("2 photos ready", timeout=5000)
        await expect(previews).to_have_count(2)
        await expect(page.get_by_role("button", name="Next")).to_be_enabled()
        await context.close()


async def test_saved_browser_state_stays_logged_in(chromium: Browser, logged_in: Page, shop: Marketplace) -> None:
    state = await logged_in.context.storage_state()
    context = await chromium.new_context(storage_state=state)
    page = await context.new_page()
    await page.goto(shop.url("/listings/new"))
    assert page.url == shop.url("/listings/new")

    shop.reset(sign_out=True)
    await page.goto(shop.url("/listings/new"))
    assert page.url == shop.url("/login?next=/listings/new")
    await context.close()
