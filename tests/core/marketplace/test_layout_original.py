"""The original layout's pages are byte-for-byte what they were before layouts could change."""

from __future__ import annotations

from site_pages import assert_golden_pages, walk_pages

from webtask_core.testing.marketplace import Layout, Marketplace


def test_every_page_of_the_original_layout_is_unchanged() -> None:
    with Marketplace(layout=Layout()) as shop:  # explicit: WEBTASK_SITE_LAYOUT may be set
        assert_golden_pages("original", walk_pages(shop))
