"""`WagtailProductPolicy`: a scripted model that adds one product page in Wagtail's page editor.

Like a careful model it decides from the request alone (the task's ```json block, the element tree,
the last tool results), never from Wagtail's code: log in, open the page explorer and go to the
Products page, add a child page of type "Product page", fill the fields, type the release date into
the date field and confirm it in the calendar that opens on focus (clicking its day closes it; left
open it covers the next controls),
choose the photo through the image chooser (its Upload tab: the file, a title, Upload), write the
body, type the tags one at a time (each ended with Enter), open the footer's "More actions" and
Publish, and complete once the explorer says the page was published, naming the live URL it links
to. One decision per page state; the next state shows whether it took (a field holds its value, the
image section names the photo, the tag widget shows a chip per tag), and a state it did not expect
ends the task with an abort that says what it saw.

How it writes what it composes matters to replay (issue 25 §1, §2): ``rich_text="keys"`` types the
body in pieces (the text, Ctrl+B, the bold words, Ctrl+B, ...) as a model does when ``fill`` does
not format; ``rich_text="fill"`` writes it with one ``fill`` of the markdown-like text (``A **bold**
phrase``), what the tree shows as an editor's value once ``fill`` formats (issue 27).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

from wagtail_site.shop import PAGE_TYPE, SECTION

from webtask_core.testing.replies import Reply, ToolUse
from webtask_core.testing.request_view import (
    TreeElement,
    error_streak,
    last_tool_results,
    latest_page,
    latest_url,
    resource_names,
    task_json,
    tree_elements,
)

__all__ = ["WagtailProductPolicy", "REQUIRED_KEYS", "RichText", "body_segments", "body_text"]

RichText = Literal["fill", "keys"]
REQUIRED_KEYS = ("title", "sku", "price", "category", "condition", "release_date", "photo", "body", "tags",
                 "username", "password", "site_url")
_EDITOR_PATH = re.compile(r"^/admin/pages/(add/products/productpage/\d+|\d+/edit)$")
_EXPLORER_PATH = re.compile(r"^/admin/pages/\d+$")
_ADD_SUBPAGE_PATH = re.compile(r"^/admin/pages/\d+/add_subpage$")
# A field's section in the editor starts at its anchor link: `- a-5 (href="#panel-child-content-sku-section") "SKU*"`.
_SECTION_START = re.compile(r'^\s*- a-\d+ \(href="#panel-child-content-[\w-]+-section"\) "(?P<label>[^"]*?)\*?"$')
_ERROR_TEXTS = ("could not be created due to validation errors", "could not be saved due to validation errors",
                "This field is required", "Enter a valid")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
# Markdown-like emphasis in the task's body: **bold**, *italic*.
_EMPHASIS = re.compile(r"\*\*(?P<bold>.+?)\*\*|\*(?P<italic>.+?)\*")


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


def _abort(reason: str) -> Reply:
    return Reply(text=reason, tool_uses=[ToolUse("abort", {"reason": reason})])


def _click(element: TreeElement, why: str) -> Reply:
    return Reply(text=why, tool_uses=[ToolUse("click", {"element_id": element.id})])


class WagtailProductPolicy:
    """Adds the product page the task's ```json block describes (keys: `REQUIRED_KEYS`; ``photo`` is
    a resource name, ``tags`` a list, ``body`` markdown-like text, ``password`` a ``{{secret:...}}``
    placeholder typed as it is).

    ``rich_text``: how the body is written (above). ``max_failed_turns``: abort after this many
    replies in a row had a failing tool call.
    """

    def __init__(self, *, rich_text: RichText = "keys", max_failed_turns: int = 3) -> None:
        if rich_text not in ("fill", "keys"):
            raise ValueError(f"rich_text must be 'fill' or 'keys', not {rich_text!r}")
        self.rich_text = rich_text
        self.max_failed_turns = max_failed_turns

    def __call__(self, request: dict[str, Any]) -> Reply:
        return _Decision(self, request).decide()


class _Decision:
    def __init__(self, policy: WagtailProductPolicy, request: dict[str, Any]) -> None:
        self.policy = policy
        self.request = request

    def decide(self) -> Reply:
        try:
            data = task_json(self.request)
        except ValueError as exc:
            return _abort(f"I cannot read the product data: {exc}")
        if not isinstance(data, dict):
            return _abort("the task's ```json block is not an object")
        missing = [key for key in REQUIRED_KEYS if key not in data]
        if missing:
            return _abort(f"the task's product data lacks {', '.join(missing)}")
        if not isinstance(data["tags"], list):
            return _abort("the task's tags are not a list")
        self.data = data
        failures = error_streak(self.request)
        if failures >= self.policy.max_failed_turns:
            errors = [text for _, is_error, text in last_tool_results(self.request) if is_error]
            return _abort(f"the last {failures} attempts failed; last error: {errors[-1] if errors else '?'}")

        self.tree = latest_page(self.request)
        self.lines = self.tree.splitlines()
        self.elements = tree_elements(self.tree)
        self.url = latest_url(self.request)
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https"):
            return Reply(text="Opening the site's admin.", tool_uses=[ToolUse("navigate", {"url": data["site_url"]})])
        path = parts.path.rstrip("/")
        if not self.elements:  # a page still loading shows nothing yet
            return Reply(text="The page is still loading.", tool_uses=[ToolUse("wait_for", {"timeout_s": 5})])
        if path == "/admin/login":
            return self._log_in()
        if path == "/admin":
            return self._dashboard()
        if _EXPLORER_PATH.match(path):
            return self._explorer()
        if _ADD_SUBPAGE_PATH.match(path):
            return self._page_types()
        if _EDITOR_PATH.match(path):
            return self._editor()
        return _abort(f"I did not expect the page {self.url}; the task is about the admin's Products pages")

    # ---- pages -----------------------------------------------------------------------------------

    def _log_in(self) -> Reply:
        if "didn't match" in self.tree or "Please enter a correct" in self.tree:
            return _abort("the admin rejected the username or password")
        username, password = self._named("username"), self._named("password")
        button = self._button("Sign in")
        if not (username and password and button):
            return _abort("the sign-in page has no username/password form that I can see")
        return Reply(text=f"Signing in as {self.data['username']}.", tool_uses=[
            ToolUse("fill", {"element_id": username.id, "text": self.data["username"]}),
            ToolUse("fill", {"element_id": password.id, "text": self.data["password"]}),
            ToolUse("click", {"element_id": button.id}),
        ])

    def _dashboard(self) -> Reply:
        """The page explorer of the sidebar: open it, go down to the Products page."""
        explorer = self._block('dialog "Page explorer"')
        if explorer is None:
            pages = next((e for e in self.elements if e.tag == "button" and e.text == "Pages"), None)
            if pages is None:
                return _abort("the dashboard has no Pages menu")
            return _click(pages, "Opening the page explorer.")
        section = next((e for e in explorer if e.tag == "a" and e.text == SECTION
                        and _EXPLORER_PATH.match(urlsplit(e.attributes.get("href", "")).path.rstrip("/"))), None)
        if section is not None:
            return _click(section, f"Going to the {SECTION} page.")
        deeper = [e for e in explorer if e.tag == "a" and e.text.startswith("View child pages of")]
        if len(deeper) != 1:
            return _abort(f"the page explorer shows no {SECTION} page and no single page to look under")
        return _click(deeper[0], f"Looking for the {SECTION} page under the home page.")

    def _explorer(self) -> Reply:
        title = self.data["title"]
        published = f"Page '{title}' has been published."
        if published in self.tree:
            live = self._link_after(published, "View live")
            if live is None:
                return _abort(f"the admin says the page was published but links to no live page: {published}")
            address = urljoin(self.url, live.attributes.get("href", ""))
            feedback = f"Published the product page {title} (SKU {self.data['sku']}); it is live at {address}"
            return Reply(text=feedback, tool_uses=[ToolUse("complete", {"feedback": feedback})])
        if f'h1 "Exploring: {SECTION}"' not in self.tree:
            section = next((e for e in self.elements if e.tag == "a" and e.text == SECTION), None)
            if section is None:
                return _abort(f"this is not the {SECTION} page and it links to none")
            return _click(section, f"Going to the {SECTION} page.")
        row = self._row_of(title)
        if row:
            if any("Current page status: live" in e.text for e in row):
                feedback = f"The product page {title} is published already; nothing new was created."
                return Reply(text=feedback, tool_uses=[ToolUse("complete", {"feedback": feedback})])
            return _click(row[0], f"{title} is there as a draft: opening it to finish it.")
        add = next((e for e in self.elements if e.tag == "a" and e.text == "Add child page"), None)
        if add is None:
            return _abort(f"the {SECTION} page offers no way to add a child page")
        return _click(add, f"Adding a child page under {SECTION}.")

    def _page_types(self) -> Reply:
        choice = next((e for e in self.elements if e.tag == "a" and e.text == PAGE_TYPE), None)
        if choice is None:
            offered = ", ".join(e.text for e in self.elements if e.tag == "a" and not e.text.startswith("Pages using"))
            return _abort(f"no page type {PAGE_TYPE!r} to choose (the page offers {offered})")
        return _click(choice, f"Creating a {PAGE_TYPE}.")

    # ---- the page editor -------------------------------------------------------------------------

    def _editor(self) -> Reply:
        errors = [text for text in _ERROR_TEXTS if text in self.tree]
        if errors:
            return _abort("the editor rejected the page: " + "; ".join(errors))
        if 'h1 "Choose an image"' in self.tree:
            return self._image_chooser()
        title = self._named("title")
        if title is None:
            return _abort("the page editor has no Title field")
        held = title.attributes.get("value", "")
        if held and held != self.data["title"]:
            return _abort(f"this editor holds another page ({held!r}); I will not overwrite it")
        if self._calendar_open():
            return self._confirm_date()
        covered = [text for _, is_error, text in last_tool_results(self.request) if is_error and "is covered by footer" in text]
        if covered:  # the sticky footer lies over a field near the bottom of the window
            box = next((e for e in self.elements if "scrollable" in e.attributes), None)  # the editor scrolls in its own box
            scroll: dict[str, Any] = {"direction": "down", "amount": 0.4}
            if box is not None:
                scroll["element_id"] = box.id
            return Reply(text="The footer covers the field: scrolling it into the open.",
                         tool_uses=[ToolUse("scroll", scroll)])
        for step in (self._fields, self._image, self._body, self._tags, self._publish):
            reply = step()
            if reply is not None:
                return reply
        return _abort("the page is filled in but I found no way to publish it")

    def _fields(self) -> Reply | None:
        """Title, SKU, price, category, condition and release date in one turn; None once all hold
        their values."""
        calls: list[ToolUse] = []
        for name in ("title", "sku", "price"):
            field = self._named(name)
            if field is None:
                return _abort(f"the page editor has no {name} field")
            if not self._holds(field, name):
                calls.append(ToolUse("fill", {"element_id": field.id, "text": str(self.data[name])}))
        category = self._named("category")
        if category is None:
            return _abort("the page editor has no Category select")
        if category.attributes.get("value") != self.data["category"]:
            calls.append(ToolUse("select_option", {"element_id": category.id, "option": self.data["category"]}))
        radios = [e for e in self._section("Condition") if e.attributes.get("type") == "radio"]
        wanted = next((e for e in radios if e.text == self.data["condition"]), None)
        if wanted is None:
            return _abort(f"the Condition choices ({', '.join(e.text for e in radios)}) have no {self.data['condition']!r}")
        if not wanted.has("checked"):
            calls.append(ToolUse("check", {"element_id": wanted.id}))
        date = self._named("release_date")
        if date is None:
            return _abort("the page editor has no Release date field")
        if date.attributes.get("value") != self.data["release_date"]:
            # Typed: the field takes text. The calendar that opens on focus is answered next turn.
            calls.append(ToolUse("fill", {"element_id": date.id, "text": self.data["release_date"]}))
        if not calls:
            return None
        return Reply(text="Filling in the product's details.", tool_uses=calls)

    def _confirm_date(self) -> Reply:
        """The calendar opened on the date field (it stays open over the fields below it): click
        the typed date's day in it, which closes it, as a person confirms a date in a picker."""
        date = self._named("release_date")
        wanted = self.data["release_date"]
        if date is None or date.attributes.get("value") != wanted:
            return _abort(f"a calendar is open but the release date field does not hold {wanted}")
        year, month, day = (int(part) for part in wanted.split("-"))
        month_name = _MONTHS[month - 1]
        if not (any(line.strip().endswith(f'"{month_name}"') for line in self.lines)
                and any(line.strip().endswith(f'"{year}"') for line in self.lines)):
            # It opened before the date was typed and still shows that month: it reads the field
            # again when the field is clicked.
            return _click(date, f"The calendar shows another month than {month_name} {year}: clicking the date field.")
        cells = [e for e in self.elements if e.tag == "td" and e.text == str(day)]
        if not cells:
            return _abort(f"the calendar has no day {day}")
        # A day number can show twice (the end of the month before, the start of the next):
        # the month's own is the first of a small number and the last of a large one.
        cell = cells[0] if day < 15 else cells[-1]
        return _click(cell, f"Confirming {wanted} in the calendar.")

    def _image(self) -> Reply | None:
        section = self._section("Image")
        choose = next((e for e in section if e.tag == "button" and e.text == "Choose an image"), None)
        if choose is not None:
            return _click(choose, "Opening the image chooser to upload the photo.")
        chosen = self._texts_in("Image")
        if self.data["title"] in chosen:
            return None
        # Another image than this product's photo: choose again.
        change = next((e for e in section if e.tag == "button" and e.text == "Change image"), None)
        if change is not None:
            return _click(change, f"The image chosen is {' / '.join(chosen)}, not this product's photo: changing it.")
        actions = next((e for e in section if e.tag == "button" and e.text == "Actions"), None)
        if actions is None:
            return _abort(f"the Image field shows {' / '.join(chosen) or 'nothing'} and offers no way to change it")
        return _click(actions, "Opening the image's actions to change it.")

    def _image_chooser(self) -> Reply:
        photo = str(self.data["photo"])
        if photo not in resource_names(self.request):
            return _abort(f"the photo {photo} is not among the resources I was given")
        upload_tab = next((e for e in self.elements if e.attributes.get("role") == "tab" and e.text == "Upload"), None)
        file_input = self._named("image-chooser-upload-file")
        if file_input is None or (upload_tab is not None and upload_tab.attributes.get("aria-selected") != "true"):
            if upload_tab is None:
                return _abort("the image chooser has no Upload tab")
            return _click(upload_tab, "Switching to the chooser's Upload tab.")
        if not file_input.attributes.get("value"):
            return Reply(text=f"Uploading the photo {photo}.", tool_uses=[
                ToolUse("upload", {"element_id": file_input.id, "resources": [photo]})])
        title, upload = self._named("image-chooser-upload-title"), self._button("Upload")
        if title is None or upload is None:
            return _abort("the chooser's upload form has no Title field or Upload button")
        return Reply(text="Naming the photo after the product and uploading it.", tool_uses=[
            ToolUse("fill", {"element_id": title.id, "text": self.data["title"]}),
            ToolUse("click", {"element_id": upload.id}),
        ])

    def _body(self) -> Reply | None:
        editor = next((e for e in self._section("Body") if e.has("contenteditable")), None)
        if editor is None:
            return _abort("the Body section has no editor")
        wanted = body_text(self.data["body"])
        held = editor.attributes.get("value", "")
        if _same_text(held, wanted) or _same_text(held, self.data["body"]):
            return None
        if held:  # not what the task says: select it all and delete it, then write it afresh
            return Reply(text=f"The body holds other text ({held!r}): clearing it.", tool_uses=[
                ToolUse("click", {"element_id": editor.id}), ToolUse("press_key", {"key": "Control+a"}),
                ToolUse("press_key", {"key": "Backspace"})])
        if self.policy.rich_text == "fill":
            return Reply(text="Writing the body.", tool_uses=[
                ToolUse("fill", {"element_id": editor.id, "text": self.data["body"]})])
        calls = [ToolUse("click", {"element_id": editor.id})]
        shortcut = {"bold": "Control+b", "italic": "Control+i"}
        for text, style in body_segments(self.data["body"]):
            if text == "\n":
                calls.append(ToolUse("press_key", {"key": "Enter"}))
            elif style:
                calls += [ToolUse("press_key", {"key": shortcut[style]}), ToolUse("type", {"text": text}),
                          ToolUse("press_key", {"key": shortcut[style]})]
            else:
                calls.append(ToolUse("type", {"text": text}))
        return Reply(text="Writing the body, with its bold and italic words.", tool_uses=calls)

    def _tags(self) -> Reply | None:
        wanted = [str(tag) for tag in self.data["tags"]]
        chips = self._chips("Tags")
        if sorted(chips) == sorted(wanted):
            return None
        others = [(chip, remove) for chip, remove in self._chip_removers("Tags") if chip not in wanted]
        if others:
            if any(remove is None for _, remove in others):
                return _abort(f"the Tags field shows {', '.join(chips)} and offers no way to remove a tag")
            return Reply(text=f"Removing the tags that are not this product's: {', '.join(c for c, _ in others)}.",
                         tool_uses=[ToolUse("click", {"element_id": remove.id}) for _, remove in others if remove])
        field = next((e for e in self._section("Tags") if e.tag == "input" and e.attributes.get("type") == "text"), None)
        if field is None:
            return _abort("the Tags section has no field to type a tag into")
        calls = [ToolUse("click", {"element_id": field.id})]
        for tag in wanted:
            if tag not in chips:
                calls += [ToolUse("type", {"text": tag}), ToolUse("press_key", {"key": "Enter"})]
        return Reply(text="Adding the tags one at a time.", tool_uses=calls)

    def _publish(self) -> Reply | None:
        publish = self._button("Publish")
        if publish is not None:
            return _click(publish, "Publishing the page.")
        more = next((e for e in self.elements if e.tag == "button" and e.text == "More actions"), None)
        if more is None:
            return None
        return _click(more, "Opening the footer's other actions to publish.")

    # ---- reading the tree ------------------------------------------------------------------------

    def _named(self, name: str) -> TreeElement | None:
        return next((e for e in self.elements if e.attributes.get("name") == name), None)

    def _button(self, text: str) -> TreeElement | None:
        return next((e for e in self.elements if e.tag == "button" and e.text == text), None)

    def _holds(self, field: TreeElement, key: str) -> bool:
        value, wanted = field.attributes.get("value", ""), str(self.data[key])
        if key == "price":
            try:
                return bool(value) and Decimal(value) == Decimal(wanted)
            except InvalidOperation:
                return False
        return value == wanted

    def _calendar_open(self) -> bool:
        """A month's calendar shows (its weekday header row)."""
        return all(any(line.strip() == f'- text: "{day}"' for line in self.lines) for day in ("Sun", "Mon", "Sat"))

    def _section_lines(self, label: str) -> list[str]:
        """The editor's lines of the field labelled `label`: from its anchor to the next field's."""
        starts = [i for i, line in enumerate(self.lines[:-1])
                  if _SECTION_START.match(line) and '"Toggle section"' in self.lines[i + 1]]  # not the side panel's links
        start = next((i for i in starts if _SECTION_START.match(self.lines[i]).group("label") == label), None)  # type: ignore[union-attr]
        if start is None:
            return []
        end = next((i for i in range(start + 1, len(self.lines))
                    if i in starts or 'nav "Actions (footer)"' in self.lines[i]), len(self.lines))
        return self.lines[start:end]

    def _section(self, label: str) -> list[TreeElement]:
        return tree_elements("\n".join(self._section_lines(label)))

    def _texts_in(self, label: str) -> list[str]:
        return [text for line in self._section_lines(label) for text in _quoted_text(line)]

    def _chips(self, label: str) -> list[str]:
        """The tokens of a tag widget: the text of each list item inside the field."""
        return [chip for chip, _ in self._chip_removers(label)]

    def _chip_removers(self, label: str) -> list[tuple[str, TreeElement | None]]:
        """Each token of a tag widget with the control beside it that removes it (its "x")."""
        lines = self._section_lines(label)
        chips: list[tuple[str, TreeElement | None]] = []
        for index, line in enumerate(lines[:-1]):
            if line.strip() != "- item":
                continue
            texts = _quoted_text(lines[index + 1])
            if texts:
                after = tree_elements("\n".join(lines[index + 2:index + 3]))
                chips.append((texts[0].strip('"'), after[0] if after and after[0].tag == "a" else None))
        return chips

    def _block(self, anchor: str) -> list[TreeElement] | None:
        """The elements nested under the first line holding `anchor` (a dialog, a list)."""
        start = next((i for i, line in enumerate(self.lines) if anchor in line), None)
        if start is None:
            return None
        depth = _indent(self.lines[start])
        end = next((i for i in range(start + 1, len(self.lines)) if _indent(self.lines[i]) <= depth), len(self.lines))
        return tree_elements("\n".join(self.lines[start + 1:end]))

    def _link_after(self, text: str, link: str) -> TreeElement | None:
        """The first link reading `link` after the line holding `text` (a message's own link)."""
        start = next((i for i, line in enumerate(self.lines) if text in line), None)
        if start is None:
            return None
        return next((e for e in tree_elements("\n".join(self.lines[start + 1:])) if e.tag == "a" and e.text == link), None)

    def _row_of(self, title: str) -> list[TreeElement]:
        """The elements of the listing's row whose link reads `title`, that link first."""
        rows: list[list[str]] = []
        for line in self.lines:
            if line.strip() == "- row":
                rows.append([])
            elif rows:
                rows[-1].append(line)
        for row in rows:
            elements = tree_elements("\n".join(row))
            link = next((e for e in elements if e.tag == "a" and e.text == title), None)
            if link is not None:
                return [link, *(e for e in elements if e is not link)]
        return []


def _same_text(shown: str, wanted: str) -> bool:
    """Whether a field showing `shown` holds `wanted`: the tree cuts a long value with "…"."""
    shown, wanted = shown.replace("\n", ""), wanted.replace("\n", "")
    if shown.endswith("…"):
        return len(shown) > 1 and wanted.startswith(shown[:-1])
    return shown == wanted


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _quoted_text(line: str) -> list[str]:
    """The text of a `- text: "..."` line (escapes undone), else nothing."""
    match = re.match(r'^\s*- text: "(.*)"$', line)
    return [match.group(1).replace('\\"', '"').replace("\\\\", "\\")] if match else []

