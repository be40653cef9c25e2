"""The Cartridge shop as an `AppCase` (replay_runs.py): the site (tests/apps/cartridge_site, served
by `DjangoAppProcess`), the products the test creates, their task text and photo, and what the
shop's own database holds for them, compared field by field with what was asked.

What a product is asked to be (`PRODUCTS`): the first is recorded, the others replay it with other
values — titles of other lengths, tags not in the title and another number of them, a status whose
word the interface uses in its own sentences ("With Draft chosen, ..."), a category named like
interface words ("Sale" beside "Sale price"), other categories, colour, dates and photo.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar, Literal

from app_process import DjangoAppProcess
from cartridge_policy import CartridgeProductPolicy
from PIL import Image
from pydantic import SecretStr
from replay_runs import AppCase, ItemRun, foreign_members, foreign_owner

from webtask_core.readback import ReadBack
from webtask_core.replay import script_key
from webtask_core.worker import WorkerOptions

__all__ = ["PRODUCTS", "STAFF_USERNAME", "STAFF_PASSWORD", "cartridge_site", "cartridge_case", "open_cartridge_case",
           "task_data", "task_for", "make_photo", "stored_products", "stored_problems", "markdown_lines", "readback_of"]

PROJECT = "cartridge_site"
# The seed's account (tests/apps/cartridge_site/shop_seed/management/commands/seed_shop.py).
STAFF_USERNAME = "staff"
STAFF_PASSWORD = "cartridge-staff-pass"  # a throwaway test account
SECRET_NAME = "cartridge_password"
SCRIPT_KEY = script_key("cartridge-create-product", "cartridge-test-shop")

# The first is recorded, the others replay it with their own values.
PRODUCTS: tuple[dict[str, Any], ...] = (
    {"sku": "CRT-TRAIL-RED", "title": "Red Trail Shoe", "status": "Published", "available": True,
     "publish_date": "2026-03-14", "publish_time": "09:30",
     "description": "Light trail shoe with a **grippy sole** for wet days.",
     "categories": ["Shoes"], "tags": ["trail", "running", "outdoor"], "colour": "Red",
     "photo_caption": "Red shoe, side view", "stock": 12, "price": "59.90", "sale_price": "49.90"},
    # Longer title, Draft (a word of the interface's sentences), two categories, two lines, two tags.
    {"sku": "CRT-CLUTCH-BLK", "title": "Black Evening Clutch with Magnetic Clasp", "status": "Draft",
     "available": False, "publish_date": "2026-05-02", "publish_time": "18:45",
     "description": "A slim clutch in **black satin**.\nFits a phone, keys and cards.",
     "categories": ["Bags", "Gifts"], "tags": ["party", "formal"], "colour": "Black",
     "photo_caption": "Clutch from the front", "stock": 3, "price": "124.00", "sale_price": "99.50"},
    # "Sale" as a category and in the title; four tags; a body over 80 characters.
    {"sku": "CRT-TOTE-BLUE", "title": "Canvas Sale Tote", "status": "Published", "available": True,
     "publish_date": "2026-06-30", "publish_time": "07:05",
     "description": "Roomy canvas tote for market days, with **two inner pockets** and a zip that "
                    "keeps everything where you left it.",
     "categories": ["Bags", "Sale"], "tags": ["canvas", "market", "eco", "summer"], "colour": "Blue",
     "photo_caption": "Tote, open", "stock": 40, "price": "35.00", "sale_price": "28.00"},
    # A short title; the bold phrase opens the body; three categories; one tag.
    {"sku": "CRT-SCARF-BLUE", "title": "Wool Scarf", "status": "Draft", "available": True,
     "publish_date": "2027-01-09", "publish_time": "12:00",
     "description": "**Soft merino** scarf, knitted in one piece.",
     "categories": ["Accessories", "Gifts", "Sale"], "tags": ["winter"], "colour": "Blue",
     "photo_caption": "Scarf folded", "stock": 7, "price": "42.75", "sale_price": "39.00"},
    # Back to the recording's status and colour, with none of its other values.
    {"sku": "CRT-FLAT-RED", "title": "Red Ballet Flat", "status": "Published", "available": False,
     "publish_date": "2026-11-21", "publish_time": "16:20",
     "description": "Leather ballet flat with a **cushioned insole**.\nTrue to size.\nHand stitched.",
     "categories": ["Shoes", "Sale"], "tags": ["leather", "everyday", "comfort"], "colour": "Red",
     "photo_caption": "Pair of flats", "stock": 25, "price": "64.00", "sale_price": "51.20"},
)


def cartridge_site(root: Path) -> DjangoAppProcess:
    """``with cartridge_site(tmp) as site: site.url("/admin/")``: the shop migrated and seeded (or
    copied from the cached database) and served, its database and media under ``root``."""
    return DjangoAppProcess(PROJECT, root, seed=("seed_shop",), ready_path="/admin/login/")


def cartridge_case(site: DjangoAppProcess, *, rich_text: Literal["keys", "fill"] = "keys") -> AppCase:
    """The case on a running shop; ``rich_text``: how the scripted model writes the content."""
    return AppCase(
        name="cartridge", script_key=SCRIPT_KEY, items=[task_data(site, product) for product in PRODUCTS],
        task=task_for, resources=make_photo, policy=CartridgeProductPolicy(rich_text=rich_text),
        stored_problems=lambda runs: stored_problems(site, runs),
        options=WorkerOptions(secrets={SECRET_NAME: SecretStr(STAFF_PASSWORD)}), max_steps=60, readback=readback_of,
    )


def readback_of(data: dict[str, Any]) -> ReadBack:
    """The product read back from its page in the shop (the URL the run reported; a draft is shown to
    the signed-in staff): every value the task asked for, the description as written (markdown)."""
    return ReadBack(fields={name: value for name, value in data.items()
                            if name not in ("photo", "username", "password", "site_url")})


@contextmanager
def open_cartridge_case(root: Path, *, rich_text: Literal["keys", "fill"] = "keys") -> Iterator[AppCase]:
    """The shop started in `root` (outside pytest's fixtures: the benchmark), and its case."""
    with cartridge_site(root) as site:
        yield cartridge_case(site, rich_text=rich_text)


def task_data(site: DjangoAppProcess, product: dict[str, Any]) -> dict[str, Any]:
    """The task's fields: what the task text is written from, and the replay's parameters."""
    return {**product, "photo": "photo", "username": STAFF_USERNAME, "password": f"{{{{secret:{SECRET_NAME}}}}}",
            "site_url": site.url("/admin/shop/product/")}


def task_for(data: dict[str, Any]) -> str:
    return ("Create this product in the shop's admin: its details, content, categories, keywords, the "
            "colour option, the photo with its description, and the variation's SKU, stock and prices; "
            "save it, then report it with the address the shop shows it at.\n"
            f"```json\n{json.dumps(data, indent=2)}\n```")


def make_photo(data: dict[str, Any], folder: Path) -> dict[str, Path]:
    """The product's photo: a small JPEG of its own colours, named by its SKU (as an export names it)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{data['sku']}.jpg"
    seed = sum(map(ord, data["sku"]))
    Image.new("RGB", (64, 48), (seed % 256, 40, 120)).save(path, "JPEG")
    return {"photo": path}


# ---- what the shop stored ---------------------------------------------------------------------------

_QUERY = """
import json
from django.conf import settings
from cartridge.shop.models import Product
rows = []
for p in Product.objects.order_by("id"):
    rows.append(dict(
        title=p.title, status=p.get_status_display(), available=p.available,
        publish=p.publish_date.strftime("%Y-%m-%d %H:%M") if p.publish_date else None, content=p.content,
        categories=sorted(c.title for c in p.categories.all()),
        keywords=sorted(k.keyword.title for k in p.keywords.all()),
        images=[(i.file.name, i.description) for i in p.images.all()],
        variations=[dict(sku=v.sku, size=v.option1, colour=v.option2, stock=v.num_in_stock,
                         price=str(v.unit_price), sale_price=str(v.sale_price),
                         image=v.image.description if v.image else None, default=v.default)
                    for v in p.variations.all()],
        media_root=settings.MEDIA_ROOT))
print(json.dumps(rows))
"""


def stored_products(site: DjangoAppProcess) -> list[dict[str, Any]]:
    """Every product in the shop's database (oldest first), read through its ORM."""
    rows = site.query(_QUERY)
    assert isinstance(rows, list)
    return rows


def _money(text: Any) -> Decimal | None:
    try:
        return Decimal(str(text))
    except ArithmeticError:
        return None


def _fields(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored product as the task's fields (what can be compared with them)."""
    variation = stored["variations"][0] if len(stored["variations"]) == 1 else {}
    date, _, time = (stored["publish"] or "").partition(" ")
    caption = stored["images"][0][1] if len(stored["images"]) == 1 else None
    return {
        "title": stored["title"], "status": stored["status"], "available": stored["available"],
        "publish_date": date, "publish_time": time, "description": markdown_lines(stored["content"]),
        "categories": stored["categories"], "tags": stored["keywords"], "colour": variation.get("colour"),
        "photo_caption": caption, "sku": variation.get("sku"), "stock": variation.get("stock"),
        "price": _money(variation.get("price")), "sale_price": _money(variation.get("sale_price")),
    }


def _asked_value(key: str, value: Any) -> Any:
    """One field of an item's data as `_asked` compares it (None when the item has no such field)."""
    if value is None:
        return None
    if key == "description":
        return markdown_lines(value, markdown=True)
    if key in ("price", "sale_price"):
        return _money(value)
    return value


def _asked(data: dict[str, Any]) -> dict[str, Any]:
    return {**{key: data[key] for key in ("title", "status", "available", "publish_date", "publish_time", "colour",
                                          "photo_caption", "sku", "stock")},
            "description": markdown_lines(data["description"], markdown=True),
            "categories": sorted(data["categories"]), "tags": sorted(data["tags"]),
            "price": _money(data["price"]), "sale_price": _money(data["sale_price"])}


def stored_problems(site: DjangoAppProcess, runs: Sequence[ItemRun]) -> list[str]:
    """What the shop stored wrong for these runs, one line each (empty when every product is stored
    once, with exactly its own values): a missing or extra product, a field that differs (saying
    whose value it is when it is another product's), a variation or image too many, a photo of other
    bytes."""
    stored = stored_products(site)
    problems = []
    titles = [row["title"] for row in stored]
    wanted_titles = [run.data["title"] for run in runs]
    if titles != wanted_titles:
        problems.append(f"the shop holds the products {titles}, not {wanted_titles}")
    by_title = {row["title"]: row for row in stored}
    for run in runs:
        row = by_title.get(run.data["title"])
        if row is not None:
            problems += _product_problems(run, row, runs)
    return problems


def _product_problems(run: ItemRun, row: dict[str, Any], runs: Sequence[ItemRun]) -> list[str]:
    problems = []
    asked, have = _asked(run.data), _fields(row)
    for key, value in asked.items():
        if have[key] == value:
            continue
        if key in ("categories", "tags"):
            whose = foreign_members(key, have[key], run, runs)
        else:
            whose = foreign_owner(key, have[key], run, runs, lambda stored, theirs, key=key: _asked_value(key, theirs) == stored)
        problems.append(f"{run.label}: {key} is {have[key]!r}, asked {value!r}{whose}")
    variations = row["variations"]
    if len(variations) != 1 or variations[0]["size"] is not None or not variations[0]["default"]:
        problems.append(f"{run.label}: variations {variations} (one default variation of its colour asked)")
    if len(row["images"]) != 1:
        return [*problems, f"{run.label}: images {row['images']} (one photo asked)"]
    stored_file = Path(row["media_root"]) / row["images"][0][0]
    content = stored_file.read_bytes() if stored_file.is_file() else b""
    if content != run.resources["photo"].read_bytes():
        owners = [other.label for other in runs if other is not run and other.resources["photo"].read_bytes() == content]
        whose = f" (the photo of {', '.join(owners)})" if owners else ""
        problems.append(f"{run.label}: the image {row['images'][0][0]} is not its photo {run.resources['photo'].name}{whose}")
    return problems


# ---- rich text ---------------------------------------------------------------------------------------


class _MarkdownLines(HTMLParser):
    """TinyMCE's HTML as the markdown-like lines a model writes: a paragraph or break a line,
    <strong>/<b> as **, <em>/<i> as *, an asterisk of the text as \\*."""

    MARKS: ClassVar[dict[str, str]] = {"strong": "**", "b": "**", "em": "*", "i": "*"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = [""]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("p", "br", "div", "li"):
            self.lines.append("")
        self.lines[-1] += self.MARKS.get(tag, "")

    def handle_endtag(self, tag: str) -> None:
        self.lines[-1] += self.MARKS.get(tag, "")

    def handle_data(self, data: str) -> None:
        # A literal asterisk is no formatting: escaped, "**bold**" typed as text never reads as bold.
        self.lines[-1] += data.replace("\n", " ").replace("*", "\\*")


def markdown_lines(text: str, *, markdown: bool = False) -> list[str]:
    """`text` (the shop's HTML, or with ``markdown`` the task's markdown-like text) as its lines,
    spaces folded (TinyMCE writes a space before a bold phrase as &nbsp;)."""
    if markdown:
        lines = text.split("\n")
    else:
        parser = _MarkdownLines()
        parser.feed(text)
        parser.close()
        lines = parser.lines
    return [re.sub(r"\s+", " ", line.replace("\u00a0", " ")).strip() for line in lines if line.strip()]
