"""One live recording, then replays with other values, on a real application: the run sequence the
replay tests on real apps and ``benchmarks/replay_apps.py`` share.

What is particular to an application sits behind `AppCase` (its task data, the task text, the
files an item uploads, the scripted model, the check of what the application stored); `run_items`
drives every item through ``Agent.do(replay=Replay(...))`` in a fresh tab and returns an `ItemRun`
per item (model calls, replay outcome, script revision, seconds, and every handover note with the
page it was given on). `describe_runs` is the failure report the replay engineer works from.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Request

from webtask_core import Agent, AgentResult
from webtask_core.browser import Browser
from webtask_core.readback import ReadBack
from webtask_core.replay import Replay, ScriptStore
from webtask_core.testing import FakeLLM
from webtask_core.testing.fake_messages import Policy
from webtask_core.testing.page_reader import is_read_back
from webtask_core.testing.request_view import latest_page, latest_url
from webtask_core.worker import WorkerOptions

__all__ = ["AppCase", "ItemRun", "run_items", "describe_runs", "readback_problems", "handover_note", "foreign_owner",
           "foreign_members"]


@dataclass
class AppCase:
    """What the run sequence needs of one application.

    ``items``: the task data of each item, the first recorded and the others replayed.
    ``task``: the task text for an item's data. ``resources``: the files an item uploads (made in
    the folder given). ``policy``: the scripted model. ``stored_problems``: what the application
    stored wrong for these runs, one line each, read from its own database (empty when all is right).
    ``readback``: what to read back from an item's page once its run completed (issue 26), or None.
    """

    name: str
    script_key: str
    items: Sequence[dict[str, Any]]
    task: Callable[[dict[str, Any]], str]
    resources: Callable[[dict[str, Any], Path], dict[str, Path]]
    policy: Policy
    stored_problems: Callable[[Sequence[ItemRun]], list[str]]
    identifying: tuple[str, ...] = ("sku", "title")
    options: WorkerOptions = field(default_factory=WorkerOptions)
    max_steps: int = 40
    readback: Callable[[dict[str, Any]], ReadBack] | None = None


@dataclass
class ItemRun:
    data: dict[str, Any]
    resources: dict[str, Path]
    result: AgentResult
    model_calls: int
    revision: int  # of the stored script after this run
    seconds: float
    # Each model call: the page it was asked on, and the replay's "replay stopped at ..." note if it had one.
    asked: list[tuple[str, str | None]] = field(default_factory=list)
    # Every URL the item's tab (and the popups it opened) requested: whether the app reaches for the internet.
    requests: list[str] = field(default_factory=list)
    # Every form the item's tab sent (not GET), with the submit button's name it carried
    # ("POST /admin/pages/5/edit/ action-publish"): which action a run took, when what it stored is wrong.
    submits: list[str] = field(default_factory=list)
    # The element tree of the model's last call: what it saw when it gave up, for the failure report.
    last_page: str = ""
    # Of model_calls, those of the read-back (issue 26) after the task: a page unlike the ones its
    # templates learnt is read by the model; replay's own calls are the rest.
    readback_calls: int = 0

    @property
    def replay_calls(self) -> int:
        """The model calls the task itself made (replay's handovers, or the live run's decisions)."""
        return self.model_calls - self.readback_calls

    @property
    def label(self) -> str:
        return str(self.data.get("title") or self.data.get("sku") or "?")

    def notes(self) -> list[tuple[str, str]]:
        return [(url, note) for url, note in self.asked if note is not None]

    def describe(self, stored_wrong: bool = False) -> str:
        lines = [f"{self.label}: {self.result.status.value}, replay={self.result.replay}, "
                 f"replayed_steps={self.result.replayed_steps}, model calls={self.model_calls} "
                 f"({self.readback_calls} of them the read-back's), "
                 f"script revision after={self.revision}, {self.seconds:.1f} s"]
        lines += [f"  - on {url}: {note}" for url, note in self.notes()]
        lines += [f"  - handover: {handover}" for handover in self.result.replay_handovers]
        if self.result.readback is not None:
            readback = self.result.readback
            lines.append(f"  - read back {readback.status} ({readback.method}, {readback.url}): {readback.summary()}")
        if stored_wrong or self.result.status.value != "completed":
            lines += [f"  - sent: {submit}" for submit in self.submits]
        if self.result.status.value != "completed":
            lines.append(f"  - feedback: {self.result.feedback}")
            if self.last_page:
                shown = self.last_page.splitlines()
                lines.append(f"  - the model's last page ({len(shown)} lines; the first {min(len(shown), 200)}):")
                lines += [f"      {line}" for line in shown[:200]]
        return "\n".join(lines)


def handover_note(request: dict[str, Any]) -> str | None:
    """The replay's hand-over note in the request's last user message, if it has one."""
    last = request["messages"][-1]
    for block in last.get("content", []):
        if isinstance(block, dict) and block.get("type") == "text" and "replay stopped at" in block.get("text", ""):
            text = block["text"]
            return text[text.index("Steps 1-") if "Steps 1-" in text else text.index("replay stopped at"):].split("\n")[0]
    return None


async def run_items(case: AppCase, llm: FakeLLM, browser: Browser, store: ScriptStore, folder: Path,
                    items: Sequence[dict[str, Any]] | None = None) -> list[ItemRun]:
    """The case's items (or `items`) through ``Agent.do`` with replay, one after the other, each in a
    fresh tab; an item's files are made in a folder of its own under `folder`."""
    runs = []
    for data in case.items if items is None else items:
        folder.mkdir(parents=True, exist_ok=True)
        resources = case.resources(data, Path(tempfile.mkdtemp(prefix="item-", dir=folder)))
        before = len(llm.requests)
        started = time.perf_counter()
        tab = await browser.new_tab()
        requested: list[str] = []
        submits: list[str] = []
        try:
            assert tab.page is not None  # a new tab has its first page
            tab.page.context.on("request", lambda request, seen=requested: seen.append(request.url))
            tab.page.context.on("request", lambda request, sent=submits: _note_submit(request, sent))
            agent = Agent(llm, browser=tab, options=case.options)
            replay = Replay(key=case.script_key, params=data, store=store, identifying=case.identifying)
            readback = case.readback(data) if case.readback is not None else None
            result = await agent.do(case.task(data), max_steps=case.max_steps, resources=resources, replay=replay,
                                    readback=readback)
        finally:
            await tab.close()
        seconds = time.perf_counter() - started
        requests = llm.requests[before:]
        script = store.load(case.script_key)
        runs.append(ItemRun(data=data, resources=resources, result=result, model_calls=len(requests),
                            revision=script.revision if script is not None else 0, seconds=seconds,
                            asked=[(latest_url(request), handover_note(request)) for request in requests],
                            requests=requested, submits=submits, last_page=_last_page(requests),
                            readback_calls=sum(1 for request in requests if is_read_back(request))))
    return runs


# A submit button's name in a sent form: urlencoded ("action-publish=") or multipart (name="action-publish").
_ACTION_FIELD = re.compile(r'(?:^|&|name=")(action[-_][\w-]+|_save\w*|_continue|_addanother|publish\w*)')


def _note_submit(request: Request, sent: list[str]) -> None:
    if request.method == "GET" or request.resource_type not in ("document", "xhr", "fetch"):
        return
    try:
        body = request.post_data or ""
    except (UnicodeDecodeError, ValueError):  # a file upload's bytes
        body = (request.post_data_buffer or b"").decode("latin-1")
    actions = sorted(set(_ACTION_FIELD.findall(body)))
    sent.append(f"{request.method} {urlsplit(request.url).path} {' '.join(actions)}".rstrip())


def readback_problems(runs: Sequence[ItemRun], stored_wrong: Sequence[str]) -> list[str]:
    """What the read-back (issue 26) got wrong on these runs, one line each, given what the app's own
    database says was stored wrong (``stored_problems``' lines, which start with the item's label): an
    item stored as asked flagged (a false alarm), one stored otherwise reported completed, or a
    completed one not read back as passed."""
    wrong = {problem.split(":")[0] for problem in stored_wrong}
    problems = [f"{run.label}: a false alarm: {run.result.feedback}" for run in runs
                if run.result.status.value == "mismatch" and run.label not in wrong]
    completed = [run for run in runs if run.result.status.value == "completed"]
    problems += [f"{run.label}: stored otherwise, reported completed" for run in completed if run.label in wrong]
    for run in completed:
        readback = run.result.readback
        if readback is None or readback.status != "passed":
            problems.append(f"{run.label}: completed but read back {readback.status if readback else 'never'}")
    return problems


def _last_page(requests: Sequence[dict[str, Any]]) -> str:
    """The page of the model's last call about the task (a read-back's call reads the listing's page)."""
    asked = [request for request in requests if not is_read_back(request)]
    return latest_page(asked[-1]) if asked else ""


def describe_runs(runs: Sequence[ItemRun], problems: Sequence[str] = ()) -> str:
    """Per item its outcome and handovers, then what was stored wrong."""
    wrong = {problem.split(":")[0] for problem in problems}
    text = "\n".join(run.describe(stored_wrong=run.label in wrong) for run in runs)
    if problems:
        text += "\nstored wrong:\n" + "\n".join(f"  - {problem}" for problem in problems)
    return text


def foreign_owner(key: str, value: Any, run: ItemRun, runs: Sequence[ItemRun],
                  same: Callable[[Any, Any], bool] | None = None) -> str:
    """`` (the value of OTHER)`` when `value` is another item's `key` and not this one's, else ""."""
    equal = same or (lambda a, b: a == b)
    owners = [other.label for other in runs if other is not run and equal(value, other.data.get(key))]
    return f" (the value of {', '.join(owners)})" if owners else ""


def foreign_members(key: str, values: Sequence[Any], run: ItemRun, runs: Sequence[ItemRun]) -> str:
    """`` (gift, weekend: Silver Tote's)`` for the members of a stored list (tags) that are not this
    item's but another's, else ""."""
    own = set(run.data.get(key) or ())
    notes = []
    for other in runs:
        if other is run:
            continue
        theirs = [value for value in values if value not in own and value in (other.data.get(key) or ())]
        if theirs:
            notes.append(f"{', '.join(map(str, theirs))}: {other.label}'s")
    return f" ({'; '.join(notes)})" if notes else ""
