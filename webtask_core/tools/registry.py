"""The tool registry: names → tools, specs for the model, and running one reply's calls in order.

Running a reply's calls follows three rules, so the model never acts on a page it has not seen:

- a call the model got wrong (unknown tool, input that is not an object, bad parameters, an
  ActionError from the page) becomes an error result, and the calls after it are skipped;
- after a call that moved the page to another URL, calls that name an element id are skipped (ids
  belong to the page state the model saw) — unless the page is still the document the model saw
  (an autosave's ``replaceState`` turning a create URL into an edit URL loads nothing: the ids stand);
- after ``complete`` or ``abort`` nothing else runs, nor after ``ask_human`` (the answer comes first).

Every result message and URL is scrubbed of secret values before it is returned (a page, or a
Playwright error, may quote what was typed into it).

TransientError (model or browser infrastructure) is not caught: it propagates to the step's caller.

The caller's own tools (``Agent(tools=...)``, see tools/function.py) come after the built-in ones;
:func:`user_tools` checks them once, when the Agent or Worker is built.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from webtask_core.errors import ActionError, ConfigError
from webtask_core.llm.types import ToolCall, ToolSpec
from webtask_core.tools.ask_human import AskHumanTool
from webtask_core.tools.base import Tool, ToolContext
from webtask_core.tools.browser_tools import BROWSER_TOOLS
from webtask_core.tools.control import AbortTool, CompleteTool, OutputSpec, SetOutputTool
from webtask_core.tools.function import FunctionTool

__all__ = ["CallOutcome", "ToolRegistry", "MAX_RESULT_CHARS", "UserTools", "user_tools"]

# What Agent(tools=...) takes: Tool instances (e.g. made with @tool) or plain typed functions.
UserTools = Iterable[Tool | Callable[..., Any]]

# A tool result longer than this is cut: an error can quote a malformed call's megabytes of input.
MAX_RESULT_CHARS = 2000


@dataclass
class CallOutcome:
    call: ToolCall
    ok: bool
    message: str
    url: str  # the page URL after the call
    skipped: bool = False
    duration_ms: float = 0.0


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool]):
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
        self._specs = [tool.spec() for tool in self._tools.values()]

    @classmethod
    def default(cls, output_spec: OutputSpec | None = None, extra: Sequence[Tool] = ()) -> ToolRegistry:
        """The §4 tool set, then ``extra`` (the caller's tools); set_output's schema is the task's
        output schema."""
        tools: list[Tool] = [tool_class() for tool_class in BROWSER_TOOLS]
        tools += [SetOutputTool(output_spec or OutputSpec()), CompleteTool(), AbortTool(), AskHumanTool(), *extra]
        return cls(tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return list(self._specs)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def parse(self, call: ToolCall) -> tuple[Tool, Any]:
        tool = self._tools.get(call.name)
        if tool is None:
            raise ActionError(
                f"unknown tool {_clipped(repr(call.name), 80)}; the tools are: {', '.join(self._tools)}"
            )
        if not isinstance(call.input, dict):
            raise ActionError(
                f"input for {call.name} must be a JSON object of its parameters, got "
                f"{_json_type(call.input)}: {str(call.input)[:80]!r}"
            )
        return tool, tool.parse(call.input)

    async def run_calls(
        self, calls: list[ToolCall], ctx: ToolContext, *, page_url: str, page_document: float = 0.0,
        on_call: Callable[[ToolCall], None] | None = None,
        before_call: Callable[[ToolCall, bool], Awaitable[str | None]] | None = None,
        after_call: Callable[[ToolCall, str], Awaitable[str]] | None = None,
    ) -> list[CallOutcome]:
        """Run one reply's calls in order (see the module docstring for the rules); ``on_call`` is
        told of each call just before it runs, and ``before_call`` awaited then (with whether it is
        the first call of the reply to run; a note it returns says the call need not run: it is done
        with that note, not run); ``after_call`` is given each call that ran and its message, and
        returns the message (an ActionError from it fails the call). ``page_document``: the observed
        document's ``performance.timeOrigin`` (0: unknown, any other URL is another page)."""
        outcomes: list[CallOutcome] = []
        failed: str | None = None
        moved_to: str | None = None
        for call in calls:
            if ctx.state.status is not None:
                ended = f"not run: the task already ended ({ctx.state.status.value})"
                outcomes.append(self._skip(call, ctx, ended))
                continue
            if ctx.state.question is not None:
                outcomes.append(self._skip(call, ctx, "not run: waiting for the person's answer to ask_human; "
                                                      "call it again once you have the answer"))
                continue
            if failed is not None:
                outcomes.append(
                    self._skip(call, ctx, f"not run: an earlier call in this turn ({failed}) failed")
                )
                continue
            started = time.perf_counter()
            try:
                tool, params = self.parse(call)
                element_id = tool.element_of(params)
                if moved_to is not None and element_id is not None:
                    outcomes.append(
                        self._skip(
                            call,
                            ctx,
                            f"not run: the page changed to {moved_to} after an earlier call in this "
                            f"turn, so {element_id} from the old page state does not apply; use the "
                            "ids of the new page state",
                        )
                    )
                    continue
                if on_call is not None:
                    on_call(call)
                needless = await before_call(call, not outcomes) if before_call is not None else None
                if needless is not None:
                    message = needless
                else:
                    message = await tool.run(params, ctx)
                    if after_call is not None:
                        message = await after_call(call, message or "")
            except ActionError as exc:
                failed = call.name
                outcomes.append(
                    CallOutcome(call, ok=False, message=str(exc), url=_url(ctx), duration_ms=_since(started))
                )
                continue
            url = _url(ctx)
            if tool.uses_browser and url != page_url and not await _same_document(ctx, page_document):
                moved_to = url
            outcomes.append(
                CallOutcome(call, ok=True, message=message or "done", url=url, duration_ms=_since(started))
            )
        scrub = ctx.secrets.scrub
        return [
            replace(outcome, message=_clipped(scrub(outcome.message), MAX_RESULT_CHARS), url=scrub(outcome.url))
            for outcome in outcomes
        ]

    @staticmethod
    def _skip(call: ToolCall, ctx: ToolContext, message: str) -> CallOutcome:
        return CallOutcome(call, ok=False, message=message, url=_url(ctx), skipped=True)


def user_tools(tools: UserTools | None) -> tuple[Tool, ...]:
    """The caller's tools as Tool instances (a plain function goes through @tool), or a ConfigError
    naming the tool that is not a tool or whose name a built-in tool or another of them has."""
    if tools is None:
        return ()
    if isinstance(tools, (str, bytes, Tool)) or not isinstance(tools, Iterable):
        raise ConfigError("tools", f"must be a list of tools, got {type(tools).__name__}")
    taken = set(ToolRegistry.default().names)
    checked: list[Tool] = []
    for item in tools:
        if isinstance(item, type):
            raise ConfigError("tools", f"{item.__name__} is a class: pass a tool instance or a function")
        extra = item if isinstance(item, Tool) else FunctionTool(item)
        if extra.name in taken:
            whose = "a built-in tool" if extra.name not in {t.name for t in checked} else "another of your tools"
            raise ConfigError("tools", f"{extra.name!r} is already the name of {whose}; rename yours (@tool(name=...))")
        taken.add(extra.name)
        checked.append(extra)
    return tuple(checked)


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 2)


def _url(ctx: ToolContext) -> str:
    return ctx.tab.url


async def _same_document(ctx: ToolContext, document: float) -> bool:
    """Whether the tab still shows the document observed as ``document`` (a URL its own script changed)."""
    page = ctx.tab.page
    if not document or page is None:
        return False
    try:
        return await ctx.tab.answer("reading which document it shows", page.evaluate("performance.timeOrigin")) == document
    except Exception:  # noqa: BLE001 - a navigation under way destroyed the context, or it is stuck: another document
        return False


def _json_type(value: Any) -> str:
    names = {str: "a string", list: "an array", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
