"""Reading an observation the way a model reads it, for replay: which text sits beside each control,
which lines belong to a record of a list, and what the page says in words.

The element tree (docs/internals.md §2) is parsed back into its nesting. From it:

- **beside texts**: a control without a ``<label>`` is named by the text next to it — ``Price``
  before a field, ``Show in search`` after a checkbox. Each form field keeps the nearest text line
  before it and after it among its siblings (not past another control), as a model would pair them.
- **record units**: a list row, item or article (``- row``, ``- item``, ``- article``) that holds
  a link or button and no field to type into is one record of a list (a product in a table of
  products). Lists of records grow and change from run to run; replay tolerates that, and only that.
- **text lines**: every text line and the words of headings, labels, status and alert lines:
  what a model would react to (a warning, an error).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from webtask_core.browser.tree_lines import marked_line

if TYPE_CHECKING:
    from webtask_core.browser.models import ElementInfo, Observation

__all__ = ["PageReading", "ReadControl", "ReadText", "read_page", "is_field", "is_radio", "is_checked", "is_value_display",
           "is_saving_status", "shows_saving"]

_ELEMENT = re.compile(r"^(?P<pad> *)- (?P<id>[a-z][a-z0-9]*-\d+)(?=\s|$)")
_TEXT = re.compile(r'^(?P<pad> *)- text: "(?P<text>(?:[^"\\]|\\.)*)"')
_STRUCTURE = re.compile(r'^(?P<pad> *)- (?P<kind>[a-z][a-z0-9]*)(?: "(?P<text>(?:[^"\\]|\\.)*)")?(?: \(.*\))?$')
_UNESCAPE = re.compile(r"\\(.)")
# Structure lines whose words a model reads as page text (a heading, a status message, a dialog).
_WORDED = {"h1", "h2", "h3", "h4", "h5", "h6", "label", "status", "alert", "dialog", "fieldset", "group", "img",
           "iframe", "form", "nav", "list", "table", "tree"}
_UNITS = {"row", "item", "article"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_SECTIONS = {"fieldset", "group", "dialog", "region", "tabpanel"}  # named ones: what their controls are about
_NOTICES = {"alert", "status", "dialog"}
_WARNING = re.compile(
    r"\b(warn\w*|error\w*|invalid|required|must|cannot|can't|not allowed|differ\w*|exceed\w*|too \w+|fail\w*|"
    r"unable|please|note|attention|caution|important|duplicate\w*|already|limit\w*|sure|confirm\w*|will be|"
    r"irreversibl\w*|permanent\w*|delet\w*|remov\w*|declined|rejected|expired|restricted|hidden|private|public|"
    r"visible|only|not|no longer|instead)\b|[!%]")
# Inputs a person types or chooses a value in (a button-like input is named by its own value).
_BUTTON_TYPES = {"submit", "button", "reset", "image"}
_FIELD_ROLES = {"textbox", "searchbox", "combobox", "checkbox", "radio", "switch", "slider", "spinbutton", "listbox"}
# Roles whose visible text is the value they hold, not their name (a custom select shows its choice).
_VALUE_ROLES = {"combobox", "textbox", "searchbox", "spinbutton", "slider"}
_NATIVE_FIELDS = {"input", "select", "textarea"}


def _unquote(text: str) -> str:
    return _UNESCAPE.sub(r"\1", text)


def is_radio(element: ElementInfo) -> bool:
    return element.type == "radio" or element.role == "radio"


def is_checked(element: ElementInfo) -> bool:
    return "checked" in element.attributes or element.attributes.get("aria-checked") == "true"


def is_field(element: ElementInfo) -> bool:
    """A control that holds a value: a text field, a select, a checkbox or radio, an editable area."""
    if element.tag in ("select", "textarea"):
        return True
    if element.tag == "input":
        return (element.type or "text") not in _BUTTON_TYPES
    if element.type in ("checkbox", "radio"):  # a <label> standing in for a hidden checkbox
        return True
    return "contenteditable" in element.attributes or (element.role or "") in _FIELD_ROLES


def is_value_display(element: ElementInfo) -> bool:
    """A custom widget (not a native field) whose visible text is its current value."""
    return element.tag not in _NATIVE_FIELDS and (element.role or "") in _VALUE_ROLES


@dataclass
class _Node:
    kind: str  # "element", "text", a structure kind ("row", "h1", ...), or "" for marks and summaries
    text: str
    depth: int
    element_id: str | None = None
    children: list[_Node] = field(default_factory=list)
    parent: _Node | None = None


@dataclass(frozen=True)
class ReadControl:
    element_id: str
    before: str = ""  # the text line just before it among its siblings (form fields only)
    after: str = ""  # the text line just after it
    unit: int | None = None  # the record unit it lies in
    around: tuple[str, ...] = ()  # the ids of the elements it lies in, nearest first (a listbox, a menu)
    form: int | None = None  # the `- form` it lies in (numbered in tree order)
    section: str = ""  # the heading it comes under, or the named fieldset or group it lies in
    panel: int | None = None  # the list of records it stands beside (a panel's "Toggle section")
    container: int = -1  # the node it is a child of (numbered in tree order): its siblings share it
    place: int = 0  # its place among those siblings
    # A link that leads nowhere standing after a text field among its siblings, with only such links
    # between (a field's suggestions: "+trail" links under a keyword field)
    after_field: bool = False


@dataclass(frozen=True)
class ReadText:
    text: str
    unit: int | None = None
    notice: bool = False  # it sits in an alert, a status message or a dialog
    form: int | None = None  # the `- form` it lies in
    beside: bool = False  # it is the text beside a field (its label when it has none)
    heads_list: bool = False  # the heading or name of a list of records (a "Recent edits" panel)
    # it follows a saving status it explains ("Autosave is paused" / "There are validation errors,
    # click save to highlight them.": an autosave's state while a form is half filled)
    saving_note: bool = False

    @property
    def says_something(self) -> bool:
        """Whether a model would take this line into account if it appeared: a notice, a sentence,
        or words of warning. A short label ("Draft", "Details") that appears is layout. A line that
        only reports saving ("Saving…", "Saved 10:42") says nothing about the task."""
        if self.passing_status:
            return False
        return self.notice or len(self.text.split()) >= 4 or bool(_WARNING.search(self.text.casefold()))

    @property
    def about_a_field(self) -> bool:
        """Inside the form or beside a field: any change of it may change what a field means
        ("Prices incl. VAT" -> "Prices excl. VAT"), whatever its length."""
        return (self.form is not None or self.beside) and not self.passing_status

    @property
    def passing_status(self) -> bool:
        """A widget's passing state: saving, or an autocomplete's count of what it found ("No search
        results.", "3 results are available, use up and down arrow keys to navigate.")."""
        return self.only_saving or _SEARCH_STATUS.fullmatch(self.text.strip().casefold()) is not None

    @property
    def only_saving(self) -> bool:
        return self.saving_note or is_saving_status(self.text)


_SEARCH_STATUS = re.compile(r"(no (search )?results?( found)?|\d+ results? (is|are) available\b.*)\.?")
# A status that only reports saving, as editors' autosave shows it: these words and times only.
_SAVING_WORDS = {"saving", "saved", "autosave", "autosaved", "autosaving", "auto", "unsaved"}
_SAVING_CONTEXT = {"draft", "changes", "all", "page", "your", "last", "at", "on", "just", "now", "ago", "a", "an",
                   "few", "minute", "minutes", "second", "seconds", "hour", "hours", "locally", "automatically",
                   "as", "today", "yesterday", "am", "pm", "were", "was", "been", "have", "has", "you", "is",
                   "paused", "resumed", "off"}


def is_saving_status(text: str) -> bool:
    """Whether ``text`` only reports saving ("Saving…", "Saved", "Draft saved at 10:42", "Autosaved")."""
    words = re.findall(r"[^\W\d_]+", text.casefold())
    return 0 < len(words) <= 8 and any(word in _SAVING_WORDS for word in words) and all(
        word in _SAVING_WORDS or word in _SAVING_CONTEXT for word in words)


def shows_saving(observation: Observation, reading: PageReading, *, done: bool = False) -> bool:
    """Whether the page reports it saved (or is saving) itself: an autosave's "Saving…"/"Saved".
    ``done``: only a save done ("Saved", "Draft saved at 10:42"), not one under way ("Saving…")."""
    texts = [*(element.text for element in observation.elements.values()),
             *(line.text for line in reading.texts if line.only_saving)]
    return any(is_saving_status(text) and (not done or _saved_done(text)) for text in texts)


def _saved_done(text: str) -> bool:
    words = set(re.findall(r"[^\W\d_]+", text.casefold()))
    return bool(words & {"saved", "autosaved"}) and not words & {"saving", "autosaving", "unsaved"}


@dataclass
class PageReading:
    controls: dict[str, ReadControl]
    texts: list[ReadText]
    unit_texts: list[str]  # all the words of each record unit (to tell whose record it is)
    unit_forms: list[int | None] = field(default_factory=list)  # the `- form` each unit lies in
    unit_lists: list[int] = field(default_factory=list)  # the list (container) each unit belongs to
    forms: int = 0  # `- form` lines seen so far (while reading)
    lists: int = 0  # lists of records seen so far (while reading)
    containers: int = 0  # nodes whose children were read so far (while reading)


def read_page(observation: Observation) -> PageReading:
    """Parse ``observation.tree`` into beside texts, record units and text lines."""
    root = _Node("root", "", -1)
    stack = [root]
    for line in observation.tree.splitlines():
        node = _parse(line)
        if node is None:
            continue
        while stack[-1].depth >= node.depth:
            stack.pop()
        node.parent = stack[-1]
        stack[-1].children.append(node)
        stack.append(node)
    reading = PageReading(controls={}, texts=[], unit_texts=[])
    _walk(root, None, reading, observation, False, (), None, "", None, None)
    beside = {text for control in reading.controls.values() for text in (control.before, control.after) if text}
    reading.texts = [replace(line, beside=True) if line.text in beside else line for line in reading.texts]
    return reading


def _parse(line: str) -> _Node | None:
    line = marked_line(line)
    match = _ELEMENT.match(line)
    if match:
        return _Node("element", "", len(match["pad"]), element_id=match["id"])
    match = _TEXT.match(line)
    if match:
        return _Node("text", _unquote(match["text"]), len(match["pad"]))
    match = _STRUCTURE.match(line)
    if match:
        return _Node(match["kind"], _unquote(match["text"] or ""), len(match["pad"]))
    stripped = line.lstrip(" ")
    if stripped.startswith("- "):  # scroll marks and "… more elements" lines: kept for the nesting
        return _Node("", "", len(line) - len(stripped))
    return None


def _holds(node: _Node, test) -> bool:  # noqa: ANN001 - a small predicate over nodes
    return any(test(child) or _holds(child, test) for child in node.children)


def _is_record(node: _Node, observation: Observation) -> bool:
    """A unit holding a link or button and nothing to type into (a box to tick is allowed)."""
    elements = [observation.elements.get(child.element_id or "") for child in _descendants(node)
                if child.kind == "element"]
    found = [element for element in elements if element is not None]
    if any(is_field(element) and not _tickable(element) for element in found):
        return False
    return any(not is_field(element) for element in found)


def _fillable(node: _Node, observation: Observation) -> bool:
    element = observation.elements.get(node.element_id or "")
    return element is not None and is_field(element) and not _tickable(element)


def _leads_nowhere(element: ElementInfo) -> bool:
    """A link with no address of its own (none, ``#``, ``javascript:``): it acts on the page."""
    href = element.attributes.get("href")
    return element.tag == "a" and (href is None or href.startswith(("#", "javascript:")))


def _tickable(element: ElementInfo) -> bool:
    return element.type in ("checkbox", "radio") or (element.role or "") in ("checkbox", "radio", "switch")


def _shape(node: _Node, observation: Observation) -> tuple[str, ...]:
    """The kinds of a unit's lines, texts aside: two cards of one list have the same shape."""
    shape = []
    for child in _descendants(node):
        if child.kind == "element":
            element = observation.elements.get(child.element_id or "")
            shape.append(f"{element.tag}:{element.role}:{element.type}" if element is not None else "?")
        else:
            shape.append(child.kind)
    return tuple(shape)


def _units(siblings: list[_Node], observation: Observation, parent: str = "") -> set[int]:
    """Which of ``siblings`` are records of a list: rows, list items and articles, and plain groups
    repeated among their siblings with the same shape (a grid of cards)."""
    shapes: dict[tuple[str, ...], list[int]] = {}
    found = set()
    for index, node in enumerate(siblings):
        if node.kind in _UNITS and _is_record(node, observation):
            found.add(index)
    if found:  # a table's header row, a list's "show more" item: part of the list of records
        found.update(index for index, node in enumerate(siblings) if node.kind in ("row", "item")
                     and not _holds(node, lambda child: child.kind == "element" and _fillable(child, observation)))
    for index, node in enumerate(siblings):
        if node.kind in _UNITS:
            continue
        if node.kind == "group" and node.children:
            shapes.setdefault(_shape(node, observation), []).append(index)
    for indexes in shapes.values():
        if len(indexes) > 1:
            found.update(index for index in indexes if _is_record(siblings[index], observation))
    return found or (_item_links(siblings, observation) if parent == "list" else set())


def _item_links(siblings: list[_Node], observation: Observation) -> set[int]:
    """A list's bare links that all lead to items of one kind (``/images/chosen/3/``,
    ``/images/chosen/2/``: a chooser's "Latest images") are records, one each; links to other places
    (a menu) are not, nor a breadcrumb's link to the item (no list)."""
    patterns = set()
    for node in siblings:
        element = observation.elements.get(node.element_id or "") if node.kind == "element" else None
        path = urlsplit(element.attributes.get("href", "")).path if element is not None and element.tag == "a" else ""
        if not re.search(r"/\d+(/|$)", path):
            return set()
        patterns.add(re.sub(r"/\d+(?=/|$)", "/#", path))
    return set(range(len(siblings))) if len(patterns) == 1 else set()


def _descendants(node: _Node) -> list[_Node]:
    out: list[_Node] = []
    for child in node.children:
        out.append(child)
        out.extend(_descendants(child))
    return out


def _words(node: _Node, observation: Observation) -> str:
    """All a unit says: its text lines and its controls' names."""
    words = []
    for child in [node, *_descendants(node)]:
        element = observation.elements.get(child.element_id or "") if child.kind == "element" else None
        text = element.text if element is not None else child.text
        if text:
            words.append(text)
    return " ".join(words)


def _walk(node: _Node, unit: int | None, reading: PageReading, observation: Observation, notice: bool,
          around: tuple[str, ...], form: int | None, section: str, panel: int | None, list_id: int | None) -> None:
    units = _units(node.children, observation, node.kind) if unit is None else set()
    if units and list_id is None:
        list_id, reading.lists = reading.lists, reading.lists + 1
    # The lists among the children: what stands beside one of them (a panel's title, its toggle)
    # comes along with it.
    containers = [index for index, child in enumerate(node.children)
                  if unit is None and index not in units and _wraps_list(child, observation)]
    if list_id is not None and not units and len(containers) == 1:
        lists = {containers[0]: list_id}  # a wrapper of the list (a table around its rows) passes it on
    else:
        lists = {index: reading.lists + number for number, index in enumerate(containers)}
        reading.lists += len(containers)
    beside_list = next(iter(lists.values())) if len(lists) == 1 else panel
    node_number, reading.containers = reading.containers, reading.containers + 1
    heading: int | None = None  # the text line just before, at this level, with no control between
    after_field = False  # the controls so far at this level end with a text field and links leading nowhere
    for index, child in enumerate(node.children):
        inner = unit
        inside = notice or child.kind in _NOTICES
        inner_form = form
        if child.kind == "form":
            inner_form = reading.forms
            reading.forms += 1
        if index in units:
            inner = len(reading.unit_texts)
            reading.unit_texts.append(_words(child, observation))
            reading.unit_forms.append(form)
            reading.unit_lists.append(list_id if list_id is not None else -1)
        if child.kind in _HEADINGS and child.text and node.kind != "root":
            # The controls after a heading in their container come under it (the page's own top-level
            # headings are not sections: where a widget's list is put among them depends on the layout).
            section = child.text
        a_list = index in lists
        here = panel if a_list else beside_list
        if child.kind == "element" and child.element_id is not None:
            element = observation.elements.get(child.element_id)
            before = after = ""
            if element is not None and is_field(element):
                before = _beside(node.children, index, -1, observation)
                after = _beside(node.children, index, 1, observation)
            nowhere = element is not None and _leads_nowhere(element)
            reading.controls[child.element_id] = ReadControl(child.element_id, before, after, inner, around, form,
                                                             section, here, node_number, index, after_field and nowhere)
            after_field = _fillable(child, observation) or (after_field and nowhere)
            heading = None
        elif child.text and (child.kind == "text" or child.kind in _WORDED or child.kind in _UNITS):
            previous = node.children[index - 1] if index else None
            note = child.kind == "text" and previous is not None and previous.kind == "text" and is_saving_status(
                previous.text or "")
            reading.texts.append(ReadText(child.text, inner, inside, form if child.kind != "form" else inner_form,
                                          heads_list=a_list, saving_note=note))
            heading = len(reading.texts) - 1
        if a_list and heading is not None and heading < len(reading.texts):  # a panel's title: part of its list
            reading.texts[heading] = replace(reading.texts[heading], heads_list=True)
        elif _holds(child, lambda inner: inner.kind == "element"):  # a widget's wrapper around its text field
            after_field = _holds(child, lambda inner: inner.kind == "element" and _fillable(inner, observation))
        inner_around = (child.element_id, *around) if child.kind == "element" and child.element_id else around
        inner_section = child.text if child.kind in _SECTIONS and child.text else section
        _walk(child, inner, reading, observation, inside, inner_around, inner_form, inner_section, here,
              lists.get(index))
        if a_list or _holds(child, lambda node: node.kind == "element"):
            heading = None


def _wraps_list(node: _Node, observation: Observation, depth: int = 0) -> bool:
    """Whether ``node``'s children are records of a list, or it only wraps one node that is (a table
    around its rows, with a header row of plain words): what stands beside it stands beside the list."""
    if _units(node.children, observation, node.kind):
        return True
    holding = [child for child in node.children
               if child.kind == "element" or _holds(child, lambda inner: inner.kind == "element")]
    return (depth < 3 and len(holding) == 1 and holding[0].kind != "element"
            and _wraps_list(holding[0], observation, depth + 1))


def _beside(siblings: list[_Node], index: int, way: int, observation: Observation) -> str:
    """The nearest text among ``siblings`` from ``index`` in direction ``way``, not past a control. A
    status that only reports saving is nobody's label; the text before a radio or box that follows
    another one's text is that one's (``( ) New ( ) Used``)."""
    at = index + way
    while 0 <= at < len(siblings):
        sibling = siblings[at]
        if sibling.kind == "element" or _holds(sibling, lambda node: node.kind == "element"):
            return ""
        if sibling.kind == "text" or (sibling.kind in _WORDED and sibling.text):
            if is_saving_status(sibling.text):
                return ""
            if way < 0 and _tickable_at(siblings, index, observation) and _tickable_at(siblings, at - 1, observation):
                at -= 2  # another radio's own label: the group's is further up
                continue
            return sibling.text
        at += way
    return ""


def _tickable_at(siblings: list[_Node], at: int, observation: Observation) -> bool:
    if not 0 <= at < len(siblings) or siblings[at].kind != "element":
        return False
    element = observation.elements.get(siblings[at].element_id or "")
    return element is not None and _tickable(element)
