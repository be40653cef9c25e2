"""The tool base class, the per-step state tools share, and concise validation messages.

A tool is a small class: a ``name``, a ``description``, a pydantic ``Params`` model (its JSON schema
is what the model sees) and ``async run(params, ctx) -> str``. What the model got wrong raises
:class:`~webtask_core.errors.ActionError`; the runner turns it into an error tool result.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from webtask_core.errors import ActionError
from webtask_core.llm.types import ToolSpec
from webtask_core.resources import ResourceSet
from webtask_core.secrets import ANY_PLACEHOLDER, SECRET_PLACEHOLDER, SecretValues

if TYPE_CHECKING:
    from webtask_core.browser import BrowserTab
    from webtask_core.human import HumanRequest
    from webtask_core.record import WorkerStatus
    from webtask_core.tools.control import OutputSpec

__all__ = [
    "Tool",
    "ToolParams",
    "ToolContext",
    "StepState",
    "compact_schema",
    "validation_message",
    "SECRET_PLACEHOLDER",
]


class ToolParams(BaseModel):
    """Base of every tool's parameters: unknown parameters are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class StepState:
    """What the control tools change during one step; committed to the task only if the step succeeds."""

    output: Any = None
    has_output: bool = False
    output_error: str | None = None  # the last set_output in this step was invalid
    status: WorkerStatus | None = None
    feedback: str = ""
    question: HumanRequest | None = None  # ask_human asked this: the step ends, the answer comes before the next


@dataclass
class ToolContext:
    """What a tool may use while it runs: the page, the task's resources and output spec, the step."""

    tab: BrowserTab
    resources: ResourceSet
    output_spec: OutputSpec
    state: StepState
    secrets: SecretValues = field(default_factory=SecretValues)
    human_available: bool = False  # a handler can answer ask_human (webtask_core.human)

    def __post_init__(self) -> None:
        if not isinstance(self.secrets, SecretValues):
            self.secrets = SecretValues(self.secrets)

    async def reveal(self, text: str, element_id: str | None = None) -> str:
        """Replace ``{{secret:NAME}}`` (and ``{{totp:NAME}}``: the current code) placeholders by their
        values, if the host of the document the text goes to allows it: ``element_id``'s frame, or the
        focused one (not the tab's URL)."""
        if ANY_PLACEHOLDER.search(text) is None:
            return text
        await self.secrets.ready(text)  # a one-time code is typed fresh (webtask_core.totp)
        url = await self.tab.typing_url(element_id) if self.secrets.limited(text) else None
        return self.secrets.reveal(text, url=url)

    def mask(self, text: str) -> str:
        """Put placeholders back in place of secret values, so results never show a secret."""
        return self.secrets.scrub(text)


class Tool:
    """One tool the model can call."""

    # Set in a subclass's body (the built-in tools) or per instance (FunctionTool).
    name: str
    description: str
    Params: type[ToolParams] = ToolParams
    # True for tools that drive the page (they need a live browser); False for set_output etc.
    uses_browser: bool = True

    def input_schema(self) -> dict[str, Any]:
        return copy.deepcopy(_params_schema(self.Params))

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, input_schema=self.input_schema())

    def parse(self, raw: Mapping[str, Any]) -> Any:
        """Validated parameters, or an ActionError with pydantic's message, short."""
        try:
            return self.Params.model_validate(dict(raw))
        except ValidationError as exc:
            raise ActionError(f"invalid input for {self.name}: {validation_message(exc)}") from None

    async def run(self, params: Any, ctx: ToolContext) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def element_of(params: Any) -> str | None:
        """The element id a call targets, if any (calls on elements are skipped after a page change)."""
        value = getattr(params, "element_id", None)
        return value if isinstance(value, str) else None


@cache
def _params_schema(params: type[ToolParams]) -> dict[str, Any]:
    """A parameter class's schema, built once: pydantic takes ~2 ms a tool, and every task asks."""
    return compact_schema(params.model_json_schema())


def validation_message(exc: ValidationError, limit: int = 4) -> str:
    parts: list[str] = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(part) for part in error["loc"]) or "input"
        text = f"{where}: {error['msg']}"
        if error["type"] not in ("missing", "extra_forbidden"):
            text += f" (got {error.get('input')!r:.60})"
        parts.append(text)
    extra = len(exc.errors()) - limit
    return "; ".join(parts) + (f"; and {extra} more" if extra > 0 else "")


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's titles and fold ``X | None`` into ``X``: fewer tokens, same meaning to the model."""

    def clean(node: Any, in_properties: bool = False) -> Any:
        if isinstance(node, dict):
            if in_properties:
                return {key: clean(value) for key, value in node.items()}
            result = {}
            for key, value in node.items():
                if key == "title":
                    continue
                result[key] = clean(value, in_properties=(key in ("properties", "$defs")))
            options = result.get("anyOf")
            if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
                other = next(option for option in options if option != {"type": "null"})
                del result["anyOf"]
                result = {**other, **result}
            if result.get("default", ...) is None:
                del result["default"]
            return result
        if isinstance(node, list):
            return [clean(item) for item in node]
        return node

    return clean(schema)
