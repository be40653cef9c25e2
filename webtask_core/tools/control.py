"""Tools that end or shape the task rather than drive the page: set_output, complete, abort.

``set_output``'s input schema *is* the caller's output schema (a pydantic model class or a JSON
schema dict); an invalid output goes back to the model with the validation error. Without a schema
it takes ``{"output": <anything>}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema
from pydantic import BaseModel, Field, ValidationError

from webtask_core.errors import ActionError, ConfigError
from webtask_core.record import WorkerStatus
from webtask_core.tools.base import Tool, ToolContext, ToolParams, compact_schema, validation_message

__all__ = ["OutputSchema", "OutputSpec", "SetOutputTool", "CompleteTool", "AbortTool"]

OutputSchema = type[BaseModel] | Mapping[str, Any] | None

_FREE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"output": {"description": "The result of the task, any JSON value."}},
    "required": ["output"],
    "additionalProperties": False,
}


class OutputSpec:
    """The output a task expects: its JSON schema for the model, and how to validate an answer."""

    def __init__(self, schema: OutputSchema = None):
        self.model: type[BaseModel] | None = None
        self._validator: jsonschema.protocols.Validator | None = None
        if schema is None:
            self.schema = dict(_FREE_SCHEMA)
        elif isinstance(schema, type) and issubclass(schema, BaseModel):
            self.model = schema
            self.schema = compact_schema(schema.model_json_schema())
        elif isinstance(schema, Mapping):
            self.schema = dict(schema)
            if self.schema.get("type") != "object":
                raise ConfigError(
                    "output_schema", 'a JSON schema for the output must have "type": "object"'
                )
            validator_class = jsonschema.validators.validator_for(self.schema)
            try:
                validator_class.check_schema(self.schema)
            except jsonschema.SchemaError as exc:
                raise ConfigError("output_schema", f"not a valid JSON schema: {exc.message}") from exc
            self._validator = validator_class(self.schema)
        else:
            raise ConfigError(
                "output_schema",
                f"expected a pydantic model class or a JSON schema dict, got {type(schema).__name__}",
            )
        self.given = schema is not None

    def validate(self, raw: Mapping[str, Any]) -> Any:
        """The output as JSON data, or an ActionError the model can act on."""
        if self.model is not None:
            try:
                return self.model.model_validate(dict(raw)).model_dump(mode="json")
            except ValidationError as exc:
                raise ActionError(f"invalid output: {validation_message(exc)}") from None
        if self._validator is not None:
            errors = sorted(self._validator.iter_errors(dict(raw)), key=lambda error: list(error.path))
            if errors:
                parts = [
                    f"{'.'.join(str(part) for part in error.path) or 'output'}: {error.message}"
                    for error in errors[:4]
                ]
                raise ActionError("invalid output: " + "; ".join(parts))
            return dict(raw)
        extra = set(raw) - {"output"}
        if "output" not in raw or extra:
            raise ActionError('invalid output: set_output takes exactly one parameter, "output"')
        return raw["output"]

    def to_user(self, value: Any) -> Any:
        """What the caller gets back: an instance of their model class, else the JSON data."""
        if self.model is not None and value is not None:
            return self.model.model_validate(value)
        return value


class SetOutputTool(Tool):
    name = "set_output"
    uses_browser = False
    description = (
        "Report the result of the task, as the input schema describes. Call it once the task is "
        "done, before complete. An invalid output is rejected with the reason; fix it and call again."
    )

    def __init__(self, spec: OutputSpec):
        self.spec_ = spec

    def input_schema(self) -> dict[str, Any]:
        return self.spec_.schema

    def parse(self, raw: Mapping[str, Any]) -> Any:
        return raw  # validated in run(), so an invalid output is remembered as such

    async def run(self, params: Mapping[str, Any], ctx: ToolContext) -> str:
        try:
            value = self.spec_.validate(params)
        except ActionError as exc:
            ctx.state.output_error = str(exc)
            raise
        ctx.state.output = value
        ctx.state.has_output = True
        ctx.state.output_error = None
        return "output recorded"


class CompleteTool(Tool):
    name = "complete"
    uses_browser = False
    description = (
        "Finish the task successfully, once the current page shows it is done. feedback says what "
        "was done, in a sentence or two. If an output is expected, call set_output first."
    )

    class Params(ToolParams):
        feedback: str = Field(description="What was done, briefly and factually.")

    async def run(self, params: Params, ctx: ToolContext) -> str:
        state = ctx.state
        if ctx.output_spec.given and (state.output_error is not None or not state.has_output):
            problem = state.output_error or "no output was recorded"
            raise ActionError(
                f"complete refused: call set_output with a valid output first ({problem})"
            )
        state.status = WorkerStatus.completed
        state.feedback = params.feedback
        return "task completed"


class AbortTool(Tool):
    name = "abort"
    uses_browser = False
    description = (
        "Give up the task when it cannot be done: a CAPTCHA, a login you have no credentials for, "
        "missing data, a persistent site error. reason says what blocked you."
    )

    class Params(ToolParams):
        reason: str = Field(description="Why the task cannot be done.")

    async def run(self, params: Params, ctx: ToolContext) -> str:
        ctx.state.status = WorkerStatus.aborted
        ctx.state.feedback = params.reason
        return "task aborted"
