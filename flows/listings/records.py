"""Listing records and manifests: what a batch listing upload reads, validates and turns into tasks.

Prefect-free, so an ETL job or a test can validate a manifest exactly as the batch flow will.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from webtask_core.errors import ConfigError, WebtaskError

if TYPE_CHECKING:
    import jinja2

__all__ = [
    "ListingRecord",
    "RowProblem",
    "ManifestError",
    "ManifestRows",
    "parse_manifest",
    "validate_listings",
    "photo_resource_names",
    "load_task_template",
    "load_readback_options",
    "listing_readback",
    "render_listing_task",
]

_CORE_FIELDS = ("sku", "title", "description", "price", "category", "condition", "photos")
# CSV cells hold several photos separated by "|" (commas are taken by CSV itself).
_PHOTO_SEPARATOR = re.compile(r"\s*[|;\n]\s*")


class ListingRecord(BaseModel):
    """One product to list. `sku` is the listing id: unique per batch, and what the agent searches
    the marketplace for before creating anything. Unknown fields are kept as extra fields."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)

    sku: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    title: str = Field(min_length=1, max_length=200)
    description: str = Field(min_length=1, max_length=5000)
    price: Decimal = Field(gt=0, max_digits=10, decimal_places=2)
    category: str = Field(min_length=1, max_length=100)
    condition: str = Field(min_length=1, max_length=50)
    photos: list[str] = Field(min_length=1, max_length=16)

    @field_validator("photos", mode="before")
    @classmethod
    def _split_photo_cell(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part for part in _PHOTO_SEPARATOR.split(value.strip()) if part]
        return value

    @property
    def extra_fields(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    def content_hash(self) -> str:
        """Changes whenever anything that would end up on the listing changes (so it runs again)."""
        document = self.model_dump(mode="json")
        canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def listing_data(self, *, photo_names: list[str]) -> dict[str, Any]:
        """The listing as the agent sees it: photos as resource names, never paths or URIs."""
        data = self.model_dump(mode="json", exclude={"photos"})
        data["price"] = str(self.price)
        data["photos"] = photo_names
        return data


def photo_resource_names(listing: ListingRecord) -> dict[str, str]:
    """Resource name → photo URI/path for one listing (`<sku>_photo_1`, ...)."""
    stem = re.sub(r"[^A-Za-z0-9_]", "_", listing.sku)
    return {f"{stem}_photo_{i}": photo for i, photo in enumerate(listing.photos, start=1)}


class RowProblem(BaseModel):
    row: int  # 1-based data row (a CSV header is not counted)
    field: str
    message: str

    def __str__(self) -> str:
        return f"row {self.row}, {self.field}: {self.message}"


class ManifestError(WebtaskError, ValueError):
    """A manifest with invalid rows. Every problem is listed, not only the first."""

    def __init__(self, source: str, problems: list[RowProblem]):
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"manifest {source} has {len(problems)} problem(s):\n{lines}")


class ManifestRows(BaseModel):
    valid: list[ListingRecord]
    problems: list[RowProblem]
    rows: dict[str, int] = Field(default_factory=dict)  # SKU -> its row number, for later problems


def _rows_from_text(text: str, fmt: Literal["jsonl", "csv"], source: str) -> list[Any]:
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text))
        missing = [f for f in _CORE_FIELDS if f not in (reader.fieldnames or [])]
        if missing:
            raise ManifestError(source, [RowProblem(row=0, field=f, message="column missing from header") for f in missing])
        # Empty cells are absent fields, so "required" is reported rather than "too short".
        return [{k: v for k, v in row.items() if k and v not in (None, "")} for row in reader]
    rows: list[Any] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            rows.append(_BadJson(number, str(error)))
    return rows


class _BadJson:
    def __init__(self, line: int, message: str):
        self.line, self.message = line, message


def _format_for(source: str, text: str) -> Literal["jsonl", "csv"]:
    lowered = source.lower()
    if lowered.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if lowered.endswith(".csv"):
        return "csv"
    return "jsonl" if text.lstrip().startswith("{") else "csv"


def validate_listings(rows: list[Any]) -> ManifestRows:
    """Validate every row; collect all problems (row numbers are 1-based) instead of stopping."""
    valid: list[ListingRecord] = []
    problems: list[RowProblem] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows, start=1):
        if isinstance(row, ListingRecord):
            row = row.model_dump(mode="json")
        if isinstance(row, _BadJson):
            problems.append(RowProblem(row=number, field="(line)", message=f"not valid JSON: {row.message}"))
            continue
        if not isinstance(row, dict):
            problems.append(RowProblem(row=number, field="(row)", message=f"expected an object, got {type(row).__name__}"))
            continue
        try:
            listing = ListingRecord.model_validate(row)
        except ValidationError as error:
            for item in error.errors():
                field = ".".join(str(part) for part in item["loc"]) or "(row)"
                problems.append(RowProblem(row=number, field=field, message=item["msg"]))
            continue
        if listing.sku in seen:
            problems.append(RowProblem(row=number, field="sku", message=f"duplicate of row {seen[listing.sku]}"))
            continue
        seen[listing.sku] = number
        valid.append(listing)
    return ManifestRows(valid=valid, problems=problems, rows=seen)


def parse_manifest(data: bytes | str, *, source: str = "manifest") -> ManifestRows:
    """Parse a JSON Lines or CSV manifest (by file extension, else by content) and validate it."""
    text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
    rows = _rows_from_text(text, _format_for(source, text), source)
    if not rows:
        raise ManifestError(source, [RowProblem(row=0, field="(manifest)", message="no listings in the manifest")])
    return validate_listings(rows)


_DEFAULT_TEMPLATE = "listing_task.yaml"


def load_task_template(template: str | None = None) -> jinja2.Template:
    """The listing task template: the packaged one, a path to a YAML/Jinja file, or template text."""
    import jinja2
    import yaml

    text = _template_text(template)
    if text.lstrip().startswith(("#", "task:")) or "\ntask:" in text:
        loaded = yaml.safe_load(text)
        if not isinstance(loaded, dict) or "task" not in loaded:
            raise ConfigError("task_template", "a YAML template needs a top-level `task:` entry")
        text = loaded["task"]
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)
    try:
        return env.from_string(text)
    except jinja2.TemplateSyntaxError as error:
        raise ConfigError("task_template", f"not a valid Jinja2 template: {error}") from error


def _template_text(template: str | None) -> str:
    import importlib.resources
    from pathlib import Path

    if template is None:
        return importlib.resources.files("webtask_flows.listings").joinpath("prompts", _DEFAULT_TEMPLATE).read_text()
    if "\n" not in template and Path(template).suffix in (".yaml", ".yml", ".j2", ".jinja", ".txt"):
        path = Path(template)
        if not path.is_file():
            raise ConfigError("task_template", f"no template file at {template}")
        return path.read_text()
    return template


_READBACK_OPTIONS = ("check", "labels", "pictures", "identifying", "search_url", "url_fields")


def load_readback_options(template: str | None = None) -> dict[str, Any]:
    """The template's ``readback:`` options (a YAML template's key beside ``task:``): ``check`` (the
    fields to check), ``labels`` (how the site's page labels them), ``search_url`` (where to look the
    listing up when its run reports no URL), ``pictures``, ``identifying``, ``url_fields``
    (webtask_core.readback.ReadBack)."""
    import yaml

    text = _template_text(template)
    if not (text.lstrip().startswith(("#", "task:")) or "\ntask:" in text):
        return {}
    loaded = yaml.safe_load(text)
    options = loaded.get("readback") if isinstance(loaded, dict) else None
    if options is None:
        return {}
    if not isinstance(options, dict) or set(options) - set(_READBACK_OPTIONS):
        raise ConfigError("task_template", f"`readback:` takes {', '.join(_READBACK_OPTIONS)}; got {options!r}")
    return options


def listing_readback(listing: ListingRecord, photo_names: list[str], options: dict[str, Any]) -> Any:
    """What a listing's run reads back: every field of the listing (its photos by count, its extra
    fields as attributes), checked as the template's ``readback:`` options say."""
    from webtask_core.readback import ReadBack

    try:
        return ReadBack(fields=listing.listing_data(photo_names=photo_names), **options).validated("readback")
    except ValidationError as error:
        raise ConfigError("task_template", f"`readback:` options: {error.errors()[0]['msg']}") from error


def listing_fields(listing: ListingRecord, *, photo_names: list[str], site_url: str, username: str,
                   password: str, totp: str | None = None) -> dict[str, Any]:
    """The values a listing's task is rendered from (a replay's parameters: the same names)."""
    return {**_task_data(listing, photo_names, username, password, totp), "site_url": site_url}


def _task_data(listing: ListingRecord, photo_names: list[str], username: str, password: str,
               totp: str | None = None) -> dict[str, Any]:
    """The listing as its task shows it (``listing`` / ``listing_json`` in the template); ``totp``:
    the placeholder of the account's authenticator code, when the site asks for one."""
    data = {**listing.listing_data(photo_names=photo_names), "username": username, "password": password}
    if totp:
        data["totp"] = totp
    return data


def template_name(template: str | None) -> str:
    """What a task template is called in a replay key: the packaged one's or a file's stem, else a
    hash of its text (another text is another job)."""
    from pathlib import Path

    if template is None:
        return Path(_DEFAULT_TEMPLATE).stem
    if "\n" not in template and Path(template).suffix in (".yaml", ".yml", ".j2", ".jinja", ".txt"):
        return Path(template).stem
    return "template-" + hashlib.sha256(template.encode()).hexdigest()[:10]


def render_listing_task(
    template: jinja2.Template,
    listing: ListingRecord,
    *,
    photo_names: list[str],
    site_url: str,
    username: str,
    password: str,
    approval: str | None = None,
    totp: str | None = None,
) -> str:
    """``approval``: why a person must approve the listing before it is published (the data's
    ``approval`` key; the packaged template then tells the model to ask). ``totp``: the placeholder
    of the account's authenticator code (the data's ``totp`` key)."""
    import jinja2

    data = _task_data(listing, photo_names, username, password, totp)
    if approval:
        data["approval"] = approval
    try:
        return template.render(
            listing=data,
            listing_json=json.dumps(data, indent=2, ensure_ascii=False),
            site_url=site_url,
            username=username,
            password=password,
        ).strip()
    except jinja2.UndefinedError as error:
        raise ConfigError("task_template", f"uses an unknown variable: {error}") from error
