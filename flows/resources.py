"""Upload resources for a run: ``s3://bucket/key`` objects or local files, checked up front.

Every resource is validated before anything is downloaded, so a missing photo fails the run before
a browser starts, with an error naming the resource and the URI. S3 objects land in a per-run
temporary folder, one sub-folder per resource name, under a sanitised file name that cannot escape
the folder. The folder is removed when the run ends, whatever its outcome.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webtask_core.errors import ConfigError, ResourceError, TransientError
from webtask_core.scratch import owned_temp_folder, remove_stale_folders
from webtask_core.storage import S3Location, is_s3_uri, parse_s3_uri, path_inside, safe_file_name
from webtask_flows.settings import S3Source, resolve_s3_client

__all__ = ["fetch_resources", "resource_problems", "resource_folder", "downloaded_resources"]

# S3 requests in flight at once (HEAD checks and downloads).
_PARALLEL_REQUESTS = 4
_FOLDER_PREFIX = "webtask-resources-"


@contextmanager
def resource_folder(*, parent: str | Path | None = None) -> Iterator[Path]:
    """A fresh temporary folder, removed on exit whether the block succeeded or failed. Folders a
    killed run left behind are removed first (see webtask_core.scratch)."""
    remove_stale_folders(_FOLDER_PREFIX, parent=parent)
    folder = owned_temp_folder(_FOLDER_PREFIX, parent=parent)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=False)


def _error_code(exc: Any) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


async def _head_problem(client: Any, location: S3Location) -> str | None:
    """Why ``location`` cannot be downloaded, or None when it can."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        await asyncio.to_thread(client.head_object, Bucket=location.bucket, Key=location.key)
        return None
    except ClientError as exc:
        code = _error_code(exc)
        if code in ("403", "AccessDenied", "Forbidden"):
            return f"access denied to {location.uri}"
        if code not in ("404", "NoSuchKey", "NotFound", "NoSuchBucket"):
            return f"cannot read {location.uri}: {code} {exc}"
    except BotoCoreError as exc:  # connection refused, timeouts: the store, not the input
        raise TransientError(f"cannot reach S3 to check {location.uri}: {exc}") from exc
    # HEAD answers 404 for a missing key and a missing bucket alike; ask which one it is.
    try:
        await asyncio.to_thread(client.head_bucket, Bucket=location.bucket)
    except ClientError as exc:
        if _error_code(exc) in ("404", "NoSuchBucket", "NotFound"):
            return f"bucket {location.bucket!r} does not exist ({location.uri})"
        return f"cannot read bucket {location.bucket!r} ({location.uri}): {_error_code(exc)}"
    return f"object not found: {location.uri}"


def _local_problem(path: Path) -> str | None:
    if not path.exists():
        return f"local file {str(path)!r} does not exist"
    if not path.is_file():
        return f"{str(path)!r} is not a file"
    return None


def _destination(dest_dir: Path, resource_name: str, key: str, used: set[str]) -> Path:
    """``dest_dir/<safe resource name>/<safe file name>``, unique per resource, inside dest_dir."""
    folder = safe_file_name(resource_name, fallback="resource")
    candidate, n = folder, 1
    while candidate.lower() in used:  # "a b" and "a_b" would otherwise share a folder
        n += 1
        candidate = f"{folder}-{n}"
    used.add(candidate.lower())
    try:
        return path_inside(dest_dir, candidate, safe_file_name(key))
    except ConfigError as exc:
        raise ResourceError(resource_name, str(exc)) from exc


async def resource_problems(resources: Mapping[str, str | Path], *, s3: S3Source = None) -> dict[str, str]:
    """Name -> why it cannot be used, for every resource that is missing or unreadable (local files
    checked on disk, S3 objects with a HEAD request); empty when all are there. Nothing is downloaded.
    Raises :class:`TransientError` when S3 cannot be reached."""
    checked = await _check(resources, s3=s3)
    return checked.problems


@dataclass
class _Checked:
    """What checking a set of resources found (and the S3 client it made, for the downloads)."""

    locals: dict[str, Path] = field(default_factory=dict)
    remotes: dict[str, S3Location] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    client: Any = None


async def _check(resources: Mapping[str, str | Path], *, s3: S3Source) -> _Checked:
    checked = _Checked()
    for name, value in resources.items():
        if not isinstance(name, str) or not name.strip():
            raise ResourceError(str(name), "resource names must be non-empty strings")
        text = str(value)
        if is_s3_uri(text):
            try:
                checked.remotes[name] = parse_s3_uri(text)
            except ConfigError as exc:
                checked.problems[name] = exc.problem
        else:
            path = Path(text).expanduser().absolute()
            checked.locals[name] = path
            if problem := _local_problem(path):
                checked.problems[name] = problem

    checked.client = client = await resolve_s3_client(s3) if checked.remotes else None
    gate = asyncio.Semaphore(_PARALLEL_REQUESTS)

    async def head(name: str, location: S3Location) -> None:
        async with gate:
            if problem := await _head_problem(client, location):
                checked.problems[name] = problem

    await asyncio.gather(*(head(n, loc) for n, loc in checked.remotes.items()))
    return checked


async def fetch_resources(
    resources: Mapping[str, str | Path], dest_dir: str | Path, *, s3: S3Source = None
) -> dict[str, Path]:
    """Check every resource, then download the S3 ones into ``dest_dir``; returns name → file path.

    ``resources`` maps a descriptive name to ``s3://bucket/key`` or a local path. Local files are
    returned where they are (absolute). ``s3`` is a boto3 S3 client, an ``AwsCredentials`` block or
    its name, or None (``WEBTASK_AWS_CREDENTIALS_BLOCK`` / boto3 defaults, with
    ``WEBTASK_S3_ENDPOINT_URL``); no client is made when every resource is local.

    Raises :class:`ResourceError` naming the resource (and the URI) when anything is missing, before
    any download; :class:`TransientError` when S3 cannot be reached.
    """
    dest = Path(dest_dir)
    if not dest.is_dir():
        raise ConfigError("dest_dir", f"{str(dest)!r} is not an existing folder")
    checked = await _check(resources, s3=s3)
    if checked.problems:
        _raise_for(checked.problems)
    remotes, locals_, client = checked.remotes, checked.locals, checked.client
    gate = asyncio.Semaphore(_PARALLEL_REQUESTS)

    used: set[str] = set()
    targets = {name: _destination(dest, name, loc.key, used) for name, loc in remotes.items()}

    async def download(name: str, location: S3Location) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        target = targets[name]
        target.parent.mkdir(parents=True, exist_ok=True)
        async with gate:
            try:
                await asyncio.to_thread(client.download_file, location.bucket, location.key, str(target))
            except ClientError as exc:
                raise ResourceError(name, f"download of {location.uri} failed: {exc}") from exc
            except BotoCoreError as exc:
                raise TransientError(f"download of {location.uri} failed: {exc}") from exc

    # Wait for every download to finish (threads cannot be cancelled) before reporting a failure,
    # so nothing is still writing into the folder when the caller removes it.
    outcomes = await asyncio.gather(*(download(n, loc) for n, loc in remotes.items()), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    # Keep the caller's order.
    return {name: targets.get(name) or locals_[name] for name in resources}


def _raise_for(problems: dict[str, str]) -> None:
    (first_name, first_problem), *others = problems.items()
    if others:
        more = "; ".join(f"{name!r}: {problem}" for name, problem in others)
        first_problem = f"{first_problem} (also {more})"
    raise ResourceError(first_name, first_problem)


@asynccontextmanager
async def downloaded_resources(
    resources: Mapping[str, str | Path], *, s3: S3Source = None, parent: str | Path | None = None
) -> AsyncIterator[dict[str, Path]]:
    """``fetch_resources`` into a :func:`resource_folder` that is removed when the block exits."""
    with resource_folder(parent=parent) as folder:
        yield await fetch_resources(resources, folder, s3=s3)
