"""Typed tools the model calls; their JSON schemas come from pydantic models (internals.md §4)."""

from webtask_core.tools.ask_human import AskHumanTool
from webtask_core.tools.base import StepState, Tool, ToolContext, ToolParams
from webtask_core.tools.browser_tools import BROWSER_TOOLS, WAIT_FOR_MAX_S
from webtask_core.tools.control import AbortTool, CompleteTool, OutputSchema, OutputSpec, SetOutputTool
from webtask_core.tools.function import FunctionTool, tool
from webtask_core.tools.registry import CallOutcome, ToolRegistry, UserTools, user_tools

__all__ = [
    "Tool",
    "ToolParams",
    "ToolContext",
    "StepState",
    "ToolRegistry",
    "CallOutcome",
    "OutputSpec",
    "OutputSchema",
    "SetOutputTool",
    "CompleteTool",
    "AbortTool",
    "AskHumanTool",
    "BROWSER_TOOLS",
    "WAIT_FOR_MAX_S",
    "tool",
    "FunctionTool",
    "UserTools",
    "user_tools",
]
