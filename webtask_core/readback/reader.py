"""The model reads, code judges: one structured-output call reads the listing's page into its fields.

The request holds the fields' names and the words a page labels them with, the page's element tree
and a screenshot, never the values asked: the model reports what it sees (``report_listing``, a
forced tool call), and :mod:`webtask_core.readback.compare` decides.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from webtask_core.llm.types import ImageBlock, Message, TextBlock, ToolSpec, Usage
from webtask_core.prompt_set import PromptSet
from webtask_core.readback.spec import ReadBack
from webtask_core.readback.templates import FieldReading

if TYPE_CHECKING:
    from webtask_core.browser.models import Observation
    from webtask_core.llm.types import LLM

__all__ = ["READ_TOOL", "PageReading", "ReadError", "reading_tool", "read_with_model", "PICTURES_HINT"]

READ_TOOL = "report_listing"
PICTURES_HINT = "pictures of the item"
_PROMPTS = ("system", "request")

_FIELD = {
    "type": "object",
    "properties": {
        "shown": {"type": ["string", "null"],
                  "description": "The value as the page writes it; null when the page does not show it."},
        "label": {"type": ["string", "null"],
                  "description": "The words the page labels it with; null when it stands alone."},
        "others": {"type": "array", "items": {"type": "string"},
                   "description": "Other values the page shows for this same field (a second price)."},
    },
    "required": ["shown", "label", "others"],
}


class PageReading(BaseModel):
    fields: dict[str, FieldReading] = Field(default_factory=dict)
    pictures: int | None = Field(default=None, ge=0)


class ReadError(Exception):
    """The model's reply was no reading of the page (no report, or one that does not validate);
    ``usage``: what the call cost all the same."""

    def __init__(self, message: str, usage: Usage | None = None):
        super().__init__(message)
        self.usage = usage or Usage()


def reading_tool(spec: ReadBack) -> ToolSpec:
    names = list(spec.expected)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "fields": {"type": "object", "properties": dict.fromkeys(names, _FIELD), "required": names},
            "pictures": {"type": ["integer", "null"], "minimum": 0,
                         "description": "How many pictures of the item the page shows; null when none."},
        },
        "required": ["fields", "pictures"],
    }
    return ToolSpec(name=READ_TOOL, description="Report what the page shows for each field, as written.",
                    input_schema=schema)


def field_hints(spec: ReadBack) -> dict[str, str]:
    """Field name -> the words a page usually labels it with (what the request's <fields> holds)."""
    hints = {name: spec.label_of(name) for name in spec.expected}
    if spec.picture_field:
        hints["pictures"] = PICTURES_HINT
    return hints


async def read_with_model(llm: LLM, spec: ReadBack, observation: Observation, screenshot: bytes | None,
                          scrub: Callable[[str], str] = str) -> tuple[PageReading, Usage]:
    """One forced ``report_listing`` call on the page; ReadError when the reply is no reading."""
    prompts = PromptSet.load("readback", required=_PROMPTS)
    text = prompts.render("request", fields_json=json.dumps(field_hints(spec), ensure_ascii=False),
                          url=observation.url, title=observation.title, tree=observation.tree)
    content: list[TextBlock | ImageBlock] = [TextBlock(text=scrub(text))]
    if screenshot:
        content.append(ImageBlock(data=base64.b64encode(screenshot).decode("ascii")))
    reply = await llm.complete(system=prompts.render("system"), messages=[Message(role="user", content=content)],
                               tools=[reading_tool(spec)], tool_choice=READ_TOOL)
    calls = [call for call in reply.tool_calls if call.name == READ_TOOL]
    if not calls:
        raise ReadError(f"the model did not report the page (no {READ_TOOL} call): {reply.text[:200]!r}", reply.usage)
    try:
        reading = PageReading.model_validate(calls[0].input)
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise ReadError(f"the model's reading of the page does not validate: {where}: {problem['msg']}",
                        reply.usage) from None
    for name in spec.expected:  # a field left out was not seen
        reading.fields.setdefault(name, FieldReading())
    return reading, reply.usage
