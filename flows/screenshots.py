"""Step screenshots as images with a URL, when a store for them is configured.

Without one, a step's markdown artifact carries its small JPEG inline (a data URI), which works
everywhere but stores every picture in Prefect's database. With ``WEBTASK_SCREENSHOT_STORE`` set to
``s3://bucket/prefix``, each step's picture is uploaded to
``<prefix>/<flow run id>/step-<N>.jpg`` and shown through a presigned URL: as Prefect's image
artifact on the step's task run, and linked from the step's markdown. The URL is valid for
``WEBTASK_SCREENSHOT_URL_DAYS`` days (default 7, the most S3's signatures allow); the object stays
in the bucket for as long as its lifecycle rules keep it.
"""

from __future__ import annotations

import asyncio
import base64
import os
from typing import Any

from webtask_core.errors import ConfigError
from webtask_core.storage import S3Location, is_s3_uri
from webtask_flows.settings import resolve_s3_client

__all__ = ["ScreenshotStore", "screenshot_store_from_env", "s3_store_from_uri"]

_MAX_DAYS = 7  # SigV4 presigned URLs last at most a week


class ScreenshotStore:
    """Uploads step pictures under an S3 prefix and hands out presigned URLs."""

    def __init__(self, location: S3Location, *, days: float = _MAX_DAYS, client: Any = None):
        if not 0 < days <= _MAX_DAYS:
            raise ConfigError("WEBTASK_SCREENSHOT_URL_DAYS", f"must be more than 0 and at most {_MAX_DAYS}, got {days!r}")
        self.location = location
        self.expires_s = int(days * 86400)
        self._client = client

    async def put(self, flow_run_id: str, index: int | str, jpeg_b64: str) -> str:
        """Upload step ``index``'s JPEG (base64, as the step record holds it) as ``step-<index>.jpg``,
        or a named picture (``final``) as ``<name>.jpg``; returns its URL."""
        name = f"step-{index}.jpg" if isinstance(index, int) else f"{index}.jpg"
        return await self.put_bytes(flow_run_id, name, base64.b64decode(jpeg_b64), content_type="image/jpeg")

    async def put_bytes(self, flow_run_id: str, name: str, body: bytes, *, content_type: str) -> str:
        """Upload ``body`` as ``<prefix>/<flow run id>/<name>``; returns a presigned URL to it."""
        client = self._client = self._client or await resolve_s3_client()
        key = "/".join(part for part in (self.location.key.strip("/"), flow_run_id, name) if part)
        await asyncio.to_thread(client.put_object, Bucket=self.location.bucket, Key=key, Body=body,
                                ContentType=content_type)
        return await asyncio.to_thread(
            client.generate_presigned_url, "get_object",
            Params={"Bucket": self.location.bucket, "Key": key}, ExpiresIn=self.expires_s,
        )


def s3_store_from_uri(where: str, *, setting: str) -> ScreenshotStore:
    """A store for ``s3://bucket/prefix`` (``setting`` names where the URI came from, for errors);
    presigned URLs last ``WEBTASK_SCREENSHOT_URL_DAYS`` days."""
    if not is_s3_uri(where):
        raise ConfigError(setting, f"must be an s3://bucket/prefix URI, got {where!r}")
    raw_days = (os.environ.get("WEBTASK_SCREENSHOT_URL_DAYS") or "").strip()
    try:
        days = float(raw_days) if raw_days else _MAX_DAYS
    except ValueError:
        raise ConfigError("WEBTASK_SCREENSHOT_URL_DAYS", f"must be a number of days, got {raw_days!r}") from None
    bucket, _, prefix = where[len("s3://"):].partition("/")
    if not bucket:
        raise ConfigError(setting, f"names no bucket: {where!r}")
    return ScreenshotStore(S3Location(bucket, prefix), days=days)


def screenshot_store_from_env() -> ScreenshotStore | None:
    """The store ``WEBTASK_SCREENSHOT_STORE`` names (an ``s3://`` prefix), or None."""
    where = (os.environ.get("WEBTASK_SCREENSHOT_STORE") or "").strip()
    return s3_store_from_uri(where, setting="WEBTASK_SCREENSHOT_STORE") if where else None
