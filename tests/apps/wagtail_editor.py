"""The scripted model's decisions in Wagtail's page editor (a part of `WagtailProductPolicy`).

One decision per state of the editor, read off the tree: fill the details (title, SKU, price, the
category select, the condition radio, the release date typed into its field), confirm the date in
the calendar that opens on focus (it stays open over the fields below it; clicking the day closes
it), choose the photo through the image chooser (the Upload tab: the file, a title, Upload), write
the body, add the tags one at a time, open the footer's "More actions" and Publish. What a step did
shows in the next state (a field holds its value, the Image field names the photo, a chip per tag);
what is not this product's (another image, other text, another product's tags) is undone as a
careful model would, and a state it cannot read ends the task with an abort that says what it saw.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from policy_kit import PageReader, abort, click, quoted_text, same_text

from webtask_core.testing.replies import Reply, ToolUse
from webtask_core.testing.request_view import TreeElement, last_tool_results, resource_names, tree_elements

__all__ = ["EditorDecision", "RichText", "body_segments", "body_text"]

RichText = Literal["fill", "keys"]
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
# A field's section in the editor starts at its anchor link: `- a-5 (href="#panel-child-content-sku-section") "SKU*"`.
_SECTION_START = re.compile(r'^\s*- a-\d+ \(href="#panel-child-content-[\w-]+-section"\) "(?P<label>[^"]*?)\*?"$')
_ERROR_TEXTS = ("could not be created due to validation errors", "could not be saved due to validation errors",
                "This field is required", "Enter a valid")
# Markdown-like emphasis in the task's body: **bold**, *italic*.
_EMPHASIS = re.compile(r"\*\*(?P<bold>.+?)\*\*|\*(?P<italic>.+?)\*")
_SHORTCUTS = {"bold": "Control+b", "italic": "Control+i"}


def body_segments(markdown: str) -> list[tuple[str, str]]:
    """``A **bold** word`` as ``[("A ", ""), ("bold", "bold"), (" word", "")]``; a line break is ``("\\n", "")``."""
    segments: list[tuple[str, str]] = []
    for number, line in enumerate(markdown.split("\n")):
        if number:
            segments.append(("\n", ""))
        position = 0
        for match in _EMPHASIS.finditer(line):
            if match.start() > position:
                segments.append((line[position:match.start()], ""))
            style = "bold" if match.group("bold") is not None else "italic"
            segments.append((match.group(style), style))
            position = match.end()
        if position < len(line):
            segments.append((line[position:], ""))
    return segments


def body_text(markdown: str) -> str:
    """The body's words as an editor shows them, without the emphasis marks."""
    return "".join(text for text, _ in body_segments(markdown))


class EditorDecision:
    """What to do next in the editor for the product `data` (the task's ```json block)."""

    def __init__(self, request: dict[str, Any], data: dict[str, Any], page: PageReader, rich_text: RichText) -> None:
        self.request = request
        self.data = data
        self.page = page
        self.rich_text = rich_text

    def decide(self) -> Reply:
        errors = [text for text in _ERROR_TEXTS if text in self.page.tree]
        if errors:
            return abort("the editor rejected the page: " + "; ".join(errors))
        if 'h1 "Choose an image"' in self.page.tree:
            return self._image_chooser()
        title = self.page.named("title")
        if title is None:
            return abort("the page editor has no Title field")
        held = title.attributes.get("value", "")
        if held and held != self.data["title"]:
            return abort(f"this editor holds another page ({held!r}); I will not overwrite it")
        if self.page.shows_texts("Sun", "Mon", "Sat"):  # a month's calendar is open
            return self._confirm_date()
        if any(is_error and "is covered by footer" in text for _, is_error, text in last_tool_results(self.request)):
            return self._scroll_from_under_the_footer()
        for step in (self._fields, self._image, self._body, self._tags, self._publish):
            reply = step()
            if reply is not None:
                return reply
        return abort("the page is filled in but I found no way to publish it")

    def _fields(self) -> Reply | None:
        """Title, SKU, price, category, condition and release date in one turn; None once all hold
        their values."""
        calls: list[ToolUse] = []
        for name in ("title", "sku", "price"):
            field = self.page.named(name)
            if field is None:
                return abort(f"the page editor has no {name} field")
            if not self._holds(field, name):
                calls.append(ToolUse("fill", {"element_id": field.id, "text": str(self.data[name])}))
        category = self.page.named("category")
        if category is None:
            return abort("the page editor has no Category select")
        if category.attributes.get("value") != self.data["category"]:
            calls.append(ToolUse("select_option", {"element_id": category.id, "option": self.data["category"]}))
        radios = [e for e in self._section("Condition") if e.attributes.get("type") == "radio"]
        wanted = next((e for e in radios if e.text == self.data["condition"]), None)
        if wanted is None:
            return abort(f"the Condition choices ({', '.join(e.text for e in radios)}) have no {self.data['condition']!r}")
        if not wanted.has("checked"):
            calls.append(ToolUse("check", {"element_id": wanted.id}))
        date = self.page.named("release_date")
        if date is None:
            return abort("the page editor has no Release date field")
        if date.attributes.get("value") != self.data["release_date"]:
            # Typed: the field takes text. The calendar that opens on focus is answered next turn.
            calls.append(ToolUse("fill", {"element_id": date.id, "text": self.data["release_date"]}))
        if not calls:
            return None
        return Reply(text="Filling in the product's details.", tool_uses=calls)

    def _confirm_date(self) -> Reply:
        """The calendar opened on the date field: click the typed date's day in it, which closes
        it, as a person confirms a date in a picker."""
        date = self.page.named("release_date")
        wanted = self.data["release_date"]
        if date is None or date.attributes.get("value") != wanted:
            return abort(f"a calendar is open but the release date field does not hold {wanted}")
        year, month, day = (int(part) for part in wanted.split("-"))
        month_name = _MONTHS[month - 1]
        lines = [line.strip() for line in self.page.lines]
        if not (any(line.endswith(f'"{month_name}"') for line in lines) and any(line.endswith(f'"{year}"') for line in lines)):
            # It opened before the date was typed and still shows that month: it reads the field
            # again when the field is clicked.
            return click(date, f"The calendar shows another month than {month_name} {year}: clicking the date field.")
        cells = [e for e in self.page.elements if e.tag == "td" and e.text == str(day)]
        if not cells:
            return abort(f"the calendar has no day {day}")
        # A day number can show twice (the end of the month before, the start of the next):
        # the month's own is the first of a small number and the last of a large one.
        return click(cells[0] if day < 15 else cells[-1], f"Confirming {wanted} in the calendar.")

    def _scroll_from_under_the_footer(self) -> Reply:
        """The editor's sticky footer lay over the field the last call wanted: the editor scrolls in
        a box of its own, so scroll that box."""
        box = next((e for e in self.page.elements if "scrollable" in e.attributes), None)
        scroll: dict[str, Any] = {"direction": "down", "amount": 0.4}
        if box is not None:
            scroll["element_id"] = box.id
        return Reply(text="The footer covers the field: scrolling it into the open.", tool_uses=[ToolUse("scroll", scroll)])

    def _image(self) -> Reply | None:
        section = self._section("Image")
        choose = next((e for e in section if e.tag == "button" and e.text == "Choose an image"), None)
        if choose is not None:
            return click(choose, "Opening the image chooser to upload the photo.")
        chosen = [text for line in self._section_lines("Image") for text in quoted_text(line)]
        if self.data["title"] in chosen:
            return None
        # Another image than this product's photo: choose again.
        change = next((e for e in section if e.tag == "button" and e.text == "Change image"), None)
        if change is not None:
            return click(change, f"The image chosen is {' / '.join(chosen)}, not this product's photo: changing it.")
        actions = next((e for e in section if e.tag == "button" and e.text == "Actions"), None)
        if actions is None:
            return abort(f"the Image field shows {' / '.join(chosen) or 'nothing'} and offers no way to change it")
        return click(actions, "Opening the image's actions to change it.")

    def _image_chooser(self) -> Reply:
        photo = str(self.data["photo"])
        if photo not in resource_names(self.request):
            return abort(f"the photo {photo} is not among the resources I was given")
        upload_tab = next((e for e in self.page.elements if e.attributes.get("role") == "tab" and e.text == "Upload"), None)
        file_input = self.page.named("image-chooser-upload-file")
        if file_input is None or (upload_tab is not None and upload_tab.attributes.get("aria-selected") != "true"):
            if upload_tab is None:
                return abort("the image chooser has no Upload tab")
            return click(upload_tab, "Switching to the chooser's Upload tab.")
        if not file_input.attributes.get("value"):
            return Reply(text=f"Uploading the photo {photo}.", tool_uses=[
                ToolUse("upload", {"element_id": file_input.id, "resources": [photo]})])
        title, upload = self.page.named("image-chooser-upload-title"), self.page.button("Upload")
        if title is None or upload is None:
            return abort("the chooser's upload form has no Title field or Upload button")
        return Reply(text="Naming the photo after the product and uploading it.", tool_uses=[
            ToolUse("fill", {"element_id": title.id, "text": self.data["title"]}),
            ToolUse("click", {"element_id": upload.id}),
        ])

    def _body(self) -> Reply | None:
        editor = next((e for e in self._section("Body") if e.has("contenteditable")), None)
        if editor is None:
            return abort("the Body section has no editor")
        held = editor.attributes.get("value", "")
        if same_text(held, body_text(self.data["body"])) or same_text(held, self.data["body"]):
            return None
        if held:  # not what the task says: select it all and delete it, then write it afresh
            return Reply(text=f"The body holds other text ({held!r}): clearing it.", tool_uses=[
                ToolUse("click", {"element_id": editor.id}), ToolUse("press_key", {"key": "Control+a"}),
                ToolUse("press_key", {"key": "Backspace"})])
        if self.rich_text == "fill":
            return Reply(text="Writing the body.", tool_uses=[
                ToolUse("fill", {"element_id": editor.id, "text": self.data["body"]})])
        calls = [ToolUse("click", {"element_id": editor.id})]
        for text, style in body_segments(self.data["body"]):
            if text == "\n":
                calls.append(ToolUse("press_key", {"key": "Enter"}))
            elif style:
                calls += [ToolUse("press_key", {"key": _SHORTCUTS[style]}), ToolUse("type", {"text": text}),
                          ToolUse("press_key", {"key": _SHORTCUTS[style]})]
            else:
                calls.append(ToolUse("type", {"text": text}))
        return Reply(text="Writing the body, with its bold and italic words.", tool_uses=calls)

    def _tags(self) -> Reply | None:
        wanted = [str(tag) for tag in self.data["tags"]]
        tokens = PageReader.tokens(self._section_lines("Tags"))
        chips = [chip for chip, _ in tokens]
        if sorted(chips) == sorted(wanted):
            return None
        others = [(chip, remove) for chip, remove in tokens if chip not in wanted]
        if others:
            removers = [remove for _, remove in others if remove is not None]
            if len(removers) < len(others):
                return abort(f"the Tags field shows {', '.join(chips)} and offers no way to remove a tag")
            return Reply(text=f"Removing the tags that are not this product's: {', '.join(c for c, _ in others)}.",
                         tool_uses=[ToolUse("click", {"element_id": remove.id}) for remove in removers])
        field = next((e for e in self._section("Tags") if e.tag == "input" and e.attributes.get("type", "text") == "text"), None)
        if field is None:
            return abort("the Tags section has no field to type a tag into")
        calls = [ToolUse("click", {"element_id": field.id})]
        for tag in wanted:
            if tag not in chips:
                calls += [ToolUse("type", {"text": tag}), ToolUse("press_key", {"key": "Enter"})]
        return Reply(text="Adding the tags one at a time.", tool_uses=calls)

    def _publish(self) -> Reply | None:
        publish = self.page.button("Publish")
        if publish is not None:
            return click(publish, "Publishing the page.")
        more = self.page.button("More actions")
        if more is None:
            return None
        return click(more, "Opening the footer's other actions to publish.")

    # ---- reading the editor ----------------------------------------------------------------------

    def _holds(self, field: TreeElement, key: str) -> bool:
        value, wanted = field.attributes.get("value", ""), str(self.data[key])
        if key == "price":
            try:
                return bool(value) and Decimal(value) == Decimal(wanted)
            except InvalidOperation:
                return False
        return value == wanted

    def _section_lines(self, label: str) -> list[str]:
        """The editor's lines of the field labelled `label`: from its anchor to the next field's
        (the side panel links to the same anchors, without a "Toggle section" button after them)."""
        lines = self.page.lines
        starts = {i: match.group("label") for i, line in enumerate(lines[:-1])
                  if (match := _SECTION_START.match(line)) and '"Toggle section"' in lines[i + 1]}
        start = next((i for i, name in starts.items() if name == label), None)
        if start is None:
            return []
        end = next((i for i in range(start + 1, len(lines)) if i in starts or 'nav "Actions (footer)"' in lines[i]),
                   len(lines))
        return lines[start:end]

    def _section(self, label: str) -> list[TreeElement]:
        return tree_elements("\n".join(self._section_lines(label)))
