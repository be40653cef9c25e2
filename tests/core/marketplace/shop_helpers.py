"""Driving the demo marketplace the way a person would, with Playwright directly."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page

from webtask_core.testing.marketplace import Marketplace


async def log_in(page: Page, shop: Marketplace, next_path: str = "/listings") -> None:
    await page.goto(shop.url(next_path))
    await page.get_by_label("Username").fill("demo")
    await page.get_by_label("Password").fill("demo-pass")
    await page.get_by_role("button", name="Log in").click()
    await page.wait_for_url(shop.url(next_path))


async def fill_listing_form(page: Page, *, sku: str, photos: list[Path], price: str = "45",
                            title: str = "Blue suede shoes", wait_for_previews: bool = True) -> None:
    """Fill /listings/new the way a person would (the page must already be open)."""
    await page.set_input_files("input[name=photos]", [str(path) for path in photos])
    await page.get_by_label("Title").fill(title)
    await page.get_by_label("Description").fill("Worn twice.\nSize 8, no scuffs.")
    await page.get_by_label("Category").select_option(label="Women's Shoes")
    await page.get_by_label("Like new").check()
    await page.get_by_label("Price (USD)").fill(price)
    await page.get_by_label("SKU").fill(sku)
    if wait_for_previews and photos:
        count = len(photos)
        await page.get_by_text(f"{count} photo{'' if count == 1 else 's'} ready").wait_for()


async def create_listing(page: Page, shop: Marketplace, *, sku: str, photos: list[Path]) -> str:
    """New listing → Next → Publish; returns the listing page URL."""
    await page.goto(shop.url("/listings/new"))
    await fill_listing_form(page, sku=sku, photos=photos)
    await page.get_by_role("button", name="Next").click()
    await page.get_by_role("heading", name="Review your listing").wait_for()
    await page.get_by_role("button", name="Publish").click()
    await page.get_by_text("Your listing is live!").wait_for()
    return page.url
