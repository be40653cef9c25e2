"""The demo marketplace's listing written by hand in Playwright, as a careful engineer would: its own
waits (Playwright's auto-waiting and the page's own signals), no observation, no model. The yardstick
``replay.py`` measures a replayed listing against, on two paths:

- ``recorded``: the path the recorded script walks (log in, search the SKU so nothing is listed twice,
  open the form from the search page, fill, upload, wait for the previews, review, publish);
- ``shortest``: what a hand script needs at least (log in, open the form, fill, upload, publish).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import Browser as PlaywrightBrowser
from playwright.async_api import Page

__all__ = ["hand_listing", "HandPath"]

HandPath = Literal["recorded", "shortest"]


async def _log_in(page: Page, data: dict[str, Any], password: str) -> None:
    await page.goto(data["site_url"])
    await page.fill("#username", data["username"])
    await page.fill("#password", password)
    async with page.expect_navigation():
        await page.click("button[type=submit]")
    if await page.locator("#cookie-banner button").count():
        await page.click("#cookie-banner button")


async def _search_then_open_form(page: Page, sku: str) -> None:
    await page.fill("#sku-search", sku)
    async with page.expect_navigation():
        await page.click("form.search button")
    if await page.locator("table.listings").count():
        raise RuntimeError(f"{sku} is listed already")
    async with page.expect_navigation():
        await page.click("a[href='/listings/new']")


async def _fill_and_publish(page: Page, data: dict[str, Any], photos: list[Path]) -> None:
    await page.fill("#title", data["title"])
    await page.fill("#description", data["description"])
    await page.select_option("#category", label=data["category"])
    await page.check(f"label.radio:has-text('{data['condition']}') input")
    await page.fill("#price", data["price"])
    await page.fill("#sku", data["sku"])
    count = len(data["photos"])
    await page.set_input_files("#photos", [str(path) for path in photos[:count]])
    await page.wait_for_selector(f"text={count} photo{'' if count == 1 else 's'} ready")
    async with page.expect_navigation():
        await page.click("#listing-form button[type=submit]")
    async with page.expect_navigation():
        await page.click("form.actions button")


async def hand_listing(browser: PlaywrightBrowser, photos: list[Path], data: dict[str, Any], *, password: str,
                       path: HandPath = "recorded") -> dict[str, Any]:
    """One listing by hand in a fresh context of ``browser``; the row ``replay.py`` reports."""
    started = time.perf_counter()
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = await context.new_page()
        await _log_in(page, data, password)
        if path == "recorded":
            await _search_then_open_form(page, data["sku"])
        else:
            await page.goto(data["site_url"].rstrip("/") + "/new")
        await _fill_and_publish(page, data, photos)
        url = page.url
    finally:
        await context.close()
    return {"sku": data["sku"], "status": "completed" if "/listings/" in url else "failed",
            "seconds": time.perf_counter() - started, "model_calls": 0, "replay": f"hand ({path})", "feedback": url}
