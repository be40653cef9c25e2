"""@tool: the schema the model sees comes from the signature and docstring; mistakes in a tool are
ConfigErrors at decoration time; the caller's tools are checked for name clashes (no browser here)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import SimpleNamespace
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from webtask_core import tool
from webtask_core.errors import ActionError, ConfigError
from webtask_core.llm.types import ToolCall
from webtask_core.resources import ResourceSet
from webtask_core.tools import (
    FunctionTool,
    OutputSpec,
    StepState,
    Tool,
    ToolContext,
    ToolParams,
    ToolRegistry,
    user_tools,
)
from webtask_core.tools.function import parse_docstring


class Size(BaseModel):
    width_cm: float
    height_cm: float


@tool
async def describe_item(
    sku: str,
    ctx: ToolContext,
    condition: Literal["new", "used"] = "used",
    tags: list[str] | None = None,
    size: Size | None = None,
    quantity: Annotated[int, Field(ge=1, description="How many are for sale.")] = 1,
    note: str = "",
) -> str:
    """Describe an item from the catalogue.

    Use it before filling a listing form.

    Args:
        sku: The item's SKU,
            e.g. SHOE-001.
        condition (str): New or used.
        quantity: Shadowed by the Annotated description.

    Returns:
        A short description.
    """
    return f"{sku} {condition} {tags} {size} {quantity} {note}"


def _context() -> ToolContext:
    # None for the session: the tools run here never touch the page.
    return ToolContext(tab=None, resources=ResourceSet(), output_spec=OutputSpec(), state=StepState())  # type: ignore[arg-type]


def test_the_schema_comes_from_the_signature_and_the_docstring():
    spec = describe_item.spec()
    schema = spec.input_schema
    assert spec.name == "describe_item"
    assert spec.description == "Describe an item from the catalogue.\n\nUse it before filling a listing form."
    assert schema["required"] == ["sku"]
    assert schema["additionalProperties"] is False
    properties = schema["properties"]
    assert list(properties) == ["sku", "condition", "tags", "size", "quantity", "note"]  # ctx is not in it
    assert properties["sku"] == {"type": "string", "description": "The item's SKU, e.g. SHOE-001."}
    assert properties["condition"] == {
        "type": "string", "enum": ["new", "used"], "default": "used", "description": "New or used.",
    }
    assert properties["tags"] == {"type": "array", "items": {"type": "string"}}  # X | None folded, no default
    assert properties["size"] == {"$ref": "#/$defs/Size"}
    assert schema["$defs"]["Size"]["required"] == ["width_cm", "height_cm"]
    # Annotated[..., Field(description=...)] wins over the Args line, and keeps its constraint
    assert properties["quantity"] == {"type": "integer", "minimum": 1, "default": 1, "description": "How many are for sale."}
    assert properties["note"] == {"type": "string", "default": ""}
    assert describe_item.uses_browser  # it takes the context


def test_name_and_description_can_be_given_and_a_tool_without_context_does_not_drive_the_page():
    @tool(name="price-of", description="The catalogue price of an item.")
    def price(sku: str) -> float:
        """Not what the model reads."""
        return 45.0

    assert isinstance(price, FunctionTool) and isinstance(price, Tool)
    assert (price.name, price.description) == ("price-of", "The catalogue price of an item.")
    assert not price.uses_browser
    assert price("SHOE-001") == 45.0  # still callable as the plain function


async def test_run_calls_the_function_with_validated_parameters_and_the_context():
    seen: dict[str, Any] = {}

    @tool()
    async def measure(size: Size, context: ToolContext, labels: list[str]) -> Size:
        """Record a size."""
        seen.update(size=size, context=context, labels=labels)
        return size

    ctx = _context()
    params = measure.parse({"size": {"width_cm": 30, "height_cm": 12.5}, "labels": ["a"]})
    result = await measure.run(params, ctx)
    assert seen == {"size": Size(width_cm=30, height_cm=12.5), "context": ctx, "labels": ["a"]}  # a model, not a dict
    assert result == '{"width_cm":30.0,"height_cm":12.5}'


@dataclasses.dataclass
class Stock:
    sku: str
    count: int


@pytest.mark.parametrize(
    ("returned", "text"),
    [
        ("plain text", "plain text"),
        (None, ""),  # the registry shows it as "done"
        ({"price": 45, "currency": "USD"}, '{"price":45,"currency":"USD"}'),
        ([1, "two"], '[1,"two"]'),
        (Stock("SHOE-001", 3), '{"sku":"SHOE-001","count":3}'),
        (True, "true"),
        (object, f'"{object}"'),  # no JSON form: its str()
    ],
)
async def test_the_return_value_becomes_text(returned, text):
    @tool
    def answer() -> Any:
        """Answer."""
        return returned

    assert await answer.run(answer.parse({}), _context()) == text


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "invalid input for describe_item: sku: Field required"),
        ({"sku": 5}, "sku: Input should be a valid string (got 5)"),
        ({"sku": "A", "condition": "broken"}, "condition: Input should be 'new' or 'used'"),
        ({"sku": "A", "quantity": 0}, "quantity: Input should be greater than or equal to 1"),
        ({"sku": "A", "colour": "red"}, "colour: Extra inputs are not permitted"),
        ({"sku": "A", "size": {"width_cm": 1}}, "size.height_cm: Field required"),
        ({"sku": "A", "ctx": "x"}, "ctx: Extra inputs are not permitted"),  # the context is not a parameter
    ],
)
def test_bad_input_is_an_action_error_naming_the_parameter(raw, message):
    with pytest.raises(ActionError) as caught:
        describe_item.parse(raw)
    assert message in str(caught.value)


def _no_annotation(sku) -> str:  # noqa: ANN001 - the mistake under test
    """Doc."""
    return sku


def _star_args(*skus: str) -> str:
    """Doc."""
    return ""


def _positional_only(sku: str, /) -> str:
    """Doc."""
    return sku


def _no_doc(sku: str) -> str:
    return sku


def _two_contexts(a: ToolContext, b: ToolContext) -> str:
    """Doc."""
    return ""


def _unresolvable(sku: NotDefinedAnywhere) -> str:  # noqa: F821 - the mistake under test
    """Doc."""
    return ""


def _private(_sku: str) -> str:
    """Doc."""
    return ""


def _no_schema(callback: Callable[[str], str]) -> str:
    """Doc."""
    return ""


@pytest.mark.parametrize(
    ("function", "options", "message"),
    [
        (_no_annotation, {}, "_no_annotation: parameter 'sku' needs a type annotation"),
        (_star_args, {}, "parameter 'skus' must be one that can be given by name"),
        (_positional_only, {}, "parameter 'sku' must be one that can be given by name"),
        (_no_doc, {}, "_no_doc: give it a docstring or description="),
        (_two_contexts, {}, "only one parameter can take the ToolContext"),
        (_unresolvable, {}, "cannot resolve its type annotations"),
        (_private, {}, "parameter '_sku' cannot start with _"),
        (_no_schema, {}, "its parameters cannot be a JSON schema"),
        (_no_doc, {"name": "has space", "description": "d"}, "tool name 'has space' must be 1-64 letters"),
        ("not callable", {}, "expected a function, got str"),
    ],
)
def test_a_tool_that_cannot_be_built_is_a_config_error(function, options, message):
    with pytest.raises(ConfigError) as caught:
        FunctionTool(function, **options)
    assert caught.value.parameter == "tools"
    assert message in caught.value.problem


def test_parse_docstring_keeps_the_text_before_the_sections_and_the_args_lines():
    doc = """Summary line.

    Second paragraph
    over two lines.

    Args:
        first (int): One,
            and more.
        second: Two.

            Still two.
        third:
    Raises:
        ValueError: not an argument.
    """
    import inspect

    description, args = parse_docstring(inspect.cleandoc(doc))
    assert description == "Summary line.\n\nSecond paragraph\nover two lines."
    assert args == {"first": "One, and more.", "second": "Two. Still two.", "third": ""}
    assert parse_docstring(None) == ("", {})


class _LookupTool(Tool):
    name = "lookup_sku"
    description = "A hand-written tool."
    uses_browser = False

    class Params(ToolParams):
        sku: str

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return params.sku


def _plain(sku: str) -> str:
    """An undecorated function."""
    return sku


def test_user_tools_takes_tools_and_plain_functions_and_appends_them_to_the_defaults():
    hand_written = _LookupTool()
    checked = user_tools([describe_item, hand_written, _plain])
    assert checked[:2] == (describe_item, hand_written)
    assert isinstance(checked[2], FunctionTool) and checked[2].name == "_plain"
    registry = ToolRegistry.default(extra=checked)
    assert registry.names[-4:] == ["ask_human", "describe_item", "lookup_sku", "_plain"]
    assert user_tools(None) == () and user_tools([]) == ()


@tool
def click(element_id: str) -> str:
    """My own click."""
    return element_id


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([click], "'click' is already the name of a built-in tool; rename yours (@tool(name=...))"),
        ([_plain, FunctionTool(_no_doc, name="_plain", description="d")],
         "'_plain' is already the name of another of your tools"),
        ([_LookupTool], "_LookupTool is a class: pass a tool instance or a function"),
        (describe_item, "must be a list of tools, got FunctionTool"),
        ("describe_item", "must be a list of tools, got str"),
        ([42], "expected a function, got int"),
    ],
)
def test_user_tools_refuses_clashes_and_things_that_are_not_tools(tools, message):
    with pytest.raises(ConfigError) as caught:
        user_tools(tools)
    assert caught.value.parameter == "tools"
    assert message in caught.value.problem


async def test_a_call_before_call_says_is_not_needed_is_done_with_its_note_and_not_run():
    ran: list[str] = []

    @tool()
    async def note_sku(sku: str) -> str:
        """Note a SKU."""
        ran.append(sku)
        return f"noted {sku}"

    async def before_call(call: ToolCall, first: bool) -> str | None:
        return "not needed: shown already" if call.input["sku"] == "B" else None

    after: list[str] = []

    async def after_call(call: ToolCall, message: str) -> str:
        after.append(message)
        return message

    calls = [ToolCall(id=f"t{n}", name="note_sku", input={"sku": sku}) for n, sku in enumerate("ABC")]
    # The registry reads only the tab's URL after each call; these calls never touch a page.
    ctx = dataclasses.replace(_context(), tab=SimpleNamespace(url="http://shop.test/"))  # type: ignore[arg-type]
    outcomes = await ToolRegistry([note_sku]).run_calls(calls, ctx, page_url="http://shop.test/",
                                                        before_call=before_call, after_call=after_call)
    assert [(outcome.ok, outcome.message) for outcome in outcomes] == [
        (True, "noted A"), (True, "not needed: shown already"), (True, "noted C")]
    assert ran == ["A", "C"] and after == ["noted A", "noted C"]  # neither run nor watched after
