"""User tools from typed functions: ``@tool`` turns a function into a Tool the model can call.

    @tool
    async def lookup_price(sku: str, currency: Literal["USD", "EUR"] = "USD") -> dict[str, float]:
        \"""Look up a product's catalogue price.

        Args:
            sku: The product's SKU, e.g. SHOE-001.
        \"""

- The name is the function's (or ``name=``); the description is the docstring up to its first
  section (``Args:``, ``Returns:``...), or ``description=``. The model reads both to decide when to
  call the tool, so a tool without either is refused.
- The parameters are a pydantic model built from the signature (defaults, ``X | None``, Literal,
  lists, nested models), ``extra="forbid"`` like every ToolParams. A parameter's description comes
  from ``Annotated[T, Field(description=...)]``, else from its line in the ``Args:`` section. Input the
  model got wrong becomes a validation message naming the parameter; the function is not called.
- One parameter annotated :class:`ToolContext` receives the run's context (the tab as
  ``ctx.tab``, ``ctx.resources``, ``ctx.reveal``/``ctx.mask`` for secrets); it is not in the
  schema. A tool that takes it counts as driving the page: after it moved the page to another URL,
  later calls of the same turn that name an element id are skipped.
- ``async def`` runs on the event loop. A plain ``def`` runs in a worker thread, so a blocking call
  (an HTTP client, a database driver) does not stall the loop the browser runs on; a tool that
  drives the page must be ``async def`` (Playwright's objects belong to the loop).
- The return value is the tool result: a str as it is, None as "done", anything else as JSON
  (pydantic models, dataclasses, dicts, lists; unknown objects through ``str()``). Like every result
  it is scrubbed of secret values and cut to ``MAX_RESULT_CHARS``.
- Errors: ActionError is an error result with its message (the input made no sense); TransientError
  propagates (infrastructure: the step is retried). Any other exception is a bug in the tool, not
  something the model did: it is logged with its traceback (secrets redacted) and the model gets an
  error result naming the exception, so it can work around it or abort — the task is not crashed.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, overload

from pydantic import Field, PydanticUserError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import to_json

from webtask_core.errors import ActionError, ConfigError, TransientError
from webtask_core.tools.base import Tool, ToolContext, ToolParams

__all__ = ["FunctionTool", "tool"]

logger = logging.getLogger(__name__)

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what the Anthropic API accepts as a tool name
_SECTION = re.compile(r"^(\w+):\s*$")  # a Google-style section heading: "Args:", "Returns:"
_ARGS_SECTIONS = {"args", "arguments", "parameters", "params"}
_ARG_LINE = re.compile(r"^(\s+)\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")  # "    sku (str): ..."

F = TypeVar("F", bound=Callable[..., Any])


class FunctionTool(Tool):
    """A Tool made from a typed function (see the module docstring). Calling it calls the function."""

    def __init__(self, function: Callable[..., Any], *, name: str | None = None, description: str | None = None):
        if not callable(function):
            raise ConfigError("tools", f"expected a function, got {type(function).__name__}")
        self.function = function
        self.name = name or str(getattr(function, "__name__", ""))
        if not _NAME.match(self.name):
            raise ConfigError("tools", f"tool name {self.name!r} must be 1-64 letters, digits, _ or -")
        summary, arg_docs = parse_docstring(inspect.getdoc(function))
        self.description = (description or summary).strip()
        if not self.description:
            raise ConfigError(
                "tools", f"{self.name}: give it a docstring or description= (the model reads it to know when to call it)"
            )
        self._context, fields = _signature_fields(function, self.name, arg_docs)
        self.uses_browser = self._context is not None
        self._is_async = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
            getattr(function, "__call__", None)  # noqa: B004 - an object whose __call__ is async; not a callable check
        )
        try:
            self.Params = create_model(f"{self.name}_params", __base__=ToolParams, **fields)
            self._schema = Tool.input_schema(self)  # built now, so a type with no JSON schema fails here
        except PydanticUserError as exc:  # e.g. a Callable parameter: the model could not send one
            reason = str(exc).splitlines()[0]
            raise ConfigError("tools", f"{self.name}: its parameters cannot be a JSON schema: {reason}") from None

    def input_schema(self) -> dict[str, Any]:
        return self._schema

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The plain function, for the caller's own code and unit tests."""
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FunctionTool({self.name!r})"

    async def run(self, params: ToolParams, ctx: ToolContext) -> str:
        # Fields as attributes, not model_dump(): nested models reach the function as models.
        kwargs = {field: getattr(params, field) for field in type(params).model_fields}
        if self._context is not None:
            kwargs[self._context] = ctx
        try:
            if self._is_async:
                result = await self.function(**kwargs)
            else:
                result = await asyncio.to_thread(self.function, **kwargs)
            return _as_text(result)
        except (ActionError, TransientError):
            raise
        except Exception as error:  # a bug in the tool: the model is told, the developer gets the traceback
            shown = ctx.secrets.redact_exception(error)
            logger.error("tool %s raised %s", self.name, type(error).__name__,
                         exc_info=(type(shown), shown, shown.__traceback__))
            raise ActionError(f"the tool {self.name} failed: {type(error).__name__}: {shown}") from None


@overload
def tool(function: F, /) -> FunctionTool: ...
@overload
def tool(*, name: str | None = None, description: str | None = None) -> Callable[[F], FunctionTool]: ...


def tool(
    function: Callable[..., Any] | None = None, /, *, name: str | None = None, description: str | None = None
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """``@tool`` or ``@tool(name=..., description=...)``: the function as a :class:`FunctionTool`."""

    def build(target: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(target, name=name, description=description)

    return build if function is None else build(function)


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """A Google-style docstring's text before its first section, and the ``Args:`` descriptions."""
    description: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    indent: int | None = None  # of the Args entries; deeper lines continue the entry above
    current: str | None = None
    for line in (doc or "").splitlines():
        heading = _SECTION.match(line)
        if heading:
            section, indent, current = heading.group(1).lower(), None, None
        elif section is None:
            description.append(line)
        elif section in _ARGS_SECTIONS and line.strip():
            entry = _ARG_LINE.match(line)
            depth = len(line) - len(line.lstrip())
            if entry and (indent is None or depth == indent):
                indent, current = depth, entry.group(2)
                args[current] = entry.group(3).strip()
            elif current is not None and indent is not None and depth > indent:
                args[current] = f"{args[current]} {line.strip()}".strip()
    return "\n".join(description).strip(), args


def _signature_fields(
    function: Callable[..., Any], name: str, arg_docs: dict[str, str]
) -> tuple[str | None, dict[str, Any]]:
    """The context parameter's name (or None) and the other parameters as create_model fields."""
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except (NameError, TypeError) as exc:  # a string annotation naming something not importable
        raise ConfigError("tools", f"{name}: cannot resolve its type annotations: {exc}") from None
    context: str | None = None
    fields: dict[str, Any] = {}
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            raise ConfigError("tools", f"{name}: parameter {parameter.name!r} must be one that can be given by name")
        if parameter.name.startswith("_"):  # pydantic would make it a private attribute, not a field
            raise ConfigError("tools", f"{name}: parameter {parameter.name!r} cannot start with _")
        annotation = hints.get(parameter.name, parameter.empty)
        if annotation is parameter.empty:
            raise ConfigError("tools", f"{name}: parameter {parameter.name!r} needs a type annotation (it is its schema)")
        if isinstance(annotation, type) and issubclass(annotation, ToolContext):
            if context is not None:
                raise ConfigError("tools", f"{name}: only one parameter can take the ToolContext")
            context = parameter.name
            continue
        default = ... if parameter.default is parameter.empty else parameter.default
        doc = arg_docs.get(parameter.name)
        if doc and not _has_description(annotation, default):
            annotation = Annotated[annotation, Field(description=doc)]
        fields[parameter.name] = (annotation, default)
    return context, fields


def _has_description(annotation: Any, default: Any) -> bool:
    metadata = typing.get_args(annotation)[1:] if typing.get_origin(annotation) is Annotated else ()
    infos = [item for item in (*metadata, default) if isinstance(item, FieldInfo)]
    return any(info.description for info in infos)


def _as_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    if result is None:
        return ""  # the registry reports an empty result as "done"
    return to_json(result, fallback=str).decode()
