"""MarketplaceListingPolicy over the real marketplace with the real browser layer, in a tiny loop
(policy_loop.TinyLoop)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from policy_loop import TinyLoop, listing_task, make_images

from webtask_core.browser import Browser, BrowserConfig
from webtask_core.testing.marketplace import Marketplace
from webtask_core.testing.policies import MarketplaceListingPolicy


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    launched = await Browser.launch(BrowserConfig(headless=True))
    yield launched
    await launched.close()


@pytest.fixture
def images(tmp_path: Path) -> dict[str, Path]:
    return make_images(tmp_path)


async def test_policy_lists_once_and_then_finds_the_listing(browser: Browser, images: dict[str, Path]) -> None:
    with Marketplace(users={"demo": "demo-pass"}) as shop:
        session = await browser.new_tab()
        loop = TinyLoop(session, images)
        await session.navigate(shop.url("/listings"))

        status, feedback = await loop.run(MarketplaceListingPolicy(), listing_task("BAG-7"))
        assert (status, feedback) == ("complete", f"Listed SKU BAG-7 at {shop.url('/listings/1')}.")
        [listing] = shop.listings()
        assert loop.output == {"listing_url": listing.url, "sku": "BAG-7"}
        assert (listing.title, listing.price, listing.category, listing.condition) == \
            ("Red leather bag", 89.5, "Bags", "Good")
        assert listing.description == "Roomy.\nBarely used."
        assert [photo.content for photo in listing.photos] == [path.read_bytes() for path in images.values()]
        assert [photo.filename for photo in listing.photos] == ["bag-front.jpg", "bag-side.png"]

        # A rerun of the same task finds the listing through the SKU search and creates nothing.
        rerun = TinyLoop(session, images)
        await session.navigate(shop.url("/help"))
        status, feedback = await rerun.run(MarketplaceListingPolicy(), listing_task("BAG-7"))
        assert status == "complete" and "already listed" in feedback
        assert rerun.output == {"listing_url": listing.url, "sku": "BAG-7"}
        assert len(shop.listings()) == 1
        publishes = [r for r in shop.request_log if r.method == "POST" and r.path.endswith("/publish")]
        assert len(publishes) == 1
        await session.close()


async def test_policy_starts_from_a_blank_page_and_can_be_told_to_abort(browser: Browser,
                                                                        images: dict[str, Path]) -> None:
    with Marketplace(users={"demo": "demo-pass"}) as shop:
        session = await browser.new_tab()
        status, reason = await TinyLoop(session, images).run(
            MarketplaceListingPolicy(abort_on_sku={"BAG-8"}), listing_task("BAG-8", site_url=shop.url("/listings"))
        )
        assert (status, reason) == ("abort", "told to abort the listing of SKU BAG-8")
        assert shop.request_log == []  # it never touched the site

        loop = TinyLoop(session, images)
        status, feedback = await loop.run(MarketplaceListingPolicy(login_only=True),
                                          listing_task("BAG-8", site_url=shop.url("/listings")))
        assert (status, feedback) == ("complete", "Logged in as demo.")
        assert [r.path for r in shop.request_log if r.method == "POST"] == ["/login"]
        await session.close()
