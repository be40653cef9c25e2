"""A tiny stand-in for the worker that drives a scripted policy over the real browser layer:
observe → a request in the internals.md §3 shape → policy → the tab's actions → tool results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image

from webtask_core.browser import BrowserTab
from webtask_core.errors import ActionError
from webtask_core.testing.replies import Reply

SECRETS = {"{{secret:shop_password}}": "demo-pass"}
SET_OUTPUT = {
    "name": "set_output",
    "description": "Report the listing.",
    "input_schema": {"type": "object", "properties": {"listing_url": {"type": "string"}, "sku": {"type": "string"}},
                     "required": ["listing_url", "sku"]},
}


class TinyLoop:
    """Just enough of a worker to drive a policy: no model, no prompts, the §3 message shapes.

    `requests` holds every request sent to the policy and `replies` what it answered."""

    def __init__(self, session: BrowserTab, resources: dict[str, Path]) -> None:
        self.session = session
        self.resources = resources
        self.output: Any = None
        self.requests: list[dict[str, Any]] = []
        self.replies: list[Reply] = []

    async def run(self, policy: Any, task: str, max_steps: int = 25) -> tuple[str, str]:
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
            self.replies.append(reply)
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


def listing_task(sku: str, **extra: Any) -> str:
    data = {"sku": sku, "title": "Red leather bag", "description": "Roomy.\nBarely used.", "price": 89.5,
            "category": "Bags", "condition": "Good", "photos": ["listing_image_1", "listing_image_2"],
            "username": "demo", "password": "{{secret:shop_password}}", **extra}
    return f"List this item on the marketplace.\n\n```json\n{json.dumps(data, indent=2)}\n```"


def make_images(folder: Path) -> dict[str, Path]:
    """Two small real photos, a JPEG and a PNG, under the resource names the task uses."""
    first, second = folder / "bag-front.jpg", folder / "bag-side.png"
    Image.new("RGB", (80, 60), (180, 20, 20)).save(first, "JPEG")
    Image.new("RGB", (50, 50), (90, 20, 20)).save(second, "PNG")
    return {"listing_image_1": first, "listing_image_2": second}
