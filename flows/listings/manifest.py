"""The batch's input: a manifest (``s3://`` or a local path; JSON Lines or CSV) or listing records
from an upstream flow, validated whole before any browser starts.

Relative photo paths in a manifest are resolved against the manifest's own location (its folder,
or its S3 prefix), so an ETL job can write ``photos/a.jpg`` next to ``manifest.jsonl``.
"""

from __future__ import annotations

import asyncio
import hashlib
import posixpath
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from webtask_core.errors import ConfigError
from webtask_core.storage import is_s3_uri, parse_s3_uri
from webtask_flows.listings.records import ListingRecord, ManifestError, RowProblem, parse_manifest, validate_listings
from webtask_flows.resources import resource_problems
from webtask_flows.settings import S3Source, resolve_s3_client

__all__ = ["BatchInput", "read_manifest", "load_batch_input", "artifact_slug"]

_MAX_MANIFEST_BYTES = 50 * 1024 * 1024


class BatchInput(BaseModel):
    """The validated listings of one batch and the rows that did not validate."""

    source: str  # the manifest URI/path, or "listings" for records passed in
    listings: list[ListingRecord]
    problems: list[RowProblem]
    digest: str  # of the manifest bytes or the records: same input, same digest

    @property
    def artifact_key(self) -> str:
        """The summary artifact's key: runs over the same manifest are versions of one artifact."""
        return artifact_slug("listing-batch", self.source)


def artifact_slug(prefix: str, name: str) -> str:
    """``<prefix>-<readable part of name>-<hash of name>``, matching ``^[a-z0-9-]*$``."""
    readable = re.sub(r"[^a-z0-9]+", "-", name.lower().removeprefix("s3://")).strip("-")[-40:].strip("-")
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return "-".join(part for part in (prefix, readable, digest) if part)


async def read_manifest(manifest: str, *, s3: S3Source = None) -> bytes:
    """The manifest's bytes; a missing file or object is a ConfigError naming it."""
    if is_s3_uri(manifest):
        location = parse_s3_uri(manifest)
        client = await resolve_s3_client(s3)
        from botocore.exceptions import ClientError

        try:
            response = await asyncio.to_thread(client.get_object, Bucket=location.bucket, Key=location.key)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in ("404", "NoSuchKey", "NotFound"):
                raise ConfigError("manifest", f"object not found: {manifest}") from None
            if code == "NoSuchBucket":
                raise ConfigError("manifest", f"bucket {location.bucket!r} does not exist ({manifest})") from None
            raise ConfigError("manifest", f"cannot read {manifest}: {code} {exc}") from exc
        if response.get("ContentLength", 0) > _MAX_MANIFEST_BYTES:
            raise ConfigError("manifest", f"{manifest} is larger than {_MAX_MANIFEST_BYTES} bytes")
        return await asyncio.to_thread(response["Body"].read)
    path = Path(manifest).expanduser()
    if not path.is_file():
        raise ConfigError("manifest", f"no manifest file at {manifest}")
    return await asyncio.to_thread(path.read_bytes)


def _photo_base(manifest: str) -> str:
    if is_s3_uri(manifest):
        location = parse_s3_uri(manifest)
        return f"s3://{location.bucket}/{posixpath.dirname(location.key)}".rstrip("/")
    return str(Path(manifest).expanduser().absolute().parent)


def _resolve_photo(photo: str, base: str) -> str:
    if is_s3_uri(photo) or Path(photo).expanduser().is_absolute():
        return photo
    if is_s3_uri(base):
        return "s3://" + posixpath.normpath(f"{base[len('s3://'):]}/{photo}")
    return str(Path(base) / photo)


def _with_resolved_photos(listing: ListingRecord, base: str) -> ListingRecord:
    photos = [_resolve_photo(photo, base) for photo in listing.photos]
    return listing if photos == listing.photos else listing.model_copy(update={"photos": photos})


async def load_batch_input(
    manifest: str | None,
    listings: Sequence[ListingRecord | dict[str, Any]] | None,
    *,
    skip_invalid: bool = False,
    s3: S3Source = None,
    check_photos: bool = True,
) -> BatchInput:
    """Read and validate the batch's listings, and (``check_photos``) that every photo they name is
    there. Without ``skip_invalid``, any invalid row raises :class:`ManifestError` listing every
    problem; with it, the problems are returned alongside."""
    if (manifest is None) == (listings is None):
        raise ConfigError("manifest", "give either a manifest (s3:// URI or path) or listings, not both or neither")
    if manifest is not None:
        if not isinstance(manifest, str) or not manifest.strip():
            raise ConfigError("manifest", "must be an s3:// URI or a file path")
        manifest = manifest.strip()
        data = await read_manifest(manifest, s3=s3)
        rows = parse_manifest(data, source=manifest)
        base = _photo_base(manifest)
        valid = [_with_resolved_photos(listing, base) for listing in rows.valid]
        source, digest = manifest, hashlib.sha256(data).hexdigest()[:16]
    else:
        assert listings is not None
        if not listings:
            raise ManifestError("listings", [RowProblem(row=0, field="(listings)", message="no listings given")])
        rows = validate_listings(list(listings))
        valid = rows.valid
        joined = "\n".join(f"{listing.sku}:{listing.content_hash()}" for listing in valid)
        source, digest = "listings", hashlib.sha256(joined.encode()).hexdigest()[:16]
    problems = rows.problems + (await _photo_problems(valid, rows.rows, s3=s3) if check_photos else [])
    if problems and not skip_invalid:
        raise ManifestError(source, sorted(problems, key=lambda problem: problem.row))
    bad_rows = {problem.row for problem in problems}
    valid = [listing for listing in valid if rows.rows.get(listing.sku) not in bad_rows]
    return BatchInput(source=source, listings=valid, problems=problems, digest=digest)


async def _photo_problems(listings: list[ListingRecord], row_of: dict[str, int], *, s3: S3Source) -> list[RowProblem]:
    """Every photo that is missing or unreadable, checked before any listing runs: a listing must
    not fail half way for a photo after others were published."""
    places = {f"{listing.sku}#{index}": (listing, index) for listing in listings for index in range(len(listing.photos))}
    found = await resource_problems({key: listing.photos[index] for key, (listing, index) in places.items()}, s3=s3)
    return [
        RowProblem(row=row_of.get(places[key][0].sku, 0), field=f"photos.{places[key][1]}", message=problem)
        for key, problem in found.items()
    ]
