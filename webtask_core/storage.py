"""Storage helpers that do not depend on Prefect: S3 URIs, safe file names, and the session store.

The session store keeps, per session key, one JSON document: the TaskRecord, the browser storage
state (cookies, local storage), the last URL, and when it was saved. Two backends: a local folder
(atomic writes, owner-only permissions, because cookies are secrets) and an S3 prefix. Both are
synchronous; async callers run them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from webtask_core.errors import ConfigError, SessionFormatError

if TYPE_CHECKING:
    from webtask_core.record import TaskRecord

_Document = TypeVar("_Document", bound=BaseModel)

__all__ = [
    "S3Location",
    "parse_s3_uri",
    "is_s3_uri",
    "safe_file_name",
    "path_inside",
    "SESSION_SCHEMA_VERSION",
    "SESSION_KEY_PATTERN",
    "validate_session_key",
    "SavedSession",
    "make_saved_session",
    "parse_versioned_document",
    "SessionStore",
    "LocalSessionStore",
    "S3SessionStore",
    "open_session_store",
    "default_session_folder",
]

# --------------------------------------------------------------------------------------------------
# S3 URIs and safe names


class S3Location(NamedTuple):
    bucket: str
    key: str

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.key}"


def is_s3_uri(value: str) -> bool:
    return value.startswith("s3://")


def parse_s3_uri(uri: str) -> S3Location:
    """Split ``s3://bucket/key`` exactly as written (the key keeps slashes, dots and spaces)."""
    if not is_s3_uri(uri):
        raise ConfigError("s3 uri", f"{uri!r} does not start with 's3://'")
    bucket, sep, key = uri[len("s3://") :].partition("/")
    if not bucket or not sep or not key:
        raise ConfigError("s3 uri", f"{uri!r} must look like s3://bucket/key")
    return S3Location(bucket, key)


_UNSAFE_CHARS = re.compile(r"[^\w.\-]+")
_MAX_NAME_CHARS = 120


def safe_file_name(raw: str, *, fallback: str = "file") -> str:
    """A flat file name made from the last path segment of ``raw``.

    Keeps letters (any script), digits, ``.``, ``-`` and ``_``; anything else becomes ``_``. Leading
    dots go, so the result is never ``.``, ``..`` or a hidden file; it never contains a separator.
    """
    segments = [s for s in re.split(r"[\\/]+", raw) if s not in ("", ".", "..")]
    name = unicodedata.normalize("NFC", segments[-1] if segments else "")
    name = _UNSAFE_CHARS.sub("_", name).lstrip(".")
    if not name.strip("_"):
        name = fallback
    if len(name) > _MAX_NAME_CHARS:
        stem, dot, ext = name.rpartition(".")
        ext = ext[:16] if dot and stem else ""
        name = name[: _MAX_NAME_CHARS - len(ext) - 1] + ("." + ext if ext else "")
    return name


def path_inside(folder: Path, *parts: str) -> Path:
    """``folder / parts`` after checking that the resolved path stays inside ``folder``."""
    root = folder.resolve()
    candidate = root.joinpath(*parts).resolve()
    if candidate == root or not candidate.is_relative_to(root):
        raise ConfigError("path", f"{'/'.join(parts)!r} would escape {str(root)!r}")
    return candidate


# --------------------------------------------------------------------------------------------------
# Session documents

SESSION_SCHEMA_VERSION = 1
SESSION_KEY_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$")


def validate_session_key(session_key: str) -> str:
    if not isinstance(session_key, str) or not SESSION_KEY_PATTERN.fullmatch(session_key):
        raise ConfigError(
            "session_key",
            f"{session_key!r} must be 1-128 characters of letters, digits, '_', '.', '-' "
            "and start with a letter or digit",
        )
    return session_key


class SavedSession(BaseModel):
    """What the store keeps per session key. ``session`` is the TaskRecord as a JSON object."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SESSION_SCHEMA_VERSION
    session: dict[str, Any]
    storage_state: dict[str, Any] | None = None
    last_url: str | None = None
    saved_at: datetime

    @property
    def session_json(self) -> str:
        """The TaskRecord as a JSON string, for ``TaskRecord.from_json``."""
        return json.dumps(self.session)

    def worker_session(self) -> TaskRecord:
        """The stored TaskRecord; ``SessionFormatError`` when it is corrupt or of another version."""
        from webtask_core.record import TaskRecord

        return TaskRecord.from_json(self.session_json)


def _session_as_dict(session: Any) -> dict[str, Any]:
    """Accept a dict, a JSON string, or an object with ``to_json()`` (the TaskRecord)."""
    if hasattr(session, "to_json"):
        session = session.to_json()
    if isinstance(session, (str, bytes)):
        session = json.loads(session)
    if not isinstance(session, Mapping):
        raise ConfigError("session", f"expected a JSON object, got {type(session).__name__}")
    return dict(session)


def make_saved_session(
    session: Any,
    *,
    storage_state: Mapping[str, Any] | None = None,
    last_url: str | None = None,
) -> SavedSession:
    return SavedSession(
        session=_session_as_dict(session),
        storage_state=dict(storage_state) if storage_state is not None else None,
        last_url=last_url,
        saved_at=datetime.now(UTC),
    )


def _parse_document(raw: bytes, *, session_key: str, location: str) -> SavedSession:
    return parse_versioned_document(
        raw, SavedSession, version=SESSION_SCHEMA_VERSION, where=f"session {session_key!r} at {location}",
        advice="Move the file away (or delete it) to start a fresh session.")


def parse_versioned_document(raw: bytes, model: type[_Document], *, version: int, where: str, advice: str) -> _Document:
    """``raw`` JSON as ``model``, whose ``schema_version`` must be ``version``; else a
    :class:`SessionFormatError` that starts with ``where`` (and, for another version, ends with ``advice``)."""
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SessionFormatError(f"{where} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise SessionFormatError(f"{where} is not a JSON object")
    found = data.get("schema_version")
    if found != version:
        raise SessionFormatError(f"{where} has schema_version {found!r}; this version of webtask reads {version}. {advice}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise SessionFormatError(f"{where} is malformed: {exc}") from exc


# --------------------------------------------------------------------------------------------------
# Backends


class SessionStore(ABC):
    """Load and save :class:`SavedSession` documents by session key."""

    @abstractmethod
    def location(self, session_key: str) -> str:
        """Where the document for ``session_key`` lives (a path or an s3:// URI)."""

    @abstractmethod
    def _read(self, session_key: str) -> bytes | None: ...

    @abstractmethod
    def _write(self, session_key: str, data: bytes) -> None: ...

    @abstractmethod
    def delete(self, session_key: str) -> bool:
        """Remove the document; False when there was none."""

    @property
    @abstractmethod
    def where(self) -> str:
        """The folder or ``s3://bucket/prefix`` the documents are in."""

    @abstractmethod
    def keys(self) -> list[str]:
        """The keys that have a document, sorted."""

    @abstractmethod
    def child(self, name: str) -> SessionStore:
        """A store of the same kind in a sub-folder (sub-prefix) ``name`` of this one (replay
        scripts live in ``scripts/`` beside the sessions)."""

    def read_bytes(self, key: str) -> bytes | None:
        """The raw document of ``key`` (None: none), for stores of other documents than sessions."""
        validate_session_key(key)
        return self._read(key)

    def write_bytes(self, key: str, data: bytes) -> None:
        validate_session_key(key)
        self._write(key, data)

    def load(self, session_key: str) -> SavedSession | None:
        """The stored document, or None when the key has none. A corrupt or incompatible document
        raises :class:`SessionFormatError` naming the key and location, and is left untouched."""
        validate_session_key(session_key)
        raw = self._read(session_key)
        if raw is None:
            return None
        return _parse_document(raw, session_key=session_key, location=self.location(session_key))

    def save(self, session_key: str, document: SavedSession) -> None:
        validate_session_key(session_key)
        self._write(session_key, document.model_dump_json(indent=1).encode())


class LocalSessionStore(SessionStore):
    def __init__(self, folder: str | Path):
        self.folder = Path(folder).expanduser()

    def __repr__(self) -> str:
        return f"LocalSessionStore({self.where!r})"

    @property
    def where(self) -> str:
        return str(self.folder)

    def _path(self, session_key: str) -> Path:
        return self.folder / f"{validate_session_key(session_key)}.json"

    def location(self, session_key: str) -> str:
        return str(self._path(session_key))

    def _read(self, session_key: str) -> bytes | None:
        try:
            return self._path(session_key).read_bytes()
        except FileNotFoundError:
            return None

    def _write(self, session_key: str, data: bytes) -> None:
        # Cookies are credentials: the folder and files are the owner's only.
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp_name = tempfile.mkstemp(dir=self.folder, prefix=f".{session_key}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as tmp:
                tmp.write(data)
                tmp.flush()
                os.fsync(tmp.fileno())
            os.chmod(tmp_name, 0o600)
            os.replace(tmp_name, self._path(session_key))  # atomic: readers see old or new
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise

    def delete(self, session_key: str) -> bool:
        try:
            self._path(session_key).unlink()
        except FileNotFoundError:
            return False
        return True

    def keys(self) -> list[str]:
        return sorted(path.stem for path in self.folder.glob("*.json") if SESSION_KEY_PATTERN.fullmatch(path.stem))

    def child(self, name: str) -> LocalSessionStore:
        return LocalSessionStore(self.folder / validate_session_key(name))


class S3SessionStore(SessionStore):
    """Documents under ``s3://bucket/prefix/<key>.json`` through a boto3 S3 client."""

    def __init__(self, client: Any, bucket: str, prefix: str = ""):
        if not bucket:
            raise ConfigError("session store", "an S3 session store needs a bucket")
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""

    def __repr__(self) -> str:
        return f"S3SessionStore({self.where!r})"

    @property
    def where(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def _key(self, session_key: str) -> str:
        return f"{self.prefix}{validate_session_key(session_key)}.json"

    def location(self, session_key: str) -> str:
        return f"s3://{self.bucket}/{self._key(session_key)}"

    def _read(self, session_key: str) -> bytes | None:
        from botocore.exceptions import ClientError

        try:
            response = self.client.get_object(Bucket=self.bucket, Key=self._key(session_key))
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code in ("NoSuchKey", "404"):
                return None
            raise self._client_error(exc, session_key) from exc
        return response["Body"].read()

    def _write(self, session_key: str, data: bytes) -> None:
        from botocore.exceptions import ClientError

        try:  # a PUT replaces the object atomically
            self.client.put_object(
                Bucket=self.bucket,
                Key=self._key(session_key),
                Body=data,
                ContentType="application/json",
            )
        except ClientError as exc:
            raise self._client_error(exc, session_key) from exc

    def delete(self, session_key: str) -> bool:
        from botocore.exceptions import ClientError

        key = self._key(session_key)
        try:
            self.client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey"):
                return False
            raise self._client_error(exc, session_key) from exc
        self.client.delete_object(Bucket=self.bucket, Key=key)
        return True

    def keys(self) -> list[str]:
        from botocore.exceptions import ClientError

        found = []
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix):
                for item in page.get("Contents", []):
                    name = item["Key"][len(self.prefix):]
                    if "/" not in name and name.endswith(".json") and SESSION_KEY_PATTERN.fullmatch(name[:-5]):
                        found.append(name[:-5])
        except ClientError as exc:
            raise ConfigError("session store", f"cannot list s3://{self.bucket}/{self.prefix}: {exc}") from exc
        return sorted(found)

    def child(self, name: str) -> S3SessionStore:
        return S3SessionStore(self.client, self.bucket, self.prefix + validate_session_key(name))

    def _client_error(self, exc: Any, session_key: str) -> ConfigError:
        code = exc.response.get("Error", {}).get("Code")
        message = exc.response.get("Error", {}).get("Message") or str(exc)
        problem = f"bucket {self.bucket!r} does not exist" if code == "NoSuchBucket" else f"{code}: {message}"
        return ConfigError("session store", f"{self.location(session_key)}: {problem}")


def default_session_folder() -> Path:
    return Path.home() / ".webtask" / "sessions"


def open_session_store(location: str | Path | None, *, s3_client: Any = None) -> SessionStore:
    """A store for ``location``: an ``s3://bucket/prefix/`` URI (needs ``s3_client``) or a folder
    (default ``~/.webtask/sessions``)."""
    if location is None or str(location) == "":
        return LocalSessionStore(default_session_folder())
    text = str(location)
    if is_s3_uri(text):
        bucket, _, prefix = text[len("s3://") :].partition("/")
        if s3_client is None:
            raise ConfigError("session store", f"{text!r} is an S3 location but no S3 client was given")
        return S3SessionStore(s3_client, bucket, prefix)
    return LocalSessionStore(text)
