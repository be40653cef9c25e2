"""The listing policy's way of correcting a published listing (the task data's ``repair``: the
listing's URL and the fields its page shows otherwise): open the listing, its edit page, set every
field to the task's values, save, and report the URL — never a new listing."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from .replies import Reply, ToolUse
from .request_view import find_element

if TYPE_CHECKING:
    from .policies import _Step

__all__ = ["repair_step"]

_MAX_SAVES = 2


def repair_step(step: _Step) -> Reply | None:
    """The next move of a repair task, or None when the task is not one."""
    repair = step.data.get("repair")
    if not isinstance(repair, dict) or not repair.get("listing_url"):
        return None
    listing_url = urljoin(step.url, str(repair["listing_url"]))
    listing_path = urlsplit(listing_url).path.rstrip("/")
    if step.path == listing_path + "/edit":
        return _edit(step)
    if step.path == listing_path:
        if "saved" in step.query:
            return step._finish(listing_url, f"Corrected SKU {step.sku} at {listing_url} "
                                             f"({', '.join(map(str, repair.get('fields', [])))}).")
        edit = find_element(step.tree, tag="a", text="Edit listing")
        if edit is None:
            return Reply(text="The listing's page offers no edit link.",
                         tool_uses=[ToolUse("abort", {"reason": f"{listing_url} has no 'Edit listing' link"})])
        return Reply(text="Opening the listing's edit page.", tool_uses=[ToolUse("click", {"element_id": edit})])
    return Reply(text="Opening the listing to correct it.", tool_uses=[ToolUse("navigate", {"url": listing_url})])


def _edit(step: _Step) -> Reply:
    if "Error:" in step.tree and step._trailing_visits(step.path) >= _MAX_SAVES:
        return Reply(text="The site keeps rejecting the changes.",
                     tool_uses=[ToolUse("abort", {"reason": "the edit page rejected the corrected values"})])
    fields = {name: step._form_field(name) for name in ("title", "description", "price", "category")}
    save = find_element(step.tree, tag="button", text="Save changes")
    condition = step._condition_radio()
    missing = [name for name, element_id in fields.items() if element_id is None]
    if missing or save is None or condition is None:
        return Reply(text="The edit page lacks what I need.", tool_uses=[ToolUse(
            "abort", {"reason": f"the edit page lacks {', '.join(missing or ['a Save button or the condition'])}"})])
    quantity = step._form_field("quantity") if "quantity" in step.data else None
    return Reply(text="Setting every field to the listing's values and saving.", tool_uses=[
        ToolUse("fill", {"element_id": fields["title"], "text": str(step.data["title"])}),
        ToolUse("fill", {"element_id": fields["description"], "text": str(step.data["description"])}),
        ToolUse("fill", {"element_id": fields["price"], "text": str(step.data["price"])}),
        *([ToolUse("fill", {"element_id": quantity, "text": str(step.data["quantity"])})] if quantity else []),
        ToolUse("select_option", {"element_id": fields["category"], "option": str(step.data["category"])}),
        ToolUse("check", {"element_id": condition, "checked": True}),
        ToolUse("click", {"element_id": save}),
    ])
