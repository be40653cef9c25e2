"""Listing one item on the demo marketplace with Agent.do and reading it back (imported as a
top-level module, as the other test folders' helpers are)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image
from pydantic import BaseModel, SecretStr

from webtask_core import Agent
from webtask_core.browser import Browser
from webtask_core.readback import ReadBack
from webtask_core.replay import Replay, ScriptStore, script_key
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM
from webtask_core.testing.marketplace import Marketplace
from webtask_core.worker import WorkerOptions

SECRETS = WorkerOptions(secrets={"shop_password": SecretStr("demo-pass")})
FIELDS = ("sku", "title", "description", "price", "category", "condition", "quantity", "photos")


class ListingOutput(BaseModel):
    listing_url: str
    sku: str


def make_photos(folder: Path) -> list[Path]:
    jpeg, png = folder / "front.jpg", folder / "back.png"
    Image.new("RGB", (64, 48), (200, 30, 90)).save(jpeg, "JPEG")
    Image.new("RGB", (40, 40), (20, 120, 200)).save(png, "PNG")
    return [jpeg, png]


def listing(sku: str, shop: Marketplace, **changes: Any) -> dict[str, Any]:
    data = {"sku": sku, "title": f"Blue suede shoes, size 8, worn twice, box included {sku}",
            "description": "Worn twice.\nSize 8.", "price": "46.00", "category": "Women's Shoes",
            "condition": "Like new", "quantity": "7", "photos": ["listing_image_1", "listing_image_2"],
            "username": "demo", "password": "{{secret:shop_password}}", "site_url": shop.url("/listings")}
    return data | changes


def scripts(folder: Path) -> ScriptStore:
    return ScriptStore(LocalSessionStore(folder / "sessions"))


async def list_item(llm: FakeLLM, browser: Browser, shop: Marketplace, photos: list[Path], data: dict[str, Any], *,
                    store: ScriptStore | None = None, readback: ReadBack | None = None, verify: str = "always") -> Any:
    """One listing through Agent.do in a fresh context, read back with the item's own fields."""
    tab = await browser.new_tab()
    try:
        agent = Agent(llm, browser=tab, options=SECRETS, start_url=shop.url("/login"),
                      resources={"listing_image_1": photos[0], "listing_image_2": photos[1]})
        replay = None if store is None else Replay(key=script_key("listing-task", "demo-shop"), params=data,
                                                   store=store, identifying=("sku", "title"))
        readback = readback or ReadBack(fields={name: data[name] for name in FIELDS if name in data})
        task = f"List this item, then report its URL.\n```json\n{json.dumps(data, indent=2)}\n```"
        return await agent.do(task, max_steps=20, output_schema=ListingOutput, replay=replay, readback=readback,
                              verify=verify)  # type: ignore[arg-type]
    finally:
        await tab.close()


def read_back_requests(llm: FakeLLM) -> list[dict[str, Any]]:
    return [request for request in llm.requests if (request.get("tool_choice") or {}).get("name") == "report_listing"]
