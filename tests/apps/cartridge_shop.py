"""The Cartridge shop as a replay test bed: the site (tests/apps/cartridge_site, served by
`DjangoAppProcess`), the products the test creates, their task text and photo, and what the shop's
own database holds for them, compared field by field with what was asked.

What a product is asked to be (`PRODUCTS`): the first is recorded, the others replay it with other
values — titles of other lengths, tags not in the title and another number of them, a status whose
word the interface uses in its own sentences ("With Draft chosen, ..."), a category named like
interface words ("Sale" beside "Sale price"), other categories, colour, dates and photo.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

from app_process import DjangoAppProcess
from cartridge_policy import CartridgeProductPolicy
from PIL import Image
from playwright.async_api import BrowserContext, Request
from pydantic import SecretStr

from webtask_core import Agent, AgentResult, WorkerStatus
from webtask_core.browser import Browser
from webtask_core.replay import Replay, ScriptStore, script_key
from webtask_core.testing import FakeLLM
from webtask_core.testing.request_view import latest_url
from webtask_core.worker import WorkerOptions

__all__ = ["PRODUCTS", "STAFF_USERNAME", "STAFF_PASSWORD", "SCRIPT_KEY", "ProductRun", "cartridge_site", "task_data",
           "task_for", "make_photo", "run_products", "describe_runs", "stored_products", "stored_problems",
           "markdown_lines"]

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


@contextmanager
def cartridge_site(root: Path) -> Iterator[DjangoAppProcess]:
    """The shop migrated and seeded (or copied from the cached database) and served."""
    with DjangoAppProcess(PROJECT, root, seed=("seed_shop",)) as site:
        yield site


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


# ---- creating products --------------------------------------------------------------------------------


@dataclass
class ProductRun:
    data: dict[str, Any]
    resources: dict[str, Path]
    result: AgentResult
    model_calls: int
    revision: int  # of the stored script after this run
    seconds: float
    # Each model call: the page it was asked on, and the "replay stopped at ..." note when it had one.
    asked: list[tuple[str, str | None]] = field(default_factory=list)
    # Every URL the browser requested (pages, scripts, fonts, uploads), the shop's and any other host's.
    requests: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return str(self.data["title"])

    def describe(self) -> str:
        lines = [f"{self.label}: {self.result.status.value}, replay={self.result.replay}, "
                 f"replayed_steps={self.result.replayed_steps}, model calls={self.model_calls}, "
                 f"script revision after={self.revision}, {self.seconds:.1f} s"]
        lines += [f"  - on {url}: {note}" for url, note in self.asked if note is not None]
        lines += [f"  - handover: {handover}" for handover in self.result.replay_handovers]
        if self.result.status is not WorkerStatus.completed:
            lines.append(f"  - feedback: {self.result.feedback}")
        return "\n".join(lines)


def handover_note(request: dict[str, Any]) -> str | None:
    """The replay's hand-over note in the request's last user message, if it has one."""
    for block in request["messages"][-1].get("content", []):
        if isinstance(block, dict) and block.get("type") == "text" and "replay stopped at" in block.get("text", ""):
            text = block["text"]
            return text[text.index("Steps 1-") if "Steps 1-" in text else text.index("replay stopped at"):].split("\n")[0]
    return None


async def run_products(site: DjangoAppProcess, browser: Browser, store: ScriptStore, folder: Path, *,
                       llm: FakeLLM | None = None, products: Sequence[dict[str, Any]] = PRODUCTS) -> list[ProductRun]:
    """Create `products` one after the other through ``Agent.do(replay=...)``, each in a fresh tab:
    the first records the script (unless `store` has one), the others replay it. ``llm``: the scripted
    model (default: `CartridgeProductPolicy` typing the content with the keyboard)."""
    llm = llm or FakeLLM(CartridgeProductPolicy(rich_text="keys"))
    options = WorkerOptions(secrets={SECRET_NAME: SecretStr(STAFF_PASSWORD)})
    runs = []
    for number, product in enumerate(products, start=1):
        data = task_data(site, product)
        photo = make_photo(data, folder / f"photo-{number}")
        before, started = len(llm.requests), time.perf_counter()
        tab = await browser.new_tab()
        try:
            assert tab.page is not None  # a new tab has its first page
            requested = _requests_seen(tab.page.context)
            replay = Replay(key=SCRIPT_KEY, params=data, store=store, identifying=("sku", "title"))
            result = await Agent(llm, browser=tab, options=options).do(task_for(data), max_steps=60, resources=photo,
                                                                       replay=replay)
        finally:
            await tab.close()
        requests = llm.requests[before:]
        script = store.load(SCRIPT_KEY)
        runs.append(ProductRun(data=data, resources=photo, result=result, model_calls=len(requests),
                               revision=script.revision if script is not None else 0,
                               seconds=time.perf_counter() - started, requests=requested,
                               asked=[(latest_url(request), handover_note(request)) for request in requests]))
    return runs


def _requests_seen(context: BrowserContext) -> list[str]:
    """A list that gathers the URL of every request `context` makes from now on."""
    urls: list[str] = []

    def seen(request: Request) -> None:
        urls.append(request.url)

    context.on("request", seen)
    return urls


def describe_runs(runs: Sequence[ProductRun], problems: Sequence[str] = ()) -> str:
    """Per product its outcome and handovers, then what was stored wrong: the failure report."""
    text = "\n".join(run.describe() for run in runs)
    if problems:
        text += "\nstored wrong:\n" + "\n".join(f"  - {problem}" for problem in problems)
    return text


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


def _asked(data: dict[str, Any]) -> dict[str, Any]:
    return {**{key: data[key] for key in ("title", "status", "available", "publish_date", "publish_time", "colour",
                                          "photo_caption", "sku", "stock")},
            "description": markdown_lines(data["description"], markdown=True),
            "categories": sorted(data["categories"]), "tags": sorted(data["tags"]),
            "price": _money(data["price"]), "sale_price": _money(data["sale_price"])}


def stored_problems(site: DjangoAppProcess, runs: Sequence[ProductRun]) -> list[str]:
    """What the shop stored wrong for these runs, one line each (empty when every product is stored
    once, with exactly its own values): a missing or extra product, a field that differs (and whose
    value it is when it is another product's), a variation or image too many, a photo of other bytes."""
    stored = stored_products(site)
    problems = []
    titles = [row["title"] for row in stored]
    wanted_titles = [run.data["title"] for run in runs]
    if titles != wanted_titles:
        problems.append(f"the shop holds the products {titles}, not {wanted_titles}")
    by_title = {row["title"]: row for row in stored}
    others = {run.label: _asked(run.data) for run in runs}
    for run in runs:
        row = by_title.get(run.data["title"])
        if row is None:
            continue
        asked, have = _asked(run.data), _fields(row)
        for key, value in asked.items():
            if have[key] != value:
                owners = [label for label, other in others.items() if label != run.label and other[key] == have[key]]
                whose = f" — the value of {', '.join(owners)}" if owners else ""
                problems.append(f"{run.label}: {key} is {have[key]!r}, asked {value!r}{whose}")
        if len(row["variations"]) != 1 or row["variations"][0]["size"] is not None or not row["variations"][0]["default"]:
            problems.append(f"{run.label}: variations {row['variations']} (one default variation of its colour asked)")
        if len(row["images"]) != 1:
            problems.append(f"{run.label}: images {row['images']} (one photo asked)")
        else:
            stored_file = Path(row["media_root"]) / row["images"][0][0]
            photo = run.resources["photo"]
            if not stored_file.is_file() or stored_file.read_bytes() != photo.read_bytes():
                problems.append(f"{run.label}: the image {row['images'][0][0]} is not its photo {photo.name}")
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
