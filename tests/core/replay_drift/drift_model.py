"""The scripted model of the drift suite: a careful seller who reads only what the model is sent.

It finds each field by the words a person reads beside it — the control's own label in the tree
(``input-1 (...) "Price"``), else the text line in the same group (``Price`` beside a
nameless ``input``) — in English or German, never by a ``name`` attribute. It types this run's
values, picks options by their exact text, sets the checkbox to the state the task wants (a "Hide
from search" box the other way round), checks the confirm page against the task and only then
clicks the one Submit. It aborts where it cannot do the task faithfully: an option that is not
there, a field it does not know that is required, two Submit buttons it cannot tell apart, no
Submit at all (a "Delete" in its place), a confirm page showing other values, a rejected form.

Taking over a task someone else started (replayed steps before its first own turn) on the confirm
page or on a page it does not know, or told that its own last Submit may have gone through before
the step failed, it first looks at "My listings" for this run's title.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from drift_widget_model import RichText, section_of, widget_calls

from webtask_core.browser.tree_lines import marked_line
from webtask_core.testing import Reply, ToolUse
from webtask_core.testing.request_view import (
    TreeElement,
    error_streak,
    latest_page,
    latest_url,
    task_json,
    tree_elements,
)

__all__ = ["SellerPolicy", "LABEL_WORDS", "own_tool_uses"]

# The words a seller reads as each field, in English and German; "hide" boxes mean the opposite.
LABEL_WORDS = {
    "title": ("title", "titel"),
    "price": ("price", "preis"),
    "quantity": ("quantity", "menge"),
    "category": ("category", "kategorie"),
    "ships_from": ("ships from", "versand von"),
    "ships_to": ("ships to", "versand nach"),
    "description": ("description", "beschreibung"),
    "show_in_search": ("show in search", "in der suche anzeigen", "shown in search"),
}
_INVERTED = {"hide from search": "show_in_search", "in der suche ausblenden": "show_in_search"}
_SUBMIT_WORDS = ("submit", "absenden", "publish")
_CONTINUE_WORDS = ("continue", "weiter")
_LINE = re.compile(r"^(?P<indent> *)- (?P<rest>.*)$")
_TEXT = re.compile(r'^text: "(?P<text>.*)"$')
_STRUCTURAL = re.compile(r'^(?P<kind>[a-z][a-z0-9]*)\b(?:.*?"(?P<text>.*)")?')


@dataclass
class Node:
    depth: int
    kind: str  # "text", "control" or a structural kind (h1, form, group, row, iframe, ...)
    text: str = ""
    element: TreeElement | None = None
    parent: Node | None = None

    def __post_init__(self) -> None:
        self.children: list[Node] = []

    def ancestors(self) -> list[Node]:
        found, node = [], self.parent
        while node is not None:
            found.append(node)
            node = node.parent
        return found

    def descendants(self) -> list[Node]:
        found = []
        for child in self.children:
            found.append(child)
            found.extend(child.descendants())
        return found


def parse_tree(tree: str) -> list[Node]:
    """Every line of the tree as a node with its parent (by indentation)."""
    nodes: list[Node] = []
    stack: list[Node] = []
    for line in tree.splitlines():
        match = _LINE.match(marked_line(line))  # a text line read as `- text: "..."`
        if match is None:
            continue
        depth, rest = len(match.group("indent")), match.group("rest")  # one space a level
        elements = tree_elements(f"- {rest}")
        if elements:
            node = Node(depth, "control", elements[0].text, elements[0])
        elif (text := _TEXT.match(rest)) is not None:
            node = Node(depth, "text", text.group("text").replace('\\"', '"'))
        else:
            structural = _STRUCTURAL.match(rest)
            kind = structural.group("kind") if structural else rest
            node = Node(depth, kind, (structural.group("text") or "") if structural else "")
        while stack and stack[-1].depth >= depth:
            stack.pop()
        if stack:
            node.parent = stack[-1]
            stack[-1].children.append(node)
        stack.append(node)
        nodes.append(node)
    return nodes


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(":*").strip().casefold()


def label_of(node: Node) -> str:
    """What a person reads as the control's label: its own text, else the text beside it in its group."""
    if node.element is None:
        return ""
    if node.element.text:
        return node.element.text
    parent = node.parent
    if parent is None or parent.kind not in ("group", "label", "item", "row", "article"):
        return ""
    unnamed = [child for child in parent.children if child.kind == "control" and not child.text]
    if len(unnamed) != 1:
        return ""
    return " ".join(child.text for child in parent.children if child.kind == "text")


def meaning_of(label: str) -> tuple[str | None, bool]:
    """(the field a label names, whether it is the inverted box)."""
    folded = _fold(label)
    for meaning, words in LABEL_WORDS.items():
        if folded in words:
            return meaning, False
    if folded in _INVERTED:
        return _INVERTED[folded], True
    return None, False


def _is_replayed(message: dict[str, Any]) -> bool:
    for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
        if block.get("type") == "tool_use" and str(block.get("id", "")).startswith("replay_"):
            return True
        if block.get("type") == "text" and "replayed step" in block.get("text", ""):
            return True
    return False


def own_tool_uses(request: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, input) of every tool call the model itself made in this conversation (not replayed)."""
    calls = []
    for message in request.get("messages", []):
        if message.get("role") != "assistant" or _is_replayed(message):
            continue
        for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_use":
                calls.append((block["name"], block.get("input") or {}))
    return calls


def _told_it_may_have_gone_through(request: dict[str, Any]) -> bool:
    """Whether the last user message says an earlier attempt may have submitted already."""
    last = request["messages"][-1]
    blocks = last.get("content", []) if isinstance(last.get("content"), list) else []
    return any(isinstance(block, dict) and "may have gone through" in str(block.get("text", "")) for block in blocks)


def _number(text: Any) -> Decimal | None:
    try:
        return Decimal(str(text).replace("$", "").replace("€", "").strip())
    except InvalidOperation:
        return None


def _abort(reason: str) -> Reply:
    return Reply(reason, [ToolUse("abort", {"reason": reason})])


class SellerPolicy:
    """``SellerPolicy(price_format=..., checkbox_by_click=False)``.

    ``price_format``: how this seller writes a price into the form (``"${}"`` types ``$24.50`` for
    24.50); ``checkbox_by_click``: flip the box with a click instead of ``check`` (as many models do);
    ``tags_per_turn`` and ``rich_text``: how it fills the widget form (drift_widget_model.py).
    """

    def __init__(self, *, price_format: str = "{}", checkbox_by_click: bool = False, tags_per_turn: bool = False,
                 rich_text: RichText = "keys", date_own_turn: bool = True):
        self.price_format = price_format
        self.checkbox_by_click = checkbox_by_click
        self.tags_per_turn = tags_per_turn  # the widget form's tags: one per turn, or all in one turn
        self.rich_text = rich_text  # the description: typed with the keyboard, or one fill (issue 27)
        self.date_own_turn = date_own_turn  # after typing the date, look at the calendar it opens first

    def __call__(self, request: dict[str, Any]) -> Reply:
        data = task_json(request)
        if error_streak(request) >= 3:
            return _abort("three turns in a row failed; stopping")
        url, nodes = latest_url(request), parse_tree(latest_page(request))
        headings = [_fold(node.text) for node in nodes if node.kind in ("h1", "heading")]
        own = own_tool_uses(request)
        checked_listings = any(name == "navigate" for name, _ in own)
        if url.startswith("chrome-error") or not headings:
            if checked_listings:
                return _abort(f"the page at {url} is not one I know, and My listings did not help")
            return Reply("This page is not one I know; I check My listings first.",
                         [ToolUse("navigate", {"url": data["site_url"]})])
        heading = headings[0]
        if heading == "seller log in":
            return self._log_in(data, nodes)
        if heading == "my listings":
            return self._listings(data, nodes, own)
        if heading == "new listing":
            return self._form(data, nodes)
        if heading == "check your listing":
            if _told_it_may_have_gone_through(request) and not checked_listings:
                # The last attempt at this step submitted and then failed (the worker says so).
                return Reply("My last Submit may have gone through; I check My listings first.",
                             [ToolUse("navigate", {"url": data["site_url"]})])
            if not any(name == "fill" for name, _ in own) and not checked_listings:
                # Someone else filled this form: a Submit of theirs may have gone through already.
                return Reply("I take over on the confirm page; first I check whether it is listed already.",
                             [ToolUse("navigate", {"url": data["site_url"]})])
            return self._confirm(data, nodes)
        if heading == "listing published":
            texts = " ".join(node.text for node in nodes)
            if data["title"] not in texts:
                return _abort("the published page shows another listing")
            return Reply("Published.", [ToolUse("complete", {"feedback": f"Listed {data['title']}"})])
        if checked_listings:
            return _abort(f"I do not know the page {heading!r}")
        return Reply("I check My listings first.", [ToolUse("navigate", {"url": data["site_url"]})])

    # ---- pages ----

    def _log_in(self, data: dict[str, Any], nodes: list[Node]) -> Reply:
        if any("wrong username" in node.text.casefold() for node in nodes):
            return _abort("the site refused the log in")
        fields = {_fold(label_of(node)): node.element.id for node in nodes if node.element is not None}
        button = _button(nodes, ("log in",))
        if "username" not in fields or "password" not in fields or button is None:
            return _abort("I cannot find the log-in form")
        return Reply("Logging in.", [
            ToolUse("fill", {"element_id": fields["username"], "text": data["username"]}),
            ToolUse("fill", {"element_id": fields["password"], "text": data["password"]}),
            ToolUse("click", {"element_id": button}),
        ])

    def _listings(self, data: dict[str, Any], nodes: list[Node], own: list[tuple[str, dict[str, Any]]]) -> Reply:
        if any(node.kind == "control" and node.text == data["title"] for node in nodes):
            return Reply("It is listed.", [ToolUse("complete", {"feedback": f"{data['title']} is listed already"})])
        if own and own[-1][0] == "navigate":  # I came to check from the confirm page: back to it
            return Reply("Not listed yet; back to the confirm page.", [ToolUse("go_back", {})])
        link = next((node.element.id for node in nodes
                     if node.element is not None and _fold(node.text) == "new listing"), None)
        if link is None:
            return _abort("no 'New listing' link")
        return Reply("Starting a new listing.", [ToolUse("click", {"element_id": link})])

    def _form(self, data: dict[str, Any], nodes: list[Node]) -> Reply:
        for node in nodes:
            if node.kind == "text" and "please correct" in node.text.casefold():
                return _abort(f"the site rejected the form: {node.text}")
        button = _button(nodes, _CONTINUE_WORDS)
        if button is None:
            return _abort("the form has no Continue button")
        scope = _form_around(nodes, button)
        fields: dict[str, list[tuple[Node, bool]]] = {}
        for node in scope:
            if node.element is None or node.element.id == button:
                continue
            label = label_of(node)
            meaning, inverted = meaning_of(label)
            if _fold(label) == "country":  # which country: its section says (a fieldset, a heading)
                meaning, inverted = meaning_of(section_of(node))
            if meaning is None and (node.element.tag == "body" or node.element.attributes.get("type") == "radio"
                                    or ("tags" in data and _fold(label) == "available from")):
                continue  # the widgets' (drift_widget_model.py)
            if meaning is None:
                if node.element.has("required") or label.strip().endswith("*") or "required" in label.casefold():
                    return _abort(f"the form has a required field I do not know: {label or node.element.line!r}")
                continue
            fields.setdefault(meaning, []).append((node, inverted))
        calls = []
        cents = any(node.kind == "text" and "in cents" in node.text.casefold() for node in nodes)
        excluding = [node.text for node in nodes if node.kind == "text" and "excl" in node.text.casefold()
                     and "vat" in node.text.casefold()]
        if excluding:
            return _abort(f"the form says {excluding[0]!r}: my prices include VAT, and I will not work out another")
        widgets = "tags" in data
        first_turn = not widgets or not any(
            node.element.attributes.get("value") == data["title"] for node, _ in fields.get("title", []) if node.element)
        for meaning in LABEL_WORDS:
            if widgets and meaning == "description":
                continue  # in the editor (drift_widget_model.py)
            found = fields.get(meaning, [])
            if len(found) != 1:
                what = "no" if not found else f"{len(found)}"
                return _abort(f"the form has {what} field(s) for {meaning.replace('_', ' ')}; I will not guess")
            node, inverted = found[0]
            element = node.element
            assert element is not None
            value = data[meaning]
            if meaning == "show_in_search":
                wanted = bool(value) != inverted
                if element.has("checked") != wanted:
                    calls.append(ToolUse("click", {"element_id": element.id}) if self.checkbox_by_click
                                 else ToolUse("check", {"element_id": element.id, "checked": wanted}))
            elif element.tag == "select":
                options = [option.strip() for option in element.attributes.get("options", "").split("|")]
                if str(value) not in options and not any(option.startswith("…") for option in options):
                    return _abort(f"{label_of(node)!r} has no option {value!r} (it has {', '.join(options)})")
                calls.append(ToolUse("select_option", {"element_id": element.id, "option": str(value)}))
            else:
                text = str(value)
                if meaning == "price":
                    text = str(int(Decimal(text) * 100)) if cents else self.price_format.format(text)
                calls.append(ToolUse("fill", {"element_id": element.id, "text": text}))
        if widgets:
            if not first_turn:  # the fields hold their values since the first turn
                calls = []
            more, done, problem = widget_calls(data, nodes, scope, tags_per_turn=self.tags_per_turn,
                                               rich_text=self.rich_text, first_turn=first_turn,
                                               date_own_turn=self.date_own_turn)
            if problem is not None:
                return _abort(problem)
            calls += more
            if not done:
                return Reply("Filling in the listing.", calls)
        calls.append(ToolUse("click", {"element_id": button}))
        return Reply("Filling in the listing.", calls)

    def _confirm(self, data: dict[str, Any], nodes: list[Node]) -> Reply:
        shown: dict[str, str] = {}
        for node in nodes:
            texts = [child.text for child in node.children if child.kind == "text"]
            if node.kind == "row" and len(texts) == 2:
                meaning, _ = meaning_of(texts[0])
                if meaning is not None:
                    shown[meaning] = texts[1]
                elif "tags" in data:  # the widget form's rows
                    shown[_fold(texts[0]).replace(" ", "_")] = texts[1]
        if "tags" in data:
            for key, wanted in (("condition", data["condition"]), ("tags", ", ".join(data["tags"])),
                                ("available_from", data["available"])):
                if _fold(shown.get(key, "")) != _fold(str(wanted)):
                    return _abort(f"the confirm page shows {key.replace('_', ' ')} {shown.get(key)!r}, not {wanted!r}")
        for meaning in LABEL_WORDS:
            if meaning not in shown:
                return _abort(f"the confirm page does not show the {meaning.replace('_', ' ')}")
            if not _same(meaning, shown[meaning], data[meaning]):
                return _abort(f"the confirm page shows {meaning.replace('_', ' ')} {shown[meaning]!r}, "
                              f"not {data[meaning]!r}")
        submits = [node for node in nodes if node.element is not None and node.element.tag == "button"
                   and _fold(node.text) in _SUBMIT_WORDS]
        wanted = [node for node in submits if not _about_drafts(node)]
        if not submits:
            buttons = [node.text for node in nodes if node.element is not None and node.element.tag == "button"]
            return _abort(f"there is no Submit button (I see {buttons}); I will not press anything else")
        if len(wanted) != 1:
            return _abort(f"{len(submits)} Submit buttons I cannot tell apart; I will not guess")
        assert wanted[0].element is not None
        return Reply("The values are right; submitting.", [ToolUse("click", {"element_id": wanted[0].element.id})])


def _same(meaning: str, shown: str, wanted: Any) -> bool:
    if meaning == "description":  # the editor's bold marks are the page's formatting, not its words
        shown, wanted = _fold(shown.replace("*", "")), _fold(str(wanted).replace("*", ""))
        return shown == wanted or (shown.endswith("…") and wanted.startswith(shown[:-1]))  # cut by the tree
    if meaning in ("price", "quantity"):
        return _number(shown) is not None and _number(shown) == _number(wanted)
    if meaning == "show_in_search":
        return shown.strip().casefold() == ("yes" if wanted else "no")
    return _fold(shown) == _fold(str(wanted))


def _button(nodes: list[Node], words: tuple[str, ...]) -> str | None:
    found = [node.element.id for node in nodes
             if node.element is not None and node.element.tag == "button" and _fold(node.text) in words]
    return found[0] if len(found) == 1 else None


def _form_around(nodes: list[Node], button_id: str) -> list[Node]:
    """The controls of the form that holds the button (the whole page when no form line holds it)."""
    button = next(node for node in nodes if node.element is not None and node.element.id == button_id)
    form = next((node for node in button.ancestors() if node.kind == "form"), None)
    return form.descendants() if form is not None else nodes


def _about_drafts(node: Node) -> bool:
    """A button whose own line or surrounding group speaks of drafts (a "Save draft" form)."""
    if "draft" in (node.element.line if node.element else "").casefold():
        return True
    parent = node.parent
    return parent is not None and any("draft" in child.text.casefold() for child in parent.children if child.kind == "text")
