"""What a tool says is what happened: every call of the judged tools is checked against the widget's
own API right after it ran.

`Witness(tab, judges)` stands in for the tab (pass it to run_task or call it as the tab). A judge
reads the widget through its own JavaScript API and answers whether the call's wish holds now
(True), does not (False), or cannot be told (None). A call that succeeded while its wish does not
hold is a false success; a call that failed while it holds (and did not hold before) is a false
failure. `check()` fails the test on either, naming the call, what the tool said and what the
widget holds; it also fails when no call was judged at all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Page

from webtask_core.browser import BrowserTab
from webtask_core.errors import ActionError

# (page, the call's arguments) -> does the wish hold now, as the widget's API says? None: not told.
Judge = Callable[[Page, dict[str, Any]], Awaitable[bool | None]]
# (page) -> what the widget's API holds, for the message.
Reader = Callable[[Page], Awaitable[Any]]


@dataclass
class Verdict:
    tool: str
    arguments: dict[str, Any]
    ok: bool
    said: str
    before: bool | None
    after: bool | None
    holds: Any

    @property
    def wrong(self) -> str | None:
        if self.after is None:
            return None
        if self.ok and not self.after:
            return "false success: the tool said it was done, the widget's API says it is not"
        if not self.ok and self.after and not self.before:
            return "false failure: the tool said it failed, the widget's API says it was done"
        return None


class Witness:
    """A BrowserTab whose judged calls are checked against the widget's API (see the module)."""

    def __init__(self, tab: BrowserTab, judges: dict[str, Judge], read: Reader | None = None):
        self._tab = tab
        self._judges = judges
        self._read = read
        self.verdicts: list[Verdict] = []

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._tab, name)
        judge = self._judges.get(name)
        if judge is None or not callable(attribute):
            return attribute

        async def judged(*args: Any, **kwargs: Any) -> Any:
            arguments = _arguments(name, args, kwargs)
            page = self._tab.page
            assert page is not None
            before = await judge(page, arguments)
            try:
                said = await attribute(*args, **kwargs)
            except ActionError as error:
                await self._record(name, arguments, False, str(error), before, judge)
                raise
            await self._record(name, arguments, True, str(said), before, judge)
            return said

        return judged

    async def _record(self, name: str, arguments: dict[str, Any], ok: bool, said: str, before: bool | None,
                      judge: Judge) -> None:
        page = self._tab.page
        assert page is not None
        after = await judge(page, arguments)
        holds = await self._read(page) if self._read is not None else None
        self.verdicts.append(Verdict(name, arguments, ok, said, before, after, holds))

    def check(self) -> None:
        """Fail on any call whose result disagrees with the widget; and when nothing was judged."""
        judged = [verdict for verdict in self.verdicts if verdict.after is not None]
        assert judged, f"no call of {sorted(self._judges)} was judged (calls: {self.verdicts})"
        wrong = [f"{v.tool}({v.arguments}) -> {'ok' if v.ok else 'error'}: {v.said!r}; {v.wrong}; it holds {v.holds!r}"
                 for v in self.verdicts if v.wrong]
        assert not wrong, "a tool result disagrees with the widget:\n" + "\n".join(wrong)


def _arguments(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    names = {"select_option": ("element_id", "option"), "fill": ("element_id", "text"),
             "check": ("element_id", "checked"), "click": ("element_id",), "type": ("text", "element_id")}
    return {**dict(zip(names.get(name, ()), args, strict=False)), **kwargs}


def wanted(arguments: dict[str, Any]) -> list[str]:
    option = arguments["option"]
    return [option] if isinstance(option, str) else list(option)


# The element of the last observation with this id (open shadow roots included), for a judge's script.
_MARKED = """(id) => (window[Symbol.for('webtask.marks')] || [])
  .find((el) => el.isConnected && el.getAttribute('data-wt-id') === id)"""


def chosen_in(labels_of: str) -> Judge:
    """A select_option judge: every option asked is among the labels the widget's API holds.
    `labels_of` is a JavaScript function of the marked element returning the widget's chosen labels
    (through its API: getSelected(), value, getSelectedCountry()...)."""

    async def judge(page: Page, arguments: dict[str, Any]) -> bool | None:
        if "option" not in arguments:
            return None
        script = f"(id) => ({labels_of})(({_MARKED})(id))"
        labels = [" ".join(str(label).split()).casefold() for label in await page.evaluate(script, arguments["element_id"])]
        return all(" ".join(one.split()).casefold() in labels for one in wanted(arguments))

    return judge
