"""Hand-written Messages API request bodies in the shape of docs/internals.md §3, and sample page trees
of the demo marketplace in the §2 format, for testing scripted policies without a worker."""

from __future__ import annotations

import json
from typing import Any

SITE = "http://127.0.0.1:8123"

LISTING = {
    "sku": "SHOE-001",
    "title": "Blue suede shoes",
    "description": "Worn twice.\nSize 8.",
    "price": 45.0,
    "category": "Women's Shoes",
    "condition": "Like new",
    "photos": ["listing_image_1", "listing_image_2"],
    "username": "demo",
    "password": "{{secret:shop_password}}",
}

# Trees as the browser layer renders the demo marketplace (captured, then trimmed by hand).
NAV = """- a-0 (href="/listings") "Closet Exchange"
- nav "Main"
  - a-1 (href="/listings") "My listings"
  - a-2 (href="/listings/new") "New listing"
  - a-3 (href="/help") "Help"
- text: "Signed in as demo"
- button-0 "Log out\""""

LOGIN_TREE = """- a-0 (href="/listings") "Closet Exchange"
- h1 "Log in"
- text: "Welcome back! Log in to manage your closet."
- form
  - input-0 (type="text" name="username") "Username"
  - input-1 (type="password" name="password") "Password"
  - button-0 "Log in\""""

LISTINGS_TREE = NAV + """
- h1 "My listings"
- a-4 (href="/listings/new") "+ New listing"
- form
  - input-0 (type="search" name="sku" placeholder="e.g. ABC-123") "Search by SKU"
  - button-1 "Search"
- text: "You have no listings yet."
- text: "We use cookies to keep you signed in and to understand how the site is used. See our"
- a-5 (href="/help") "cookie policy"
- text: "."
- button-2 "Accept\""""

NO_RESULTS_TREE = NAV + """
- h1 "My listings"
- a-4 (href="/listings/new") "+ New listing"
- form
  - input-0 (type="search" name="sku" placeholder="e.g. ABC-123" value="SHOE-001") "Search by SKU"
  - button-1 "Search"
  - a-5 (href="/listings") "Clear search"
- status "No listings with SKU “SHOE-001”.\""""

FOUND_TREE = NAV + """
- h1 "My listings"
- a-4 (href="/listings/new") "+ New listing"
- form
  - input-0 (type="search" name="sku" placeholder="e.g. ABC-123" value="SHOE-001") "Search by SKU"
  - button-1 "Search"
  - a-5 (href="/listings") "Clear search"
- status "1 listing with SKU “SHOE-001”"
- table
  - a-6 (href="/listings/7") "Blue suede shoes"
  - text: "SHOE-001"
  - text: "$45.00\""""

_FORM_TREE = NAV + """
- h1 "New listing"
{alert}- form
  - text: "Photos"
  - input-0 (type="file" name="photos"{photos_value} multiple) "Add photos"
  - text: "{status}"
{previews}  - input-1 (type="text" name="title" placeholder="What are you selling?"{title_value}) "Title"
  - textarea-0 (name="description" placeholder="Size, colour, fit, flaws…") "Description"
  - select-0 (name="category" value="Select a category" options="Select a category | Women's Shoes | … 18 options") "Category"
  - fieldset "Condition"
    - input-2 (type="radio" name="condition" value="nwt") "New with tags"
    - input-3 (type="radio" name="condition" value="like-new") "Like new"
    - input-4 (type="radio" name="condition" value="good") "Good"
    - input-5 (type="radio" name="condition" value="fair") "Fair"
  - input-6 (type="text" name="price" placeholder="0.00"{price_value}) "Price (USD)"
{price_error}  - input-7 (type="text" name="sku" placeholder="Your own stock code") "SKU"
  - a-4 (href="/listings") "Cancel"
  - button-1 (type="submit"{next_state}) "Next\""""


def form_tree(status: str = "No photos added yet", *, price_error: str = "", title: str = "",
              price: str = "", next_disabled: bool = False) -> str:
    ready = status.endswith("ready")
    return _FORM_TREE.format(
        alert='- alert "Please fix the errors below."\n' if price_error else "",
        status=status,
        photos_value=' value="a.jpg, b.png"' if ready or "Preparing" in status else "",
        previews='  - img "Preview of a.jpg"\n  - img "Preview of b.png"\n' if ready else "",
        title_value=f' value="{title}"' if title else "",
        price_value=f' value="{price}"' if price else "",
        price_error=f'  - text: "Error: {price_error}"\n' if price_error else "",
        next_state=" disabled" if next_disabled else "",
    )


CONFIRM_TREE = NAV + """
- h1 "Review your listing"
- text: "Check the details below, then publish. Buyers will see exactly this."
- img "Photo 1: front.jpg"
- text: "Title"
- text: "Blue suede shoes"
- text: "SKU"
- text: "SHOE-001"
- form
  - a-4 (href="/listings/new") "Start over"
  - button-1 "Publish\""""

LISTING_PAGE_TREE = NAV + """
- status "Your listing is live!"
- h1 "Blue suede shoes"
- text: "$45.00"
- img "Photo 1 of Blue suede shoes"
- text: "SKU"
- text: "SHOE-001"
- a-4 (href="/listings") "Back to my listings\""""

OUTPUT_SCHEMA_TOOL = {
    "name": "set_output",
    "description": "Report the result.",
    "input_schema": {"type": "object", "properties": {"listing_url": {"type": "string"}, "sku": {"type": "string"}},
                     "required": ["listing_url", "sku"]},
}
PLAIN_OUTPUT_TOOL = {
    "name": "set_output",
    "description": "Report the result.",
    "input_schema": {"type": "object", "properties": {"output": {}}, "required": ["output"]},
}


def task_block(data: dict[str, Any] | None = None, prose: str = "List this item on the marketplace.") -> str:
    body = prose if data is None else f"{prose}\n\n```json\n{json.dumps(data, indent=2)}\n```"
    return f"<task>\n{body}\n</task>"


def page_block(url: str, tree: str, step: int, title: str = "Closet Exchange") -> str:
    return f'<page url="{url}" title="{title}" step="{step}">\n{tree}\n</page>'


def collapsed_block(url: str, step: int, title: str = "Closet Exchange") -> str:
    return f'<page url="{url}" title="{title}" step="{step}" collapsed/>'


def build_request(
    url: str,
    tree: str,
    *,
    data: dict[str, Any] | None = None,
    task: str | None = None,
    resources: tuple[str, ...] = ("listing_image_1", "listing_image_2"),
    turns: list[tuple[str, list[tuple[str, dict[str, Any], str, bool]]]] = (),  # type: ignore[assignment]
    tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A request at step len(turns)+1. Each turn is (url of the page it acted on, [(tool, input,
    result text, is_error)]); earlier page states appear collapsed, the current one in full."""
    resource_lines = "\n".join(f"- {name} (image/jpeg, 12 KB)" for name in resources) or "(no files were given)"
    first: list[dict[str, Any]] = [
        {"type": "text", "text": task if task is not None else task_block(LISTING if data is None else data)},
        {"type": "text", "text": f"<resources>\n{resource_lines}\n</resources>"},
    ]
    messages: list[dict[str, Any]] = [{"role": "user", "content": first}]
    tool_counter = 0
    for step, (turn_url, calls) in enumerate(turns, start=1):
        messages[-1]["content"].append({"type": "text", "text": collapsed_block(turn_url, step)})
        uses, results = [], []
        for name, tool_input, result, is_error in calls:
            tool_counter += 1
            uses.append({"type": "tool_use", "id": f"toolu_{tool_counter:03d}", "name": name, "input": tool_input})
            results.append({"type": "tool_result", "tool_use_id": f"toolu_{tool_counter:03d}",
                            "content": [{"type": "text", "text": result}], "is_error": is_error})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Working."}, *uses]})
        messages.append({"role": "user", "content": results})
    messages[-1]["content"] += [
        {"type": "text", "text": page_block(url, tree, len(turns) + 1)},
        {"type": "text", "text": "<history>\nNo actions yet.\n</history>"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "AAAA"}},
    ]
    return {
        "model": "claude-test",
        "max_tokens": 1024,
        "system": "You are a careful web automation agent.",
        "tools": tools if tools is not None else [OUTPUT_SCHEMA_TOOL],
        "messages": messages,
    }
