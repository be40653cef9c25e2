"""The listing upload application: Prefect flows that list a manifest's products on a marketplace,
built on the generic layer (:mod:`webtask_flows`) and never imported by it.

Records and manifests (``records``, ``manifest``), the task templates and their prompts
(``prompts/``), the ledger that makes reruns crash-safe (``ledger``), the shared site login
(``login``), one listing's run (``runs``), the ``batch-listing-upload`` flow (``batch``) with its
artifacts and events, the ETL example, and the offline demo (``demo``, ``services``, ``cli``).

Names are imported lazily, like the generic layer's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webtask_core.lazy_exports import lazy_exports

__all__ = [
    "batch_listing_upload",
    "BatchFailed",
    "batch_results",
    "ListingResult",
    "ListingRecord",
    "ManifestError",
    "load_batch_input",
    "listings_etl",
]

_WHERE = {
    "batch_listing_upload": "webtask_flows.listings.batch",
    "BatchFailed": "webtask_flows.listings.batch",
    "batch_results": "webtask_flows.listings.batch",
    "ListingResult": "webtask_flows.listings.models",
    "ListingRecord": "webtask_flows.listings.records",
    "ManifestError": "webtask_flows.listings.records",
    "load_batch_input": "webtask_flows.listings.manifest",
    "listings_etl": "webtask_flows.listings.etl_example",
}

if TYPE_CHECKING:
    from webtask_flows.listings.batch import BatchFailed, batch_listing_upload, batch_results
    from webtask_flows.listings.etl_example import listings_etl
    from webtask_flows.listings.manifest import load_batch_input
    from webtask_flows.listings.models import ListingResult
    from webtask_flows.listings.records import ListingRecord, ManifestError


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
