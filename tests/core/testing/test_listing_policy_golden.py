"""The site's unchanged layout and the scripted model on it stay exactly as they were: every page
the model sees and every reply it gives, for a listing and its rerun (golden transcript)."""

from __future__ import annotations

from pathlib import Path

from policy_loop import TinyLoop, listing_task, make_images
from run_transcript import assert_golden, transcript

from webtask_core.browser import Browser
from webtask_core.testing.marketplace import Marketplace
from webtask_core.testing.policies import MarketplaceListingPolicy


async def test_listing_run_on_the_original_layout_is_unchanged(browser: Browser, tmp_path: Path) -> None:
    images = make_images(tmp_path)
    with Marketplace(users={"demo": "demo-pass"}) as shop:
        tab = await browser.new_tab()
        await tab.navigate(shop.url("/listings"))
        first = TinyLoop(tab, images)
        assert (await first.run(MarketplaceListingPolicy(), listing_task("BAG-7")))[0] == "complete"
        await tab.navigate(shop.url("/help"))
        rerun = TinyLoop(tab, images)
        assert (await rerun.run(MarketplaceListingPolicy(), listing_task("BAG-7")))[0] == "complete"
        await tab.close()
        assert_golden("listing_run_original.txt", transcript(first, shop.base_url))
        assert_golden("listing_rerun_original.txt", transcript(rerun, shop.base_url))
