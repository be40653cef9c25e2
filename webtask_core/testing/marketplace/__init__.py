"""The demo marketplace: a small, real web app (log-in, SKU search, new listing with photos, confirm,
publish) that stands in for a Poshmark-like site in tests and demos.

    with Marketplace(users={"demo": "demo-pass"}) as shop:
        shop.base_url, shop.listings(), shop.listing_by_sku("ABC-1"), shop.request_log, shop.reset()
"""

from .app import RequestRecord
from .forms import CATEGORIES, CONDITIONS
from .server import Marketplace
from .store import ListingRecord, PhotoRecord

__all__ = ["Marketplace", "ListingRecord", "PhotoRecord", "RequestRecord", "CATEGORIES", "CONDITIONS"]
