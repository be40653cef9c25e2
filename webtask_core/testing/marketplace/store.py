"""The demo marketplace's storage: SQLite rows plus photo files in one temporary folder per instance.

Every call opens its own short-lived connection, so the server's worker threads and the test thread
can use one store at once; a lock serialises writes.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
import uuid
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

__all__ = ["PhotoRecord", "ListingRecord", "DraftListing", "ListingStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS listings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    owner TEXT NOT NULL,
    sku TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    price REAL NOT NULL,
    category TEXT NOT NULL,
    condition TEXT NOT NULL,
    created_at TEXT NOT NULL,
    draft_id TEXT UNIQUE,
    shipping TEXT,
    quantity INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS photos (
    listing_id INTEGER NOT NULL,
    position INTEGER NOT NULL,
    filename TEXT NOT NULL,
    stored_name TEXT NOT NULL,
    PRIMARY KEY (listing_id, position)
);
CREATE TABLE IF NOT EXISTS drafts (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    sku TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    price REAL NOT NULL,
    category TEXT NOT NULL,
    condition TEXT NOT NULL,
    photo_names TEXT NOT NULL,
    created_at TEXT NOT NULL,
    shipping TEXT,
    quantity INTEGER NOT NULL DEFAULT 1
);
"""

_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")


class PhotoRecord(BaseModel):
    filename: str  # the name the browser sent
    content: bytes
    sha256: str


class ListingRecord(BaseModel):
    id: int
    sku: str
    title: str
    description: str
    price: float
    category: str  # the category's label, e.g. "Women's Shoes"
    condition: str  # the condition's label, e.g. "Like new"
    url: str
    created_at: datetime
    photos: list[PhotoRecord]
    shipping: str | None = None  # the Shipping page's choice (label), in a layout with that step
    quantity: int = 1


class DraftListing(BaseModel):
    """A filled-in form waiting on the confirmation page; its photos are already on disk."""

    id: str
    owner: str
    sku: str
    title: str
    description: str
    price: float
    category: str
    condition: str
    photo_names: list[str]  # original filenames, in order
    shipping: str | None = None  # label chosen on the Shipping page, if the layout has one
    quantity: int = 1


def _safe_filename(name: str, position: int) -> str:
    cleaned = _UNSAFE_FILENAME.sub("_", Path(name).name).strip("._") or "photo"
    return f"{position}-{cleaned[:80]}"


class ListingStore:
    def __init__(self, root: Path, base_url: str = "") -> None:
        self.root = root
        self.base_url = base_url
        self._db_path = root / "marketplace.sqlite3"
        self._uploads = root / "uploads"
        self._drafts = root / "drafts"
        self._write_lock = threading.Lock()
        self._uploads.mkdir(parents=True, exist_ok=True)
        self._drafts.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db, db:
            db.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self._db_path, timeout=10)
        db.row_factory = sqlite3.Row
        return db

    # ---- drafts -------------------------------------------------------------------------------

    def save_draft(
        self,
        *,
        owner: str,
        sku: str,
        title: str,
        description: str,
        price: float,
        category: str,
        condition: str,
        photos: list[tuple[str, bytes]],
        quantity: int = 1,
    ) -> str:
        draft_id = uuid.uuid4().hex[:16]
        folder = self._drafts / draft_id
        folder.mkdir()
        for position, (filename, content) in enumerate(photos):
            (folder / _safe_filename(filename, position)).write_bytes(content)
        with self._write_lock, closing(self._connect()) as db, db:
            db.execute(
                "INSERT INTO drafts (id, owner, sku, title, description, price, category, condition,"
                " photo_names, created_at, quantity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (draft_id, owner, sku, title, description, price, category, condition,
                 "\n".join(Path(name).name for name, _ in photos), _now(), quantity),
            )
        return draft_id

    def draft(self, draft_id: str, owner: str) -> DraftListing | None:
        with closing(self._connect()) as db:
            row = db.execute("SELECT * FROM drafts WHERE id = ? AND owner = ?", (draft_id, owner)).fetchone()
        if row is None:
            return None
        values = dict(row)
        values.pop("created_at")
        values["photo_names"] = values["photo_names"].split("\n")
        return DraftListing(**values)

    def set_shipping(self, draft_id: str, shipping: str) -> None:
        with self._write_lock, closing(self._connect()) as db, db:
            db.execute("UPDATE drafts SET shipping = ? WHERE id = ?", (shipping, draft_id))

    def draft_photo(self, draft_id: str, position: int) -> Path | None:
        folder = self._drafts / draft_id
        matches = sorted(folder.glob(f"{position}-*")) if folder.is_dir() else []
        return matches[0] if matches else None

    def publish(self, draft: DraftListing) -> int:
        """Turn a draft into a listing; publishing the same draft again returns the same listing."""
        with self._write_lock, closing(self._connect()) as db, db:
            existing = db.execute("SELECT id FROM listings WHERE draft_id = ?", (draft.id,)).fetchone()
            if existing is not None:
                return int(existing["id"])
            cursor = db.execute(
                "INSERT INTO listings (owner, sku, title, description, price, category, condition,"
                " created_at, draft_id, shipping, quantity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (draft.owner, draft.sku, draft.title, draft.description, draft.price, draft.category,
                 draft.condition, _now(), draft.id, draft.shipping, draft.quantity),
            )
            listing_id = cursor.lastrowid
            assert listing_id is not None  # set by the INSERT
            folder = self._uploads / str(listing_id)
            folder.mkdir()
            for position, filename in enumerate(draft.photo_names):
                source = self.draft_photo(draft.id, position)
                if source is None:
                    raise RuntimeError(f"draft {draft.id} lost photo {position} ({filename})")
                (folder / source.name).write_bytes(source.read_bytes())
                db.execute("INSERT INTO photos VALUES (?, ?, ?, ?)", (listing_id, position, filename, source.name))
        return listing_id

    def update(self, listing_id: int, *, title: str, description: str, price: float, category: str,
               condition: str, quantity: int) -> None:
        """A published listing's fields changed through its edit page (SKU and photos stay)."""
        with self._write_lock, closing(self._connect()) as db, db:
            db.execute("UPDATE listings SET title = ?, description = ?, price = ?, category = ?, condition = ?,"
                       " quantity = ? WHERE id = ?",
                       (title, description, price, category, condition, quantity, listing_id))

    # ---- listings ------------------------------------------------------------------------------

    def listings(self, *, sku: str | None = None, owner: str | None = None) -> list[ListingRecord]:
        """All listings, oldest first; `sku` matches exactly, ignoring case and surrounding spaces."""
        query, params = "SELECT * FROM listings WHERE 1 = 1", []
        if sku is not None:
            query += " AND lower(trim(sku)) = lower(trim(?))"
            params.append(sku)
        if owner is not None:
            query += " AND owner = ?"
            params.append(owner)
        with closing(self._connect()) as db:
            rows = db.execute(query + " ORDER BY id", params).fetchall()
            return [self._record(db, row) for row in rows]

    def listing(self, listing_id: int) -> ListingRecord | None:
        with closing(self._connect()) as db:
            row = db.execute("SELECT * FROM listings WHERE id = ?", (listing_id,)).fetchone()
            return None if row is None else self._record(db, row)

    def photo_path(self, listing_id: int, stored_name: str) -> Path | None:
        path = self._uploads / str(listing_id) / Path(stored_name).name
        return path if path.is_file() else None

    def stored_photo_names(self, listing_id: int) -> list[str]:
        with closing(self._connect()) as db:
            rows = db.execute(
                "SELECT stored_name FROM photos WHERE listing_id = ? ORDER BY position", (listing_id,)
            ).fetchall()
        return [row["stored_name"] for row in rows]

    def _record(self, db: sqlite3.Connection, row: sqlite3.Row) -> ListingRecord:
        photos = []
        for photo in db.execute(
            "SELECT filename, stored_name FROM photos WHERE listing_id = ? ORDER BY position", (row["id"],)
        ):
            content = (self._uploads / str(row["id"]) / photo["stored_name"]).read_bytes()
            photos.append(
                PhotoRecord(filename=photo["filename"], content=content, sha256=hashlib.sha256(content).hexdigest())
            )
        return ListingRecord(
            id=row["id"], sku=row["sku"], title=row["title"], description=row["description"],
            price=row["price"], category=row["category"], condition=row["condition"],
            url=f"{self.base_url}/listings/{row['id']}", created_at=datetime.fromisoformat(row["created_at"]),
            photos=photos, shipping=row["shipping"], quantity=row["quantity"],
        )

    def clear(self) -> None:
        """Remove every listing, draft and photo (the schema stays)."""
        with self._write_lock, closing(self._connect()) as db, db:
            db.execute("DELETE FROM listings")
            db.execute("DELETE FROM photos")
            db.execute("DELETE FROM drafts")
            db.execute("DELETE FROM sqlite_sequence")
        for folder in (self._uploads, self._drafts):
            for path in sorted(folder.rglob("*"), reverse=True):
                if path.is_dir():
                    path.rmdir()
                else:
                    path.unlink()


def _now() -> str:
    return datetime.now(UTC).isoformat()
