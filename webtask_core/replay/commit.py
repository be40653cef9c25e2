"""The irreversible act: before replay submits, the page must show this run's values.

A **commit** is a call that may change something for good: a click on a control that submits a
form (``_submit`` in the observation) or that says so (Publish, Submit, Confirm, Pay, Delete,
Save...), and Enter pressed in a field. When a recorded step holds one, the recording keeps what
the page showed right before it (:class:`CommitCheck`):

- the submitted form's controls (all controls on the page when it has no form), in order, each
  with the value it held as a template of the run's values (``{{param:price|num:2}}``): a text
  field's or select's value, a checkbox's state, which radio of a group was chosen;
- the page's text lines outside lists of records, as templates too (a confirm page's
  ``Price: $45.00`` is ``Price: ${{param:price}}``).

Replay, before the same call, checks the page against it with this run's values: the same
controls (no more, no fewer), each showing what this run should have put there, and the same
words. Anything else hands the step to the model before anything is submitted. A recording that
cannot be checked (a value that fits two fields the labels do not tell apart) is marked so, and
replay always hands that step over.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from webtask_core.replay.binding import Binding, template_text
from webtask_core.replay.folding import label_words
from webtask_core.replay.keys import options_moved
from webtask_core.replay.reading import ReadText, is_checked, is_field, is_radio, is_value_display, shows_saving
from webtask_core.replay.templates import fold, shown_matches

if TYPE_CHECKING:
    from webtask_core.browser.models import ElementInfo
    from webtask_core.replay.signature import PageView

__all__ = ["CommitCheck", "ExpectedControl", "is_commit", "names_a_commit", "capture_commit", "verify_commit",
           "form_controls"]

_COMMIT_WORDS = re.compile(
    r"\b(publish\w*|submit\w*|confirm\w*|place (?:your )?order|order now|pay|pay now|buy\w*|purchase|check ?out|"
    r"delete|remove|save|save \w+|post|send|create|finish|complete|approve|sign up|register|transfer|donate|"
    r"book now|apply|list (?:it|item|now)|go live)\b")
_ENTER = re.compile(r"\benter\b|\breturn\b", re.IGNORECASE)


def names_a_commit(words: str) -> bool:
    """Whether ``words`` (a control's text or key) say it submits: publish, save, delete, pay..."""
    return bool(_COMMIT_WORDS.search(words.casefold()))


def is_commit(tool: str, arguments: Mapping[str, Any], element: ElementInfo | None) -> bool:
    """Whether a call may submit or change something for good (see the module docstring)."""
    if tool == "press_key":
        if element is not None and (element.tag == "textarea" or "contenteditable" in element.attributes):
            return False  # Enter writes a new line there
        return bool(_ENTER.search(str(arguments.get("key", "")))) and (
            element is None or element.tag in ("input", "select") or "_form" in element.attributes)
    if tool != "click" or element is None:
        return False
    if element.attributes.get("_submit", "get") not in ("get", "dialog"):
        return True  # it posts a form (a GET form only asks, as a search does)
    words = " ".join(filter(None, (element.text, element.attributes.get("aria-label"),
                                   element.attributes.get("title"))))
    return bool(_COMMIT_WORDS.search(words.casefold()))


class ExpectedControl(BaseModel):
    key: str  # what the control is (signature.control_key)
    value: str | None = None  # the template of the value it showed (text fields, selects); None: not compared
    checked: bool | str | None = None  # a checkbox's state, or the {{param:...}} of a boolean


class CommitCheck(BaseModel):
    controls: list[ExpectedControl] = Field(default_factory=list)  # the submitted form's, in page order
    groups: dict[str, str] = Field(default_factory=dict)  # radio group -> the chosen radio's label template
    texts: list[str] = Field(default_factory=list)  # the page's words, as templates
    field_texts: list[str] = Field(default_factory=list)  # those inside the form or beside a field
    # A list parameter shown as chips (a tag widget's tokens) -> what one chip is made of: the
    # chips are the field's value, this run's list in order.
    chips: dict[str, list[str]] = Field(default_factory=dict)
    unsure: str | None = None  # why this recording cannot be checked against a later run


def form_controls(view: PageView, element_id: str | None) -> list[str]:
    """The ids of the controls the commit submits: its form's, else every control outside lists."""
    elements = view.observation.elements
    form = elements[element_id].attributes.get("_form") if element_id in elements else None
    frame = elements[element_id].frame_path if element_id in elements else ""
    if form is not None:
        return [key for key, element in elements.items()
                if element.attributes.get("_form") == form and element.frame_path == frame]
    return [key for key in elements if view.unit_of(key) is None]




def _radio_label(element: ElementInfo, view: PageView) -> str:
    """What a radio says: its label, else the text beside it (``( ) Used``)."""
    read = view.reading.controls.get(element.id)
    return element.text or (read.after or read.before if read is not None else "")


def _tickable(element: ElementInfo) -> bool:
    return is_radio(element) or _is_box(element)


def _is_box(element: ElementInfo) -> bool:
    return element.type == "checkbox" or (element.role or "") in ("checkbox", "switch")


def _group_of(element: ElementInfo) -> str:
    return element.name or (element.context[-1] if element.context else "")


def capture_commit(view: PageView, element_id: str | None, params: Mapping[str, Any],
                   files: Sequence[str]) -> CommitCheck:
    """What the page showed right before a commit on ``element_id`` (None: the focused field)."""
    check = CommitCheck()
    problems: list[str] = []
    keys = form_controls(view, element_id)
    chosen_boxes = _boxes_chosen_by_value(view, keys, params, files)
    for key in keys:
        element = view.observation.elements[key]
        read = view.reading.controls.get(key)
        label = label_words(element.text, element.name, read.before if read else "", read.after if read else "")
        expected = ExpectedControl(key=view.keys[key])
        if is_radio(element):
            if is_checked(element):
                says = _radio_label(element, view)
                binding = Binding(params, label_words(_group_of(element), says), strict=False, files=files)
                check.groups[_group_of(element)] = template_text(says, binding)
                problems += [binding.problem] if binding.problem else []
        elif _is_box(element) and _group_of(element) in chosen_boxes:
            pass  # one box of a group chosen by this run's value, as a radio is: the group says which
        elif _is_box(element):
            binding = Binding(params, label, strict=False)
            state = is_checked(element)
            chosen = binding.choose(str(state).lower(), [name for name, value in params.items()
                                                         if isinstance(value, bool) and value is state], weak=True)
            expected.checked = "{{param:" + chosen + "}}" if chosen else state
            problems += [binding.problem] if binding.problem else []
        elif is_field(element) and element.type != "file":
            binding = Binding(params, label | _words_around(element, view), strict=False, files=files)
            expected.value = template_text(_shown_value(element), binding)
            problems += [binding.problem] if binding.problem else []
        check.controls.append(expected)
    check.groups.update(chosen_boxes)
    previous = ""
    # A radio's or a box's own words are what the page offers, whichever this run chooses (groups say which).
    elements = view.observation.elements
    offered = {text for key, read in view.reading.controls.items() if key in elements and _tickable(elements[key])
               for text in (read.before, read.after) if text}
    for line in view.reading.texts:
        if line.unit is not None or line.passing_status:
            continue
        binding = Binding(params, label_words(previous, line.text), strict=False, files=files, counts=True,
                          shown=True)
        check.texts.append(line.text if line.text in offered else template_text(line.text, binding))
        if line.about_a_field:
            check.field_texts.append(check.texts[-1])
        problems += [binding.problem] if binding.problem else []
        previous = line.text
    check.chips = {name: shape for name, (shape, _) in _chips(view, element_id, params).items()}
    if problems:
        check.unsure = f"the recording cannot be checked: {problems[0]}"
    return check


def verify_commit(check: CommitCheck, view: PageView, element_id: str | None, params: Mapping[str, Any],
                  files: Sequence[str]) -> str | None:
    """None when the page shows what the recording showed, with this run's values; else what differs."""
    if check.unsure:
        return check.unsure
    url = view.observation.url
    form_keys = form_controls(view, element_id)
    current: dict[str, list[str]] = {}
    for key in form_keys:
        current.setdefault(view.keys[key], []).append(key)
    expected: dict[str, list[ExpectedControl]] = {}
    for control in check.controls:
        expected.setdefault(control.key, []).append(control)
    # The two lists of a chooser ("Available" / "Chosen") hold this run's choice: their options moved.
    extra = [key for key in current for _ in range(len(current[key]) - len(expected.get(key, [])))]
    lacking = [key for key in expected for _ in range(len(expected[key]) - len(current.get(key, [])))]
    added, missing = options_moved(extra, lacking)
    moved = (set(extra) - set(added)) | (set(lacking) - set(missing))
    for key in sorted((set(current) | set(expected)) - moved):
        have, want = current.get(key, []), expected.get(key, [])
        if len(have) != len(want):
            return (f"the form has {len(have)} control(s) like {key!r} where the recording had {len(want)}: "
                    "it changed since")
        for element_id_now, control in zip(have, want):
            element = view.observation.elements[element_id_now]
            if control.checked is not None:
                wanted = control.checked
                if isinstance(wanted, str):
                    wanted = bool(params.get(wanted[len("{{param:"):-2]))
                if is_checked(element) != wanted:
                    state = "checked" if is_checked(element) else "not checked"
                    return f"{element_id_now} ({key}) is {state}, which this run did not ask for"
            if control.value is not None:
                shown = _shown_value(element)
                if not (shown == control.value == "" or shown_matches(control.value, shown, params, files=files,
                                                                      page_url=url)):
                    return f"{element_id_now} ({key}) shows {shown!r}, not this run's value"
    for group, template in check.groups.items():
        chosen = [element for key in form_keys
                  if _tickable(element := view.observation.elements[key]) and is_checked(element)
                  and _group_of(element) == group]
        if len(chosen) != 1 or not shown_matches(template, _radio_label(chosen[0], view), params, files=files,
                                                 page_url=url):
            return f"the choice in {group!r} is not this run's"
    shown_chips = _chips(view, element_id, params, shapes=check.chips)
    for name in check.chips:
        items = params.get(name)
        wanted_chips = [fold(str(item)) for item in items] if isinstance(items, list) else None
        chips_now = shown_chips[name][1] if name in shown_chips else []
        if chips_now != wanted_chips:
            return f"the field of {name} shows {chips_now} where this run's list is {wanted_chips}"
    # Lines naming uploaded files come as many as this run has files (the upload checked them).
    lines = [line for line in view.reading.texts
             if line.unit is None and not line.passing_status and not _names_a_file(line.text, files)]
    renamed = _saved_as_item(view)
    for template in check.texts:
        if "{{file}}" in template:
            continue
        for index, line in enumerate(lines):
            if shown_matches(template, line.text, params, files=files, page_url=url):
                del lines[index]
                break
        else:
            if renamed and not _says_something(template) and template not in check.field_texts:
                continue  # the create form's name ("New: Product page"), now the saved item's own
            if _PLACEHOLDER_START in template or _says_something(template) or template in check.field_texts:
                return f"the page no longer shows {template[:80]!r} with this run's values"
    added = [line.text for line in lines if (line.says_something or line.about_a_field) and not line.heads_list]
    if added:
        return f"the page says what it did not when recorded: {added[0][:80]!r}"
    return None


def _chips(view: PageView, element_id: str | None, params: Mapping[str, Any],
           shapes: Mapping[str, list[str]] | None = None) -> dict[str, tuple[list[str], list[str]]]:
    """Per list parameter shown as chips in the commit's form: (what a chip is made of, the chips'
    words in order). Recording (``shapes`` None): records whose words are the list's items, all of
    them in order. Checking: the records made like the recorded chips, whatever they say."""
    reading = view.reading
    form = reading.controls[element_id].form if element_id in reading.controls else None
    words: dict[int, list[str]] = {}
    for line in reading.texts:
        if line.unit is not None:  # a multi-word tag may be shown quoted ("summer sale", tag-it)
            words.setdefault(line.unit, []).append(_QUOTES.sub("", line.text).strip())
    members: dict[int, list[str]] = {}
    for key, read in reading.controls.items():
        if read.unit is not None:
            fingerprint = view.fingerprints[key]
            # quotes a widget puts around a multi-word tag ('remove tag "city carry"') make no other chip
            text = _QUOTES.sub("", fingerprint.text)
            members.setdefault(read.unit, []).append(f"{fingerprint.tag}:{fingerprint.role}:{text}")
    units = [unit for unit in range(len(reading.unit_texts))
             if form is None or reading.unit_forms[unit] == form]
    found: dict[str, tuple[list[str], list[str]]] = {}
    if shapes is not None:
        for name, shape in shapes.items():
            made = [unit for unit in units if sorted(members.get(unit, [])) == shape]
            found[name] = (shape, [fold(" ".join(words.get(unit, []))) for unit in made])
        return found
    for name, items in params.items():
        if not isinstance(items, list) or not items or not all(isinstance(item, str) for item in items):
            continue
        chips = [unit for unit in units if fold(" ".join(words.get(unit, []))) in {fold(item) for item in items}]
        if [fold(" ".join(words[unit])) for unit in chips] == [fold(item) for item in items]:
            found[name] = (sorted(members.get(chips[0], [])), [fold(item) for item in items])
    return found


_PLACEHOLDER_START = "{{"
_WHOLE_MARK = re.compile(r"\{[\w-]+\}")
_QUOTES = re.compile(r"[\"“”]")


def _saved_as_item(view: PageView) -> bool:
    """Whether the page saved itself (an autosave's "Saved") and now names this run's item by one of
    its identifying values alone (a breadcrumb link "Silver Tote" where the create form's name
    stood): the run's own save made the page the item's, which is no change of the site."""
    if not shows_saving(view.observation, view.reading):
        return False
    offer = view.normalise.offer
    texts = [element.text for element in view.observation.elements.values() if not is_field(element)] + [
        line.text for line in view.reading.texts]
    return any(_WHOLE_MARK.fullmatch(folded := offer(text)) and view.normalise.shows_item(folded)
               for text in texts if text)


def _boxes_chosen_by_value(view: PageView, keys: Sequence[str], params: Mapping[str, Any],
                           files: Sequence[str]) -> dict[str, str]:
    """Groups of checkboxes (one name) of which one is checked and labelled with a parameter's value
    (colour "Red" of Red/Blue/Black): group -> the checked box's label template. Checked as a radio
    group is: the box labelled with this run's value, and only it."""
    checked: dict[str, list[ElementInfo]] = {}
    for key in keys:
        element = view.observation.elements[key]
        if _is_box(element) and element.name:
            checked.setdefault(element.name, [])
            if is_checked(element):
                checked[element.name].append(element)
    chosen = {}
    for group, boxes in checked.items():
        if len(boxes) == 1:
            says = _radio_label(boxes[0], view)
            template = template_text(says, Binding(params, label_words(group, says), strict=False, files=files))
            if _PLACEHOLDER_START in template:
                chosen[group] = template
    return chosen


def _says_something(template: str) -> bool:
    return ReadText(template).says_something


def _shown_value(element: ElementInfo) -> str:
    """What a field shows as its value: its value, or a custom picker's text (its choice)."""
    return element.text if is_value_display(element) else element.attributes.get("value", "")


def _words_around(element: ElementInfo, view: PageView) -> set[str]:
    read = view.reading.controls.get(element.id)
    texts: list[str | None] = []
    for around in read.around if read is not None else ():
        outer = view.observation.elements.get(around)
        if outer is not None:
            texts += [outer.name, outer.attributes.get("aria-label"), outer.attributes.get("hint"), outer.text]
    return label_words(*texts)


def _names_a_file(text: str, files: Sequence[str]) -> bool:
    folded = text.casefold()
    return any(name.casefold() in folded for name in files if name)
