"""Running one drift case: record once per markup style (and recording flavour), copy the script,
replay it on a changed site with this run's values, and judge what the site stored.

The judge looks only at the site's own record of what was submitted (``DriftSite.events``): exactly
one published listing with exactly this run's values, or nothing at all (the run handed over before
anything was submitted, and the model may then abort). A wrong listing, a draft, a deletion or a
second listing is WRONG, whatever the run reported — unless the read-back (issue 26: every run reads
its listing back) ended the run ``mismatch`` naming exactly the fields the site stored otherwise.
A right listing the read-back flags is a false alarm, and fails too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from drift_model import SellerPolicy
from drift_site import MEANINGS, PASSWORD, USERNAME, DriftSite, Style, Variant
from drift_widgets import WIDGET_MEANINGS
from pydantic import SecretStr

from webtask_core import Agent, WorkerStatus
from webtask_core.browser import Browser
from webtask_core.errors import BrowserCrashedError
from webtask_core.readback import ReadBack
from webtask_core.replay import Replay, ScriptStore
from webtask_core.storage import LocalSessionStore
from webtask_core.testing import FakeLLM
from webtask_core.tools.registry import ToolRegistry
from webtask_core.worker import WorkerOptions

__all__ = ["Case", "Outcome", "DriftEnv", "RECORDED", "THIS_RUN", "THIS_RUN_WIDGETS", "RECORDINGS", "SCRIPT_KEY",
           "RESULTS", "judge", "markdown_table"]

SCRIPT_KEY = "drift-listing.site.v1"
SECRETS = WorkerOptions(secrets={"site_password": SecretStr(PASSWORD)})
# What the recording listed, and what every replay lists unless its case says otherwise: every field
# differs, the box included (recorded on, wanted off), as the values of two listings do.
RECORDED: dict[str, Any] = {
    "sku": "DR-REC", "title": "Brass desk lamp DR-REC", "price": "24.50", "quantity": "3",
    "category": "Home & Garden", "ships_from": "Germany", "ships_to": "France",
    "description": "Brass lamp, works.\nBulb included.", "show_in_search": True,
}
THIS_RUN: dict[str, Any] = {
    "title": "Paperback atlas {sku}", "price": "61.00", "quantity": "7", "category": "Books",
    "ships_from": "Spain", "ships_to": "Italy", "description": "Second-hand atlas.\nA few pencil marks.",
    # WEBTASK_DRIFT_SAME_BOX=1 wants the box on, as recorded, in the cases that do not set it: a
    # diagnostic run showing which cases store something wrong for a reason of their own.
    "show_in_search": os.environ.get("WEBTASK_DRIFT_SAME_BOX") == "1",
}
# The widget form's values (issue 25): the recording's, and every replay's unless its case says
# otherwise — another condition (whose word is not the site's "New listing"), another number of tags,
# a long description in two paragraphs typed with the keyboard.
RECORDED_WIDGETS: dict[str, Any] = {
    "condition": "New", "tags": ["brass", "desk", "vintage"], "available": "2026-03-15",
    "description": "Brass desk lamp from the sixties, rewired last year, with its original linen shade.\n"
                   "Bulb included; the switch is new.",
}
THIS_RUN_WIDGETS: dict[str, Any] = {
    "condition": "Used", "tags": ["atlas", "maps"], "available": "2026-04-02",
    "description": "Second-hand atlas of the world, 1998 edition, with a few pencil marks inside its cover.\n"
                   "Ships in a padded envelope.",
}
BOLD = {"description": "Brass desk lamp, **rewired** last year.\nBulb included."}


@dataclass(frozen=True)
class Recording:
    """How the seller recorded: its values over RECORDED, how it writes (SellerPolicy's options),
    and the site it recorded on (Variant's fields over the style's default)."""

    values: dict[str, Any] = field(default_factory=dict)
    policy: dict[str, Any] = field(default_factory=dict)
    site: dict[str, Any] = field(default_factory=dict)

    @property
    def widgets(self) -> bool:
        return bool(self.site.get("widgets"))


RECORDINGS: dict[str, Recording] = {
    "plain": Recording(),
    "equal": Recording({"price": "5", "quantity": "5"}),  # two fields with the same value
    "dollar": Recording(policy={"price_format": "${}"}),  # typed "$24.50" for 24.50
    "click": Recording(policy={"checkbox_by_click": True}),  # flipped the box with a click
    "box-off": Recording({"show_in_search": False}),  # wanted the box off: nothing to do, no call recorded
    "widgets": Recording(RECORDED_WIDGETS, site={"widgets": True}),  # all tags in one turn
    "widgets-per-turn": Recording(RECORDED_WIDGETS, {"tags_per_turn": True}, {"widgets": True}),
    "widgets-bold": Recording(RECORDED_WIDGETS | BOLD, site={"widgets": True}),  # a bold phrase, typed with Ctrl+B
    # the date a plain text field: the whole form in one turn
    "widgets-plain-date": Recording(RECORDED_WIDGETS, {"date_own_turn": False}, {"widgets": True, "picker": False}),
    # condition New, the radio's default: the seller never clicks it
    "widgets-default-new": Recording(RECORDED_WIDGETS, site={"widgets": True, "condition_default": "new"}),
    "teaser": Recording(site={"teaser": True}),  # the confirm page's select lists the description's first line
    "late-sidebar": Recording(site={"late_sidebar": True}),  # "My listings" draws its sidebar 0.7 s late
    # the description's editor built 2 s after the form loaded (TinyMCE started by a timer)
    "late-editor": Recording(RECORDED_WIDGETS, site={"widgets": True, "editor_delay_ms": 2000}),
    "sections": Recording(site={"sections": True}),  # "Country" under "Ships from" / "Ships to"
    "vat": Recording(site={"vat_note": "Prices incl. VAT"}),  # a line of the form under the price
}
RESULTS: list[Outcome] = []  # every run of this session, for the table at the end

Expect = Literal["any", "zero_calls", "ideally_zero", "handover", "mismatch"]
Fault = Literal["", "crash_after_submit", "crash_mid_submit"]


@dataclass(frozen=True)
class Case:
    """One site change. ``site(style)`` builds the changed site; ``values``: this run's values over
    THIS_RUN; ``expect``: besides "no wrong submission" — ``zero_calls`` (harmless: replay must
    finish it alone, correctly), ``ideally_zero`` (the same, reported but not failed when the model
    was asked), ``handover`` (the page says something a model must weigh: the model must be asked),
    ``mismatch`` (the site stores something else than was typed: the read-back must catch it),
    ``any`` (replayed or handed over, either is fine)."""

    name: str
    what: str
    site: Callable[[Style], Variant]
    styles: tuple[Style, ...] = ("label", "span")
    recording: str = "plain"
    values: dict[str, Any] = field(default_factory=dict)
    expect: Expect = "any"
    fault: Fault = ""
    policy: dict[str, Any] = field(default_factory=dict)  # how the model fills the form when it takes over


@dataclass
class Outcome:
    case: str
    style: str
    what: str
    expect: Expect
    status: str = ""
    replay: str = ""
    model_calls: int = 0
    replayed_steps: int = 0
    handovers: list[str] = field(default_factory=list)
    stored: str = ""  # none | right | what was wrong
    wrong: bool = False
    wrong_fields: list[str] = field(default_factory=list)  # the fields the site stored otherwise
    readback: str = ""  # the read-back's status (method)
    mismatched: list[str] = field(default_factory=list)  # the fields the read-back found shown otherwise
    verdict: str = ""
    feedback: str = ""
    seconds: float = 0.0
    error: str = ""
    notes: list[str] = field(default_factory=list)  # what the model was told where replay handed over
    script: str = ""  # the script's revision after the run, and for a repair how much of it was kept
    kept_steps: int = 0  # a repair's steps that are the recording's, as recorded

    @property
    def passed(self) -> bool:
        return self.verdict.startswith("ok")

    def explain(self) -> str:
        return (f"{self.case} [{self.style}]: {self.verdict} — stored: {self.stored}; replay={self.replay}, "
                f"status={self.status}, read-back={self.readback} {self.mismatched}, "
                f"model calls={self.model_calls}, replayed steps={self.replayed_steps}, "
                f"handovers={self.handovers}, feedback={self.feedback!r}{', error=' + self.error if self.error else ''}")


def _as_number(value: Any) -> Decimal:
    return Decimal(str(value).replace("$", "").strip())


def judge(events: list[tuple[str, dict[str, Any]]], wanted: dict[str, Any],
          wrong_fields: list[str] | None = None) -> tuple[bool, str]:
    """(wrong, what was stored): nothing, or one listing with exactly ``wanted``'s values, is right.
    ``wrong_fields`` gets the names of the fields stored otherwise."""
    if not events:
        return False, "none"
    kinds = [kind for kind, _ in events]
    if kinds != ["publish"]:
        return True, "events " + ", ".join(kinds)
    (_, stored), = events
    differences: list[str] = []
    names = wrong_fields if wrong_fields is not None else []
    widgets = [name for name in WIDGET_MEANINGS if name in stored]
    for name in (*MEANINGS, *widgets):
        got, want = stored.get(name), wanted.get(name)
        if name in ("price", "quantity"):
            same = got is not None and Decimal(got) == _as_number(want)
        elif name == "description":
            same = " ".join(str(got).split()) == " ".join(str(want).split())
        elif name == "show_in_search":
            same = got is bool(want)
        else:
            same = got == want
        if not same:
            differences.append(f"{name}={_shown(got)} (wanted {_shown(want)})")
            names.append(name)
    return (True, "; ".join(differences)) if differences else (False, "right")


def _shown(value: Any) -> str:
    return f"{value:f}" if isinstance(value, Decimal) else repr(value)


def task_for(values: dict[str, Any]) -> str:
    return ("List this item on the seller site: log in, fill in the new-listing form with exactly these "
            "values, check the confirm page, and submit it once.\n"
            f"```json\n{json.dumps(values, indent=2)}\n```")


@contextlib.contextmanager
def crash_at_publish(site: DriftSite, fault: Fault) -> Iterator[list[str]]:
    """The step whose call made the site publish raises a TransientError once (the browser "died"),
    through ToolRegistry.run_calls as the repo's own replay test injects it. ``crash_after_submit``:
    after the step's calls ran (the published page had loaded); ``crash_mid_submit``: as soon as the
    listing is stored, while the browser still waits for the answer (the site holds it back)."""
    crashed: list[str] = []
    if not fault:
        yield crashed
        return
    published = threading.Event()
    site.on_publish.append(published.set)
    if fault == "crash_mid_submit":
        site.hold_answer = threading.Event()
    real = ToolRegistry.run_calls

    def crash(calls: Any) -> BrowserCrashedError:
        crashed.append(calls[0].id if calls else "?")
        if site.hold_answer is not None:
            site.hold_answer.set()  # later Submits are answered at once
        return BrowserCrashedError("the browser died right after the Submit click (injected by the drift suite)")

    async def run_calls(self: ToolRegistry, calls: Any, *args: Any, **kwargs: Any) -> Any:
        if crashed:
            return await real(self, calls, *args, **kwargs)
        running = asyncio.ensure_future(real(self, calls, *args, **kwargs))
        while not running.done() and not (fault == "crash_mid_submit" and published.is_set()):
            await asyncio.wait({running}, timeout=0.02)
        if not running.done():
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await running
            raise crash(calls)
        outcomes = running.result()
        if published.is_set():
            raise crash(calls)
        return outcomes

    ToolRegistry.run_calls = run_calls  # type: ignore[method-assign]
    try:
        yield crashed
    finally:
        ToolRegistry.run_calls = real  # type: ignore[method-assign]


class DriftEnv:
    """A browser, a work folder, and the recordings made so far (one per style and flavour)."""

    def __init__(self, browser: Browser, folder: Path):
        self.browser = browser
        self.folder = folder
        self._recordings: dict[tuple[Style, str], Path] = {}
        self._lock = asyncio.Lock()
        self._counter = 0

    async def recording(self, style: Style, flavour: str) -> Path:
        """The session-store folder holding the script recorded on the unchanged site."""
        async with self._lock:
            key = (style, flavour)
            if key not in self._recordings:
                self._recordings[key] = await self._record(style, flavour)
            return self._recordings[key]

    async def _record(self, style: Style, flavour: str) -> Path:
        recording = RECORDINGS[flavour]
        values = RECORDED | recording.values
        folder = self.folder / f"recorded-{style}-{flavour}"
        with DriftSite(Variant(style=style, **recording.site)) as site:
            params = self._params(values, site)
            llm = FakeLLM(SellerPolicy(**recording.policy))
            result, _ = await self._do(site, params, ScriptStore(LocalSessionStore(folder)), llm)
            wrong, stored = judge(site.events, params)
        if result.status is not WorkerStatus.completed or result.replay != "recorded" or wrong or stored != "right":
            raise RuntimeError(f"the {style}/{flavour} recording failed: {result.status} {result.replay} "
                               f"stored {stored}; {result.feedback}")
        return folder

    @staticmethod
    def _params(values: dict[str, Any], site: DriftSite) -> dict[str, Any]:
        params = {key: value.format(sku=values["sku"]) if isinstance(value, str) else value
                  for key, value in values.items()}
        return params | {"username": USERNAME, "password": "{{secret:site_password}}",
                         "site_url": site.url("/listings")}

    async def _do(self, site: DriftSite, params: dict[str, Any], store: ScriptStore | None,
                  llm: FakeLLM) -> tuple[Any, Agent]:
        # The agent opens its own tab in the shared browser, as the flow does: after a failure it may
        # reopen it at the last good step's URL.
        agent = Agent(llm, browser=self.browser, options=SECRETS, start_url=site.url("/login"), retry_delay_s=0.1)
        try:
            replay = (Replay(key=SCRIPT_KEY, params=params, store=store, identifying=("sku", "title"))
                      if store is not None else None)
            # The site has no SKU: its listing's page names it by its title and description.
            readback = ReadBack(fields={name: params[name] for name in MEANINGS}, identifying=["title", "description"])
            result = await agent.do(task_for(params), max_steps=24, replay=replay, readback=readback)
            return result, agent
        finally:
            await agent.close()

    async def run(self, case: Case, style: Style, *, replay: bool = True) -> Outcome:
        """The case replayed from its recording; without ``replay``, the model alone on the changed
        site (a check of the site, the model and the judge: the model never stores a wrong listing)."""
        started = time.perf_counter()
        outcome = Outcome(case=case.name, style=style, what=case.what, expect=case.expect if replay else "any")
        self._counter += 1
        store = None
        if replay:
            recorded = await self.recording(style, case.recording)
            folder = self.folder / f"case-{self._counter}-{case.name}-{style}"
            shutil.copytree(recorded, folder)
            store = ScriptStore(LocalSessionStore(folder))
        recording = RECORDINGS[case.recording]
        with DriftSite(case.site(style)) as site:
            widgets = THIS_RUN_WIDGETS if recording.widgets else {}
            values = THIS_RUN | widgets | {"sku": f"DR-{self._counter}"} | case.values
            params = self._params(values, site)
            llm = FakeLLM(SellerPolicy(**recording.policy | case.policy))
            try:
                with crash_at_publish(site, case.fault):
                    result, _agent = await self._do(site, params, store, llm)
                outcome.status, outcome.replay = result.status.value, result.replay
                outcome.replayed_steps, outcome.feedback = result.replayed_steps, result.feedback[:160]
                outcome.handovers = list(result.replay_handovers)
                if result.readback is not None:
                    outcome.readback = f"{result.readback.status} ({result.readback.method})"
                    outcome.mismatched = [check.field for check in result.readback.mismatches]
            except Exception as error:  # a run that raised is reported in the table, and judged all the same
                outcome.status, outcome.error = type(error).__name__, str(error)[:200]
            outcome.model_calls = len(llm.requests)
            outcome.notes = [note for request in llm.requests if (note := _handover_note(request))]
            outcome.wrong, outcome.stored = judge(site.events, params, outcome.wrong_fields)
        if replay:
            outcome.script, outcome.kept_steps = _kept(ScriptStore(LocalSessionStore(recorded)),
                                                       ScriptStore(LocalSessionStore(folder)))
        outcome.verdict = _verdict(outcome, outcome.expect)
        outcome.seconds = round(time.perf_counter() - started, 2)
        return outcome


def _handover_note(request: dict[str, Any]) -> str | None:
    last = request["messages"][-1]
    for block in last.get("content", []) if isinstance(last.get("content"), list) else []:
        text = block.get("text", "") if isinstance(block, dict) else ""
        if "replay stopped at" in text:
            return text[text.index("Steps 1-") if "Steps 1-" in text else text.index("replay stopped at"):]
    return None


def _kept(recorded: ScriptStore, now: ScriptStore) -> tuple[str, int]:
    """``1``, or for a repair ``2 (5 of 7 steps as recorded)``: a repair keeps the steps replay did."""
    old, new = recorded.load(SCRIPT_KEY), now.load(SCRIPT_KEY)
    if old is None or new is None:
        return "-", 0
    if new.revision == old.revision:
        return str(new.revision), 0
    same = sum(1 for step in new.steps if any(step == before for before in old.steps))
    return f"{new.revision} ({same} of {len(new.steps)} steps as recorded)", same


def _verdict(outcome: Outcome, expect: Expect) -> str:
    if outcome.wrong:
        caught = outcome.status == "mismatch" and outcome.wrong_fields \
            and sorted(outcome.mismatched) == sorted(outcome.wrong_fields)
        return f"ok (the read-back caught it: {', '.join(outcome.mismatched)})" if caught else "WRONG"
    if outcome.error:
        return f"FAIL: raised {outcome.status}"
    if outcome.status == "mismatch":
        return f"FAIL: a false alarm (read-back {outcome.readback}: {', '.join(outcome.mismatched) or 'unread'})"
    if expect == "mismatch":
        return f"FAIL: expected the site to store it otherwise and the read-back to say so (stored {outcome.stored})"
    if expect == "zero_calls" and (outcome.model_calls or outcome.stored != "right"):
        return f"FAIL: expected 0 model calls and the listing stored ({outcome.model_calls} calls, stored {outcome.stored})"
    if expect == "handover" and outcome.model_calls == 0:
        return "FAIL: expected a hand-over to the model (0 model calls)"
    if expect == "ideally_zero" and outcome.model_calls:
        return f"ok ({outcome.model_calls} model calls; ideally 0)"
    return "ok"


def markdown_table(outcomes: list[Outcome]) -> str:
    lines = ["| case | style | what changed | expect | replay | status | read-back | model calls | replayed steps | "
             "hand-overs | script | stored | verdict |", "|" + " --- |" * 13]
    for item in outcomes:
        handovers = "; ".join(item.handovers)[:90].replace("|", "/") or "-"
        readback = item.readback + (f": {', '.join(item.mismatched)}" if item.mismatched else "")
        lines.append(f"| {item.case} | {item.style} | {item.what} | {item.expect} | {item.replay or '-'} | "
                     f"{item.status} | {readback or '-'} | {item.model_calls} | {item.replayed_steps} | {handovers} | "
                     f"{item.script or '-'} | {item.stored.replace('|', '/')} | {item.verdict} |")
    wrong = sum(item.wrong and not item.passed for item in outcomes)
    caught = sum(item.wrong and item.passed for item in outcomes)
    silent = sum(item.wrong and not item.passed and item.model_calls == 0 for item in outcomes)
    passed = sum(item.passed for item in outcomes)
    lines.append("")
    if THIS_RUN["show_in_search"]:
        lines.append("(WEBTASK_DRIFT_SAME_BOX=1: the box wanted on, as recorded, unless a case says otherwise)")
    completed_wrong = sum(item.wrong and item.status == "completed" for item in outcomes)
    lines.append(f"{len(outcomes)} runs: {passed} ok, {wrong} stored something wrong unnoticed ({silent} of them with "
                 f"0 model calls), {caught} stored wrong by the site and caught by the read-back, "
                 f"{completed_wrong} stored wrong and reported completed, {len(outcomes) - passed - wrong} failed an "
                 "expectation.")
    return "\n".join(lines)
