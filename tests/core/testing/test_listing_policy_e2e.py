"""MarketplaceListingPolicy over the real marketplace with the real browser layer, in a tiny loop:
observe → a request in the internals.md §3 shape → policy → the session's actions → tool results."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from webtask_core.browser import Browser, BrowserConfig, BrowserTab
from webtask_core.errors import ActionError
from webtask_core.testing.marketplace import Marketplace
from webtask_core.testing.policies import MarketplaceListingPolicy
from webtask_core.testing.replies import Reply

SECRETS = {"{{secret:shop_password}}": "demo-pass"}
SET_OUTPUT = {
    "name": "set_output",
    "description": "Report the listing.",
    "input_schema": {"type": "object", "properties": {"listing_url": {"type": "string"}, "sku": {"type": "string"}},
                     "required": ["listing_url", "sku"]},
}


class TinyLoop:
    """Just enough of a worker to drive a policy: no model, no prompts, the §3 message shapes."""

    def __init__(self, session: BrowserTab, resources: dict[str, Path]) -> None:
        self.session = session
        self.resources = resources
        self.output: Any = None
        self.requests: list[dict[str, Any]] = []

    async def run(self, policy: MarketplaceListingPolicy, task: str, max_steps: int = 25) -> tuple[str, str]:
        resource_lines = "\n".join(f"- {name} (image/jpeg)" for name in self.resources)
        messages: list[dict[str, Any]] = [{"role": "user", "content": [
            {"type": "text", "text": f"<task>\n{task}\n</task>"},
            {"type": "text", "text": f"<resources>\n{resource_lines}\n</resources>"},
        ]}]
        for step in range(1, max_steps + 1):
            observation = await self.session.observe()
            attributes = f'url="{observation.url}" title="{observation.title}" step="{step}"'
            open_message = messages[-1]["content"]
            open_message.append({"type": "text", "text": f"<page {attributes}>\n{observation.tree}\n</page>"})
            request = {"model": "scripted", "tools": [SET_OUTPUT], "messages": json.loads(json.dumps(messages))}
            self.requests.append(request)
            reply: Reply = policy(request)
            open_message[-1] = {"type": "text", "text": f"<page {attributes} collapsed/>"}

            uses, results, failed = [], [], False
            for number, use in enumerate(reply.tool_uses):
                use_id = f"toolu_{step}_{number}"
                uses.append({"type": "tool_use", "id": use_id, "name": use.name, "input": use.input})
                if use.name in ("complete", "abort"):
                    return use.name, next(iter(use.input.values()))
                if failed:
                    text, is_error = "skipped: an earlier call in this turn failed", True
                else:
                    try:
                        text, is_error = await self._act(use.name, use.input), False
                    except ActionError as exc:
                        text, is_error, failed = str(exc), True, True
                results.append({"type": "tool_result", "tool_use_id": use_id, "is_error": is_error,
                                "content": [{"type": "text", "text": text}]})
            messages.append({"role": "assistant", "content": [{"type": "text", "text": reply.text}, *uses]})
            messages.append({"role": "user", "content": results})
        return "max_steps", ""

    async def _act(self, name: str, tool_input: dict[str, Any]) -> str:
        session = self.session
        if name == "set_output":
            self.output = tool_input
            return "output recorded"
        if name == "navigate":
            return await session.navigate(tool_input["url"])
        if name == "click":
            return await session.click(tool_input["element_id"])
        if name == "fill":
            text = SECRETS.get(tool_input["text"], tool_input["text"])
            return await session.fill(tool_input["element_id"], text)
        if name == "select_option":
            return await session.select_option(tool_input["element_id"], tool_input["option"])
        if name == "check":
            return await session.check(tool_input["element_id"], checked=tool_input.get("checked", True))
        if name == "upload":
            paths = [self.resources[resource] for resource in tool_input["resources"]]
            return await session.set_input_files(tool_input["element_id"], paths)
        if name == "wait_for":
            return await session.wait_for(text=tool_input.get("text"), element_id=tool_input.get("element_id"),
                                          timeout_s=tool_input.get("timeout_s", 5.0))
        raise AssertionError(f"the policy called a tool this loop does not know: {name}")


def _task(sku: str, **extra: Any) -> str:
    data = {"sku": sku, "title": "Red leather bag", "description": "Roomy.\nBarely used.", "price": 89.5,
            "category": "Bags", "condition": "Good", "photos": ["listing_image_1", "listing_image_2"],
            "username": "demo", "password": "{{secret:shop_password}}", **extra}
    return f"List this item on the marketplace.\n\n```json\n{json.dumps(data, indent=2)}\n```"


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    launched = await Browser.launch(BrowserConfig(headless=True))
    yield launched
    await launched.close()


@pytest.fixture
def images(tmp_path: Path) -> dict[str, Path]:
    first, second = tmp_path / "bag-front.jpg", tmp_path / "bag-side.png"
    Image.new("RGB", (80, 60), (180, 20, 20)).save(first, "JPEG")
    Image.new("RGB", (50, 50), (90, 20, 20)).save(second, "PNG")
    return {"listing_image_1": first, "listing_image_2": second}


async def test_policy_lists_once_and_then_finds_the_listing(browser: Browser, images: dict[str, Path]) -> None:
    with Marketplace(users={"demo": "demo-pass"}) as shop:
        session = await browser.new_tab()
        loop = TinyLoop(session, images)
        await session.navigate(shop.url("/listings"))

        status, feedback = await loop.run(MarketplaceListingPolicy(), _task("BAG-7"))
        assert (status, feedback) == ("complete", f"Listed SKU BAG-7 at {shop.url('/listings/1')}.")
        [listing] = shop.listings()
        assert loop.output == {"listing_url": listing.url, "sku": "BAG-7"}
        assert (listing.title, listing.price, listing.category, listing.condition) == \
            ("Red leather bag", 89.5, "Bags", "Good")
        assert listing.description == "Roomy.\nBarely used."
        assert [photo.content for photo in listing.photos] == [path.read_bytes() for path in images.values()]
        assert [photo.filename for photo in listing.photos] == ["bag-front.jpg", "bag-side.png"]

        # A rerun of the same task finds the listing through the SKU search and creates nothing.
        rerun = TinyLoop(session, images)
        await session.navigate(shop.url("/help"))
        status, feedback = await rerun.run(MarketplaceListingPolicy(), _task("BAG-7"))
        assert status == "complete" and "already listed" in feedback
        assert rerun.output == {"listing_url": listing.url, "sku": "BAG-7"}
        assert len(shop.listings()) == 1
        publishes = [r for r in shop.request_log if r.method == "POST" and r.path.endswith("/publish")]
        assert len(publishes) == 1
        await session.close()


async def test_policy_starts_from_a_blank_page_and_can_be_told_to_abort(browser: Browser,
                                                                        images: dict[str, Path]) -> None:
    with Marketplace(users={"demo": "demo-pass"}) as shop:
        session = await browser.new_tab()
        status, reason = await TinyLoop(session, images).run(
            MarketplaceListingPolicy(abort_on_sku={"BAG-8"}), _task("BAG-8", site_url=shop.url("/listings"))
        )
        assert (status, reason) == ("abort", "told to abort the listing of SKU BAG-8")
        assert shop.request_log == []  # it never touched the site

        loop = TinyLoop(session, images)
        status, feedback = await loop.run(MarketplaceListingPolicy(login_only=True),
                                          _task("BAG-8", site_url=shop.url("/listings")))
        assert (status, feedback) == ("complete", "Logged in as demo.")
        assert [r.path for r in shop.request_log if r.method == "POST"] == ["/login"]
        await session.close()
