"""The demo marketplace: a small, real web app (log-in, SKU search, new listing with photos, confirm,
publish) that stands in for a Poshmark-like site in tests and demos.

    with Marketplace(users={"demo": "demo-pass"}) as shop:
        shop.base_url, shop.listings(), shop.listing_by_sku("ABC-1"), shop.request_log, shop.reset()
        shop.set_layout(Layout.parse("renamed_field,extra_step"))  # a redesign, between listings
        shop.set_alterations(Alterations.parse("vat,quantity,title"))  # the site changes what you typed

It runs on FastAPI and uvicorn: the ``demo`` extra (``pip install 'prefect-webtask[demo]'``).
"""

from webtask_core.testing.demo_extra import require_demo_extra

require_demo_extra("the demo marketplace (webtask_core.testing.marketplace)")

from .alterations import Alterations  # noqa: E402 - after the check, so a missing package names the extra
from .app import RequestRecord  # noqa: E402
from .forms import CATEGORIES, CONDITIONS  # noqa: E402
from .layout import Layout  # noqa: E402
from .server import Marketplace  # noqa: E402
from .store import ListingRecord, PhotoRecord  # noqa: E402

__all__ = ["Marketplace", "Layout", "Alterations", "ListingRecord", "PhotoRecord", "RequestRecord", "CATEGORIES", "CONDITIONS"]
