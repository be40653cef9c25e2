"""The ledger of completed listings: what makes a rerun of a batch skip the work already done.

One record per completed listing (or one published with a mismatch the read-back found), keyed by
the site (URL + user), the SKU and the listing's content hash, in a Prefect
:class:`~prefect.results.ResultStore` (JSON serializer) over a folder or an S3 prefix, so a rerun on
another machine sees it. A listing is recorded only after its run completed (or mismatched):
a crash before that means the listing runs again, and the task's SKU check finds what the crashed
run already published instead of creating it twice. A changed listing (new content hash) has no
record yet, so it runs again.

Locations (``ledger`` parameter, else ``WEBTASK_LEDGER``, else ``~/.webtask/ledger``):

- a folder path;
- ``s3://bucket/prefix`` (credentials: ``WEBTASK_AWS_CREDENTIALS_BLOCK`` or boto3's chain,
  endpoint ``WEBTASK_S3_ENDPOINT_URL``);
- ``block:<block-type-slug>/<name>``: any saved writable file-system block (``s3-bucket/...``).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from webtask_core.errors import ConfigError
from webtask_core.storage import default_session_folder, is_s3_uri
from webtask_flows.listings.models import ListingResult
from webtask_flows.listings.records import ListingRecord
from webtask_flows.settings import WebtaskSettings

__all__ = [
    "ListingLedger",
    "LedgerRecordError",
    "open_ledger",
    "site_namespace",
    "default_ledger_location",
    "LEDGER_ENV",
    "RECORDED_STATUSES",
]

LEDGER_ENV = "WEBTASK_LEDGER"
RECORDED_STATUSES = frozenset({"completed", "mismatch"})  # what the site has: never listed again
_BLOCK_PREFIX = "block:"


def default_ledger_location() -> str:
    return os.environ.get(LEDGER_ENV) or str(default_session_folder().parent / "ledger")


def site_namespace(site_url: str, username: str) -> str:
    """``<host>-<hash>``: one ledger section per site and account, readable in a file listing."""
    parts = urlsplit(site_url.strip())
    host = re.sub(r"[^a-z0-9]+", "-", (parts.netloc or parts.path).lower()).strip("-")[:40] or "site"
    digest = hashlib.sha256(f"{site_url.strip().rstrip('/')}\n{username}".encode()).hexdigest()[:10]
    return f"{host}-{digest}"


class LedgerRecordError(ValueError):
    """A record in the ledger is not a listing result (written by something else, or damaged)."""


class ListingLedger:
    """Completed listings of one site and account. Use :func:`open_ledger`."""

    def __init__(self, store: Any, *, namespace: str, location: str):
        self.store = store  # prefect.results.ResultStore
        self.namespace = namespace
        self.location = location

    def __repr__(self) -> str:
        return f"ListingLedger({self.location!r}, namespace={self.namespace!r})"

    def key(self, listing: ListingRecord) -> str:
        return f"{self.namespace}/{listing.sku}-{listing.content_hash()}.json"

    async def lookup(self, listing: ListingRecord) -> ListingResult | None:
        """The stored result of this exact listing (same SKU and content), marked ``skipped``.

        A record too damaged to read counts as absent (``aexists`` is False for it); one that reads
        but is not a listing result raises :class:`LedgerRecordError`, so the caller can say so.
        """
        key = self.key(listing)
        if not await self.store.aexists(key):
            return None
        record = await self.store.aread(key)
        try:
            stored = ListingResult.model_validate(record.result)
        except ValidationError as exc:
            raise LedgerRecordError(f"record {key} in {self.location} is not a listing result: {exc}") from exc
        return stored.model_copy(update={"skipped": True})

    async def record(self, listing: ListingRecord, result: ListingResult) -> None:
        """Remember a listing the site has: completed, or published with a mismatch (so a rerun never
        lists it a second time); anything else is not recorded, so it runs again."""
        if result.status not in RECORDED_STATUSES:
            raise ValueError(f"only completed or mismatched listings go in the ledger; {listing.sku} is {result.status}")
        stored = result.model_copy(update={"skipped": False, "content_hash": listing.content_hash()})
        await self.store.awrite(stored.model_dump(mode="json"), key=self.key(listing))
        # The SKU's last listed fields: what an approval rule compares with (listings/approvals.py).
        await self.store.awrite(listing.model_dump(mode="json"), key=self._last_key(listing.sku))

    def _last_key(self, sku: str) -> str:
        return f"{self.namespace}/_last/{sku}.json"

    async def last_listed(self, sku: str) -> dict[str, Any] | None:
        """The fields of the SKU's last completed listing (any content), or None."""
        key = self._last_key(sku)
        if not await self.store.aexists(key):
            return None
        record = await self.store.aread(key)
        return record.result if isinstance(record.result, dict) else None

    async def check_writable(self, batch_id: str) -> None:
        """Write and read back a marker, so an unreachable ledger fails the batch before any browser
        starts (rather than every listing silently counting as not done)."""
        from botocore.exceptions import BotoCoreError, ClientError

        key = f"{self.namespace}/_batches/{batch_id}.json"
        try:
            await self.store.awrite({"batch_id": batch_id}, key=key)
            await self.store.aread(key)
        except (OSError, ValueError, BotoCoreError, ClientError) as exc:
            raise ConfigError("ledger", f"cannot write to the ledger at {self.location}: {exc}") from exc


async def _s3_bucket_block(uri: str) -> Any:
    from prefect_aws import AwsCredentials
    from prefect_aws.client_parameters import AwsClientParameters
    from prefect_aws.s3 import S3Bucket

    bucket, _, prefix = uri[len("s3://"):].partition("/")
    if not bucket:
        raise ConfigError("ledger", f"{uri!r} must look like s3://bucket or s3://bucket/prefix")
    settings = WebtaskSettings.from_env()
    if settings.aws_credentials_block:
        credentials: AwsCredentials = await AwsCredentials.aload(settings.aws_credentials_block)
    else:
        credentials = AwsCredentials()
    if settings.s3_endpoint_url and not credentials.aws_client_parameters.endpoint_url:
        params = credentials.aws_client_parameters.model_dump()
        params["endpoint_url"] = settings.s3_endpoint_url
        credentials = credentials.model_copy(update={"aws_client_parameters": AwsClientParameters(**params)})
    return S3Bucket(bucket_name=bucket, bucket_folder=prefix.strip("/"), credentials=credentials)


async def _storage_for(location: str) -> Any:
    from prefect.blocks.core import Block
    from prefect.filesystems import LocalFileSystem, WritableFileSystem

    if location.startswith(_BLOCK_PREFIX):
        reference = location[len(_BLOCK_PREFIX):]
        try:
            block = await Block.aload(reference)
        except ValueError as exc:
            raise ConfigError("ledger", f"cannot load the block {reference!r}: {exc}") from exc
        if not isinstance(block, WritableFileSystem):
            raise ConfigError("ledger", f"block {reference!r} is a {type(block).__name__}, not a writable file system")
        return block
    if is_s3_uri(location):
        return await _s3_bucket_block(location)
    folder = Path(location).expanduser().absolute()
    if folder.exists() and not folder.is_dir():
        raise ConfigError("ledger", f"{str(folder)!r} exists and is not a folder")
    return LocalFileSystem(basepath=str(folder))


async def open_ledger(location: str | None, *, site_url: str, username: str) -> ListingLedger:
    from prefect.results import ResultStore
    from prefect.serializers import JSONSerializer

    where = location or default_ledger_location()
    storage = await _storage_for(where)
    # No in-memory cache: another process (a fan-out worker, a rerun) may write the same keys.
    store = ResultStore(result_storage=storage, serializer=JSONSerializer(), cache_result_in_memory=False)
    return ListingLedger(store, namespace=site_namespace(site_url, username), location=where)
