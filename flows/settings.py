"""Settings the flows read from the environment, and the S3 client they share.

| variable | meaning |
| --- | --- |
| ``WEBTASK_AWS_CREDENTIALS_BLOCK`` | name of a prefect-aws ``AwsCredentials`` block used for S3 |
| ``WEBTASK_S3_ENDPOINT_URL`` | S3-compatible endpoint (MinIO, R2, moto); boto3 also honours ``AWS_ENDPOINT_URL`` |
| ``WEBTASK_SESSION_STORE`` | where sessions live: a folder or ``s3://bucket/prefix/`` (default ``~/.webtask/sessions``) |
| ``WEBTASK_SCREENSHOT_STORE`` | ``s3://bucket/prefix`` for step pictures with presigned URLs (see webtask_flows.screenshots) |
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from pydantic import BaseModel

from webtask_core.errors import ConfigError
from webtask_core.storage import default_session_folder

__all__ = ["WebtaskSettings", "S3Source", "resolve_s3_client"]

# A boto3 S3 client, an ``AwsCredentials`` block, the name of one, or None (from settings).
S3Source = Any


class WebtaskSettings(BaseModel):
    aws_credentials_block: str | None = None
    s3_endpoint_url: str | None = None
    session_store: str = str(default_session_folder())

    @classmethod
    def from_env(cls) -> WebtaskSettings:
        return cls(
            aws_credentials_block=os.environ.get("WEBTASK_AWS_CREDENTIALS_BLOCK") or None,
            s3_endpoint_url=os.environ.get("WEBTASK_S3_ENDPOINT_URL") or None,
            session_store=os.environ.get("WEBTASK_SESSION_STORE") or str(default_session_folder()),
        )


def _is_boto3_client(value: Any) -> bool:
    return hasattr(value, "head_object") and hasattr(value, "meta")


async def resolve_s3_client(source: S3Source = None, *, settings: WebtaskSettings | None = None) -> Any:
    """A boto3 S3 client from ``source``.

    - a boto3 client is used as is;
    - an ``AwsCredentials`` block (or its name) gives its session and client parameters
      (``aws_client_parameters.endpoint_url`` included); ``WEBTASK_S3_ENDPOINT_URL`` fills in an
      endpoint the block does not set;
    - None uses ``WEBTASK_AWS_CREDENTIALS_BLOCK`` when set, else boto3's default credential chain.
    """
    from prefect_aws import AwsCredentials

    settings = settings or WebtaskSettings.from_env()
    if _is_boto3_client(source):
        return source
    if source is None and settings.aws_credentials_block:
        source = settings.aws_credentials_block
    if isinstance(source, str):
        source = await AwsCredentials.aload(source)
    if isinstance(source, AwsCredentials):
        params: dict[str, Any] = source.aws_client_parameters.get_params_override()
        if settings.s3_endpoint_url and not params.get("endpoint_url"):
            params["endpoint_url"] = settings.s3_endpoint_url
        credentials = source
        return await asyncio.to_thread(
            lambda: credentials.get_boto3_session().client("s3", **params)
        )
    if source is not None:
        raise ConfigError(
            "s3", f"expected a boto3 S3 client, an AwsCredentials block or its name, not {type(source).__name__}"
        )

    import boto3

    endpoint = settings.s3_endpoint_url  # None lets boto3 read AWS_ENDPOINT_URL itself
    return await asyncio.to_thread(lambda: boto3.session.Session().client("s3", endpoint_url=endpoint))
