"""The witness itself: it fails a test on a tool result that disagrees with the widget, both ways,
and on a test that judged nothing (a stand-in tab whose widget state the test sets)."""

from __future__ import annotations

from typing import Any

import pytest
from witness import Witness

from webtask_core.errors import ActionError


class StandInTab:
    """A tab whose select_option says what the test wants (`says_ok`) whether or not its widget takes
    the option (`takes`)."""

    def __init__(self, says_ok: bool, takes: bool):
        self.page = object()
        self.says_ok = says_ok
        self.takes = takes
        self.holds: list[str] = []

    async def select_option(self, element_id: str, option: str) -> str:
        if self.takes:
            self.holds.append(option)
        if not self.says_ok:
            raise ActionError(f'clicked option "{option}" of {element_id}, but the widget did not take it')
        return f'selected "{option}" in {element_id}'


def judged(tab: StandInTab) -> Witness:
    async def judge(_: Any, arguments: dict[str, Any]) -> bool:
        return arguments["option"] in tab.holds

    return Witness(tab, {"select_option": judge})  # type: ignore[arg-type]


async def test_a_false_failure_fails_the_test():
    tab = StandInTab(says_ok=False, takes=False)
    seen = judged(tab)
    with pytest.raises(ActionError):
        await seen.select_option("div-1", "EU 38")
    seen.check()  # it said it failed, and the widget does not hold it: true
    tab.takes = True  # now the widget takes it, and the tool still says it did not
    with pytest.raises(ActionError):
        await seen.select_option("div-1", "EU 39")
    with pytest.raises(AssertionError, match="false failure"):
        seen.check()


async def test_a_false_success_fails_the_test():
    seen = judged(StandInTab(says_ok=True, takes=False))
    await seen.select_option("div-1", "EU 39")
    with pytest.raises(AssertionError, match="false success"):
        seen.check()


async def test_nothing_judged_fails_the_test():
    with pytest.raises(AssertionError, match="was judged"):
        judged(StandInTab(says_ok=True, takes=True)).check()
