"""Tools that drive the page. Each is a thin, typed front for one BrowserTab method."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from webtask_core.limits import PRESS_TIMES_MAX, SCROLL_MAX, SETTLED_QUIET_S, WAIT_FOR_DEFAULT_S, WAIT_FOR_MAX_S
from webtask_core.tools.base import Tool, ToolContext, ToolParams

__all__ = [
    "NavigateTool",
    "ClickTool",
    "FillTool",
    "TypeTool",
    "SelectOptionTool",
    "CheckTool",
    "PressKeyTool",
    "ScrollTool",
    "HoverTool",
    "GoBackTool",
    "SwitchTabTool",
    "WaitForTool",
    "UploadTool",
    "DragTool",
    "BROWSER_TOOLS",
    "WAIT_FOR_MAX_S",
]


def _element_id() -> Any:
    return Field(description="Id of an element in the current page state, e.g. button-3.")


def _optional_element_id() -> Any:
    return Field(default=None, description="Id of an element in the current page state.")


class NavigateTool(Tool):
    name = "navigate"
    description = "Open a URL in the current tab. Use only URLs the task or the page gives you."

    class Params(ToolParams):
        url: str = Field(description="Absolute http(s) URL.")

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return await ctx.tab.navigate(params.url)


class ClickTool(Tool):
    name = "click"
    description = "Click an element (buttons, links, checkboxes, menu items, any clickable element)."

    class Params(ToolParams):
        element_id: str = _element_id()

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return await ctx.tab.click(params.element_id)


class FillTool(Tool):
    name = "fill"
    description = (
        "Replace the value of a text input, textarea or editable region with the given text. A rich-text "
        "editor (contenteditable) takes formatted text in the notation the page state shows its value in: "
        "**bold**, *italic*, __underline__, ~~struck~~, `code`, [text](url), lines starting with - or 1. "
        "for lists, # for headings, > for quotes, lines separated by \\n; a code or markdown editor takes the "
        "text as is. The result says what the editor shows afterwards. On a slider (a range input, or an "
        "element with role=\"slider\" and a value) it moves the slider to that value."
    )

    class Params(ToolParams):
        element_id: str = _element_id()
        text: str = Field(description="The new value. Secret placeholders are typed as-is.")

    async def run(self, params: Params, ctx: ToolContext) -> str:
        text = await ctx.reveal(params.text, params.element_id)
        return ctx.mask(await ctx.tab.fill(params.element_id, text, conceal=text != params.text))


class TypeTool(Tool):
    name = "type"
    description = (
        "Type text with the keyboard, key by key, into the given element or the focused one. Use it "
        "for fields that react to keystrokes (autocomplete, search as you type); fill is faster."
    )

    class Params(ToolParams):
        text: str = Field(description="Text to type. Secret placeholders are typed as-is.")
        element_id: str | None = _optional_element_id()

    async def run(self, params: Params, ctx: ToolContext) -> str:
        text = await ctx.reveal(params.text, params.element_id)
        message = await ctx.tab.type(text, element_id=params.element_id, conceal=text != params.text)
        return ctx.mask(message)


class SelectOptionTool(Tool):
    name = "select_option"
    description = (
        "Choose an option of a <select>, or of a drop-down the page built itself (a combobox or listbox "
        "widget: give its element id; it is opened and the option clicked), by the option's text exactly "
        "as the page shows it (case aside). A near match is not taken: the error lists the options, so "
        "you can pick the right one. For a select that takes several options, give a list: they are "
        "added to those already selected. A long list is scrolled through (or typed into) before an "
        "option is called missing. The result says what the widget shows afterwards, and is an "
        "error when it did not take the option."
    )

    class Params(ToolParams):
        element_id: str = _element_id()
        option: str | list[str] = Field(description="The option's text, exactly as listed; a list of them for several.")

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return await ctx.tab.select_option(params.element_id, params.option)


class CheckTool(Tool):
    name = "check"
    description = "Set a checkbox or radio button to checked (or unchecked with checked=false)."

    class Params(ToolParams):
        element_id: str = _element_id()
        checked: bool = True

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return await ctx.tab.check(params.element_id, checked=params.checked)


class PressKeyTool(Tool):
    name = "press_key"
    description = (
        "Press a key or combination (Enter, Escape, Tab, ArrowDown, Control+A) on the given element "
        "or the focused one, `times` times in a row (to move through a list or nudge a slider)."
    )

    class Params(ToolParams):
        key: str = Field(description="Playwright key name, e.g. Enter or Control+A.")
        element_id: str | None = _optional_element_id()
        times: int = Field(default=1, ge=1, le=PRESS_TIMES_MAX, description="How many times to press it.")

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return await ctx.tab.press_key(params.key, element_id=params.element_id, times=params.times)


class DragTool(Tool):
    name = "drag"
    description = (
        "Drag an element with the mouse and drop it: onto another element (to_element_id; to reorder a "
        "list, drop an item onto the item whose place it should take), or by offset_x / offset_y pixels "
        "(a slider's handle, a splitter). Items one can drag show (draggable) in the page state. The "
        "result says whether the dragged element moved."
    )

    class Params(ToolParams):
        element_id: str = Field(description="Id of the element to drag.")
        to_element_id: str | None = Field(default=None, description="Id of the element to drop it onto.")
        offset_x: float = Field(default=0, description="Pixels to the right (negative: left), from the drop point.")
        offset_y: float = Field(default=0, description="Pixels down (negative: up), from the drop point.")

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return await ctx.tab.drag(
            params.element_id, to_element_id=params.to_element_id, offset_x=params.offset_x, offset_y=params.offset_y
        )


class ScrollTool(Tool):
    name = "scroll"
    description = (
        "Scroll up or down: the page, or with element_id a scroll box (its line says scrollable=\"a-b%\", "
        "the part of its content that shows). amount counts heights of what scrolls: viewport heights "
        "for the page, the box's own visible height for a box. Given an element inside a box, the box "
        "around it scrolls. You need not scroll to act on an element: actions scroll it into view."
    )

    class Params(ToolParams):
        direction: Literal["up", "down"]
        amount: float = Field(
            default=1.0, gt=0, le=SCROLL_MAX,
            description="How far, in heights of what scrolls (viewport, or the box's own visible height).",
        )
        element_id: str | None = _optional_element_id()

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return await ctx.tab.scroll(
            direction=params.direction, amount=params.amount, element_id=params.element_id
        )


class HoverTool(Tool):
    name = "hover"
    description = "Move the mouse over an element (to open hover menus or tooltips)."

    class Params(ToolParams):
        element_id: str = _element_id()

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return await ctx.tab.hover(params.element_id)


class GoBackTool(Tool):
    name = "go_back"
    description = "Go back to the previous page in this tab's history."

    class Params(ToolParams):
        pass

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return await ctx.tab.go_back()


class SwitchTabTool(Tool):
    name = "switch_tab"
    description = "Make another open tab the active one (indexes are listed under Open tabs in <history>)."

    class Params(ToolParams):
        tab_index: int = Field(ge=0)

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return await ctx.tab.switch_tab(params.tab_index)


class WaitForTool(Tool):
    name = "wait_for"
    description = (
        "Wait at most timeout_s seconds: with text, until that text shows on the page; with element_id, "
        "until that element is visible; with neither, until the page settles (loaded, no request "
        f"running, no change for {SETTLED_QUIET_S:g} s). Give text or element_id, not both."
    )

    class Params(ToolParams):
        text: str | None = Field(default=None, description="Text to wait for.")
        element_id: str | None = _optional_element_id()
        timeout_s: float = Field(default=WAIT_FOR_DEFAULT_S, gt=0, le=WAIT_FOR_MAX_S)

    async def run(self, params: Params, ctx: ToolContext) -> str:
        return await ctx.tab.wait_for(
            text=params.text, element_id=params.element_id, timeout_s=params.timeout_s
        )


class UploadTool(Tool):
    name = "upload"
    description = (
        "Upload files: give one or more resource names from <resources> and the element id of a file "
        "input (it may be hidden), of a drop zone (the files are dropped onto it), or of an element that "
        "opens the file chooser when clicked. Several names upload several files at once."
    )

    class Params(ToolParams):
        element_id: str = Field(description="Id of the file input, the drop zone or the element that opens the file chooser.")
        resources: list[str] = Field(min_length=1, description="Resource names from <resources>.")

    async def run(self, params: Params, ctx: ToolContext) -> str:
        # Check every name (and that its file still exists) before touching the page.
        resources = [ctx.resources.lookup(name) for name in params.resources]
        paths = [resource.checked_path() for resource in resources]
        message = await ctx.tab.set_input_files(params.element_id, paths)
        names = ", ".join(resource.name for resource in resources)
        # The browser's message may name files by path; the model only ever sees resource names.
        for resource in resources:
            message = message.replace(str(resource.path), resource.name)
            message = message.replace(resource.path.name, resource.name)
        return f"{message} (resources: {names})"


BROWSER_TOOLS: tuple[type[Tool], ...] = (
    NavigateTool,
    ClickTool,
    FillTool,
    TypeTool,
    SelectOptionTool,
    CheckTool,
    PressKeyTool,
    ScrollTool,
    HoverTool,
    GoBackTool,
    SwitchTabTool,
    WaitForTool,
    UploadTool,
    DragTool,
)
