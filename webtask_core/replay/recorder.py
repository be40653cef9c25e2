"""Turning a run's steps into a replay script while it runs.

After every step (replayed or the model's) the recorder keeps the page signature of the observation
the step acted on and each successful tool call: its element as a fingerprint taken from that same
observation, and its input with this run's values as placeholders. Calls that failed or were
skipped are left out: the run's later steps did what they could not, and the script follows the
run's successful path.

Recording is exact or it declines (the step is marked ``needs_model``): a typed value that fits two
parameters is bound by the label of the field it went into, or not at all; a value the model wrote
its own way is kept as a format of the parameter (``$24.50``) or declined; a click on a checkbox or
radio button is kept as the state it set, not as a toggle. A step that submits (see
:mod:`~webtask_core.replay.commit`) keeps what the page showed right before: when the model filled
and submitted in one turn, :meth:`Recorder.before_call` looks at the page just before the submit
(without renumbering the ids the model's calls use) and the step is kept as two.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from webtask_core.replay.binding import Binding, count_placeholders, report_template, template_value
from webtask_core.replay.choices import unmade_choices
from webtask_core.replay.commit import CommitCheck, capture_commit, is_commit
from webtask_core.replay.composed import compose
from webtask_core.replay.folding import Normaliser, decide_marks, label_words
from webtask_core.replay.reading import is_checked, is_field, is_radio
from webtask_core.replay.repeats import adds_an_item, fold_repeats
from webtask_core.replay.script import ReplayScript, ScriptAction, ScriptStep
from webtask_core.replay.signature import ElementFingerprint, PageSignature, PageView
from webtask_core.replay.templates import ELEMENT, typed_params

if TYPE_CHECKING:
    from webtask_core.browser import BrowserTab
    from webtask_core.browser.models import ElementInfo, Observation
    from webtask_core.llm.types import ToolCall
    from webtask_core.record import Step, ToolCallRecord

__all__ = ["Recorder"]

# Tools whose text is not typed into the page: placeholders inside, no binding declined.
_FREE_TEXT_TOOLS = {"complete", "abort", "wait_for", "navigate", "press_key", "scroll", "switch_tab"}
# Tools whose values go into the page: bound exactly, or the step is left to the model.
_TYPED_TOOLS = {"fill", "type", "select_option", "check", "upload"}
_CHOICE_TEXT = "Choosing what the item asks where the form's default already showed it."
# The page of a replayed step as the recorder keeps it: unread (a repair keeps the script's own step).
_REPLAYED_PAGE = PageSignature(url="", title="")


class Recorder:
    def __init__(self, params: Mapping[str, Any], *, identifying: Iterable[str] | None = None,
                 files: Sequence[str] = (), rich_fill: bool = False):
        self.params = dict(params)
        self.files = tuple(files)
        self.normalise = Normaliser(params, identifying=identifying, files=self.files)
        self.steps: list[ScriptStep] = []
        self.origins: list[int | None] = []  # per step: the script step it replayed, None for the model's
        self.rich_fill = rich_fill
        self._open: _Draft | None = None  # the last step, kept open until the page after it is seen
        self._captures: dict[str, Observation] = {}  # call id -> the page right before that commit

    # ---- the worker's hook: a look at the page before a commit that follows other calls ----

    def wants_look(self, call: ToolCall, observation: Observation, first: bool) -> bool:
        """Whether to look at the page right before ``call`` (a commit after other calls of its turn)."""
        if first:
            return False
        element_id = call.input.get("element_id") if isinstance(call.input, dict) else None
        element = observation.elements.get(element_id) if isinstance(element_id, str) else None
        return is_commit(call.name, call.input if isinstance(call.input, dict) else {}, element)

    async def before_call(self, call: ToolCall, observation: Observation, first: bool, tab: BrowserTab) -> None:
        if self.wants_look(call, observation, first):
            self._captures[call.id] = await tab.observe(stamp=False)

    # ---- after the step ----

    def record(self, step: Step, observation: Observation, *, origin: int | None = None,
               view: PageView | None = None) -> None:
        """Keep ``step`` (its calls made on ``observation``); ``origin``: the script step it replayed.
        ``view``: the replayer's reading of the page, when it read this observation (its Normaliser
        is made of the same params, identifying names and files: reading the page again cost a
        replayed step ~5-10 ms of Python)."""
        if view is None or view.observation is not observation:
            view = PageView.of(observation, self.normalise)
        self._close_open(view)  # the step before: its keystrokes read by what the editor shows now
        current = view
        draft = _Draft(view, self._free_text(step.model_text, observation.url), origin)
        drafts: list[_Draft] = []
        focused: ElementInfo | None = None  # where the keyboard goes: the last element this turn acted on
        for call in step.tool_calls:
            if not call.ok or not isinstance(call.input, dict):
                continue
            element = _element(call, observation)
            if call.input.get("element_id") is not None and element is None:
                self._captures.clear()
                return  # an element the observation does not know: this step cannot be recorded
            if element is None and call.name in ("press_key", "type") and focused is not None and _editable(focused):
                # Keys go where the turn last typed or clicked into: replay presses them on that field
                # (a calendar that took the focus back must not receive them).
                element = focused
                call = call.model_copy(update={"input": {**call.input, "element_id": focused.id}})
            action, problem = self._action(call, element, view)
            previous = draft.actions[-1] if draft.actions else self._last_action(drafts)
            # Enter in an editor the turn clicked into is a new line, not a submit.
            commit = is_commit(call.name, call.input, element or focused) and not adds_an_item(previous, action)
            focused = element or focused
            if commit and draft.actions:
                # Filled and submitted in one turn (or two submits in one turn: type, Enter, type,
                # Enter): a step ends before each submit, each with the check of its own submit.
                capture = self._captures.pop(call.id, None)
                current = PageView.of(capture, self.normalise) if capture is not None else view
                self._compose(draft, current if capture is not None else None)
                drafts.append(draft)
                draft = _Draft(current, "", origin)
                if capture is None:
                    draft.notes.append("the page was not seen right before this submit")
            if commit:
                draft.commit_view, draft.commit_element = current, self._same_in(view, current, call)
            if call.name == "ask_human":  # a person's answer is never replayed from a recording
                problem = "the step asks a person (ask_human); a replay never reuses a recorded answer"
            if call.input.get("to_element_id") is not None:
                # Only element_id is fingerprinted: a second element (drag's target) would be a bare id.
                problem = problem or f"{call.name} names a second element by id, which a replay cannot recognise"
            draft.actions.append(action.model_copy(update={"commit": commit}))
            draft.problems.append(problem)
        if draft.actions:
            drafts.append(draft)
        for done in drafts[:-1]:
            self._keep(done)
        self._open = drafts[-1] if drafts else None
        self._captures.clear()

    def script(self, key: str, *, revision: int = 1, source: str = "") -> ReplayScript:
        self._close_open(None)
        steps = fold_repeats(self.steps, self.params)
        return ReplayScript(key=key, revision=revision, params=sorted(self.params), steps=steps, source=source)

    def recorded(self) -> list[tuple[ScriptStep, int | None]]:
        """Each step recorded so far with the script step it replayed (None: the model's)."""
        self._close_open(None)
        return list(zip(self.steps, self.origins))

    # ---- helpers ----

    def _last_action(self, drafts: list[_Draft]) -> ScriptAction | None:
        if drafts and drafts[-1].actions:
            return drafts[-1].actions[-1]
        if self._open is not None and self._open.actions:
            return self._open.actions[-1]
        return self.steps[-1].actions[-1] if self.steps and self.steps[-1].actions else None

    def _compose(self, draft: _Draft, after: PageView | None) -> None:
        if after is None or draft.origin is not None:
            return
        composed = compose(draft.actions, draft.problems, after, self.params, self.files, rich_fill=self.rich_fill)
        if composed is not None:
            draft.actions, draft.problems = composed

    def _close_open(self, after: PageView | None) -> None:
        if self._open is None:
            return
        self._compose(self._open, after)
        self._keep(self._open)
        self._open = None

    def _keep(self, draft: _Draft) -> None:
        problems = draft.notes + [problem for problem in draft.problems if problem]
        if draft.origin is not None:
            # A replayed step: a repair keeps the script's own step (merge_repair), never this one's page
            # or check, so neither is read off the page again (a third of a replayed step's Python).
            self.steps.append(ScriptStep(page=_REPLAYED_PAGE, text=draft.text, actions=draft.actions,
                                         needs_model=problems[0] if problems else None))
            self.origins.append(draft.origin)
            return
        check = None
        if draft.commit_view is not None:
            check = capture_commit(draft.commit_view, draft.commit_element, self.params, self.files)
            self._keep_unmade_choices(draft, check)
        self.steps.append(ScriptStep(page=PageSignature.of(draft.view), text=draft.text, actions=draft.actions,
                                     commit=check, needs_model=problems[0] if problems else None))
        self.origins.append(draft.origin)

    def _keep_unmade_choices(self, draft: _Draft, check: CommitCheck) -> None:
        """A radio or select the submitted form showed at this item's value, though the run never set
        it (the page's default), kept as a step of its own before the submit: another item's value is
        chosen there, not left at the default."""
        if draft.origin is not None or draft.commit_view is None or check.unsure:
            return  # a replayed submit: its script had the choice already
        made = [action for step in self.steps for action in step.actions] + draft.actions
        choices = unmade_choices(check, draft.commit_view, draft.commit_element, made)
        if choices:
            self.steps.append(ScriptStep(page=PageSignature.of(draft.view), text=_CHOICE_TEXT, actions=choices))
            self.origins.append(None)

    def _same_in(self, view: PageView, capture: PageView, call: ToolCallRecord) -> str | None:
        """The id, in the look before the submit, of the element the call names on the step's page."""
        element_id = call.input.get("element_id") if isinstance(call.input, dict) else None
        if not isinstance(element_id, str) or element_id not in view.fingerprints:
            return None
        if capture is view:
            return element_id
        found, _ = capture.resolve(view.fingerprints[element_id])
        return found

    def _free_text(self, text: str, page_url: str) -> str:
        binding = Binding(self.params, set(), strict=False)
        value = template_value(text, binding, page_url=page_url)
        return value if isinstance(value, str) else text

    def _action(self, call: ToolCallRecord, element: ElementInfo | None,
                view: PageView) -> tuple[ScriptAction, str | None]:
        data = dict(call.input)
        tool = call.name
        fingerprint = None
        label: set[str] = set()
        if element is not None:
            label = _names_of(element, view)
            fingerprint = view.fingerprints[element.id]
            # A text two parameters share ({category|product_type}): the label around it decides.
            fingerprint = fingerprint.model_copy(update={
                key: decide_marks(getattr(fingerprint, key), label) for key in ("text", "before", "after")})
            data["element_id"] = ELEMENT
            if tool == "click" and _tickable(element):  # kept as the state the click set, not a toggle
                tool = "check"
                data = {"element_id": ELEMENT, "checked": True if is_radio(element) else not is_checked(element)}
        binding = Binding(self.params, label, strict=tool in _TYPED_TOOLS, files=self.files)
        # A radio is only ever checked: its state is the tool's, the choice is which radio (its label).
        constant = {"element_id"} | ({"checked"} if tool == "check" and element is not None and is_radio(element) else set())
        value = {key: (item if key in constant else template_value(item, binding, page_url=view.observation.url))
                 for key, item in data.items()}
        problem = binding.problem
        links: list[ElementFingerprint] = []
        if tool == "complete" and isinstance(data.get("feedback"), str):  # built from this run, never the recording's
            value["feedback"], problem, named = report_template(data["feedback"], binding, page_url=view.observation.url,
                                                                links=_links(view))
            links = [view.fingerprints[element_id] for element_id in named]
        self.normalise.typed |= typed_params(tool, value)
        if tool == "wait_for" and isinstance(value.get("text"), str):  # "2 photos ready" for two photos
            value["text"] = count_placeholders(value["text"], self.params)
        if tool == "set_output" and _has_literal(value):
            problem = f"{tool} reports a value read off the page, which a replay cannot know"
        return ScriptAction(tool=tool, input=value, element=fingerprint, links=links), problem


def _links(view: PageView) -> dict[str, str]:
    """Absolute URL -> the one link of the page that leads there (links to one place twice: neither)."""
    found: dict[str, list[str]] = {}
    for element_id, element in view.observation.elements.items():
        href = element.attributes.get("href")
        if href and not href.startswith(("#", "javascript:")):
            found.setdefault(urljoin(view.observation.url, href), []).append(element_id)
    return {url: ids[0] for url, ids in found.items() if len(ids) == 1}


@dataclass
class _Draft:
    """A step being recorded: its page, calls and each call's problem, and its commit's page."""

    view: PageView
    text: str
    origin: int | None  # the script step it replayed
    actions: list[ScriptAction] = field(default_factory=list)
    problems: list[str | None] = field(default_factory=list)  # per action
    notes: list[str] = field(default_factory=list)  # problems of the step itself
    commit_view: PageView | None = None
    commit_element: str | None = None


def _names_of(element: ElementInfo, view: PageView) -> set[str]:
    """The words that say what a control is for: its label, the text beside it, its name attribute,
    and the names and hints of the elements around it (a picker's list: ``select2-id_category-results``)."""
    read = view.reading.controls.get(element.id)
    texts = [element.text, element.name, element.attributes.get("aria-label")]
    if read is not None:
        texts += [read.before, read.after]
        for around in read.around:
            outer = view.observation.elements.get(around)
            if outer is not None:
                texts += [outer.name, outer.attributes.get("aria-label"), outer.attributes.get("hint")]
    return label_words(*texts)


def _element(call: ToolCallRecord, observation: Observation) -> ElementInfo | None:
    element_id = call.input.get("element_id") if isinstance(call.input, dict) else None
    return observation.elements.get(element_id) if isinstance(element_id, str) else None


def _editable(element: ElementInfo) -> bool:
    """A field that takes typing (not a box, a button or a link)."""
    return is_field(element) and not _tickable(element) and element.tag != "select"


def _tickable(element: ElementInfo) -> bool:
    return element.type in ("checkbox", "radio") or (element.role or "") in ("checkbox", "radio", "switch")




def _has_literal(value: Any) -> bool:
    """Whether an output holds anything but placeholders: a value read off the page."""
    if isinstance(value, dict):
        return any(_has_literal(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_literal(item) for item in value)
    if isinstance(value, str):
        stripped = value
        for marker in ("{{param:", "{{page:", "{{secret:", "{{count:"):
            while marker in stripped:
                start = stripped.index(marker)
                end = stripped.find("}}", start)
                if end < 0:
                    break
                stripped = stripped[:start] + stripped[end + 2:]
        return bool(stripped.strip())
    return value is not None and not isinstance(value, bool)
