"""`CartridgeProductPolicy`: a scripted model that creates one product in Cartridge's shop admin
(Mezzanine's admin, grappelli-safe theme).

Like a careful model it decides from the request alone (the task's ```json block, the element tree,
the open tabs, the tool results) and never from the shop's code: log in, open "Add Product", fill the
title, choose the status radio, tick "Available for purchase" when asked, type the publish date and
time into the date and time fields beside the calendar and clock links, write the content in
TinyMCE, choose the categories in the two-list chooser (select them under "Available", click
Choose), open "Meta data" and type the keywords, tick the colour option, attach the photo through
the Media Library popup (Browse, Upload, Select), write its description, "Save and continue
editing", then fill the variation row (SKU, stock, prices; its image select shows the photo), Save,
and report the product with the address the product list links to ("View on site").

One decision per page state: each reply acts on what the tree shows is not yet as the task asks,
so the next page state checks the last reply's work. ``rich_text``: ``"keys"`` types the content
with the keyboard (text, Ctrl+B, the bold phrase, Ctrl+B, the rest; Enter between lines);
``"fill"`` writes the markdown-like text in one ``fill`` on the editable region (issue 27).
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

from policy_kit import PageReader, django_log_in, product_data
from policy_kit import abort as _abort
from policy_kit import click as _click

from webtask_core.browser.tree_lines import marked_line
from webtask_core.testing.replies import Reply, ToolUse
from webtask_core.testing.request_view import TreeElement, latest_page, latest_url, resource_names, tree_elements

__all__ = ["CartridgeProductPolicy", "REQUIRED_KEYS", "rich_text_keys"]

REQUIRED_KEYS = ("sku", "title", "status", "available", "publish_date", "publish_time", "description",
                 "categories", "tags", "colour", "photo", "photo_caption", "stock", "price", "sale_price",
                 "username", "password", "site_url")
_LIST_PATH = "/admin/shop/product"
_ADD_PATH = "/admin/shop/product/add"
_CHANGE_PATH = re.compile(r"^/admin/shop/product/\d+/change$")
_LIBRARY_PATH = "/admin/media-library/browse"
_UPLOAD_PATH = "/admin/media-library/upload"
_ERROR_TEXTS = ("Please correct the error", "This field is required", "Please enter a correct",
                "Enter a valid", "Ensure this value")
_UPLOADING = re.compile(r"^Uploading the photo, (.+)\.$")
# A tree line's head: its id or kind and its attributes in parentheses (quoted values may hold parentheses).
_LINE_HEAD = re.compile(r'^\s*- (?:[a-z][a-z0-9]*-\d+|[a-z][a-z0-9]*:?)\s*(?:\((?:[^"()]|"(?:[^"\\]|\\.)*")*\))?')
_TAB_LINE = re.compile(r"^- \[(\d+)\] (.*) — (\S+)( \(active\))?$", re.MULTILINE)


_ELIDED = re.compile(r"^\s*- … \d+ more (above|below)\b")


def rich_text_keys(text: str) -> list[tuple[str, str]]:
    """The keyboard acts that write markdown-like `text` in a rich-text editor: ("type", words),
    ("press", "Control+b") around each **bold** phrase, ("press", "Enter") between lines."""
    acts: list[tuple[str, str]] = []
    for number, line in enumerate(text.split("\n")):
        if number:
            acts.append(("press", "Enter"))
        for index, piece in enumerate(line.split("**")):
            if index:
                acts.append(("press", "Control+b"))
            if piece:
                acts.append(("type", piece))
    return acts


class CartridgeProductPolicy:
    """Creates the product the task's ```json block describes (keys: `REQUIRED_KEYS`; ``photo`` is a
    resource name, ``password`` a ``{{secret:...}}`` placeholder typed as is, ``categories`` and
    ``tags`` are lists, ``available`` a boolean).

    ``max_failed_turns``: abort after this many replies in a row had a failing tool call.
    """

    def __init__(self, *, rich_text: Literal["keys", "fill"] = "keys", max_failed_turns: int = 3) -> None:
        if rich_text not in ("keys", "fill"):
            raise ValueError(f"rich_text is 'keys' or 'fill', not {rich_text!r}")
        self.rich_text = rich_text
        self.max_failed_turns = max_failed_turns

    def __call__(self, request: dict[str, Any]) -> Reply:
        return _Decision(self, request).decide()


class _Decision:
    def __init__(self, policy: CartridgeProductPolicy, request: dict[str, Any]) -> None:
        self.policy = policy
        self.request = request

    def decide(self) -> Reply:
        data = product_data(self.request, REQUIRED_KEYS, self.policy.max_failed_turns)
        if isinstance(data, Reply):
            return data
        if not isinstance(data["categories"], list) or not isinstance(data["tags"], list):
            return _abort("the task's categories and tags should be lists")
        self.data = data

        self.tree = latest_page(self.request)
        self.elements = tree_elements(self.tree)
        url = latest_url(self.request)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return Reply(text="Opening the shop's admin.", tool_uses=[ToolUse("navigate", {"url": data["site_url"]})])
        path = parts.path.rstrip("/")
        if path == "/admin/login":
            return self._log_in()
        if path == _LIST_PATH:
            return self._product_list()
        if path == _ADD_PATH:
            return self._add_form()
        if _CHANGE_PATH.match(path):
            return self._change_form()
        if path == _LIBRARY_PATH:
            return self._media_library()
        if path == _UPLOAD_PATH:
            return self._upload_page()
        return _abort(f"I did not expect the page {url}; the task is about the shop's products")

    # ---- pages -----------------------------------------------------------------------------------

    def _log_in(self) -> Reply:
        return django_log_in(self.tree, self.elements, self.data["username"], self.data["password"], site="admin")

    def _product_list(self) -> Reply:
        title = self.data["title"]
        row = PageReader(self.tree).row_of(title)
        if row:
            saved = f"The Product “{title}” was changed successfully." in self._page_words()
            view = next((e.attributes.get("href") for e in row if e.tag == "a" and e.text == "View on site"), None)
            where = f" at {urljoin(latest_url(self.request), view)}" if view else ""
            feedback = (f"Created the product {title} (SKU {self.data['sku']}); the shop shows it{where}." if saved else
                        f"The product {title} is in the shop's list already{where}; nothing new was created.")
            return Reply(text=feedback, tool_uses=[ToolUse("complete", {"feedback": feedback})])
        add = next((e for e in self.elements if e.tag == "a" and e.text == "Add Product"), None)
        if add is None:
            return _abort("the product list has no Add Product link")
        return _click(add, "Adding a new product.")

    def _add_form(self) -> Reply:
        errors = self._errors()
        if errors:
            return _abort("the shop rejected the product: " + "; ".join(errors))
        if self._editor() is None:  # TinyMCE builds its frame after the page loaded
            return Reply(text="The content editor is still loading.", tool_uses=[ToolUse("wait_for", {"timeout_s": 5})])
        for step in (self._main_fields, self._content, self._categories, self._keywords, self._colour,
                     self._photo, self._photo_caption):
            reply = step()
            if reply is not None:
                return reply
        save = self._submit("_continue")
        if save is None:
            return self._not_in_view("the product form has no 'Save and continue editing' button")
        return _click(save, "Everything is filled in; saving to fill in the variation next.")

    def _change_form(self) -> Reply:
        errors = self._errors()
        if errors:
            return _abort("the shop rejected the product: " + "; ".join(errors))
        title = self._named("title")
        if title is None:
            return self._not_in_view("the product's change form shows no title field", way="up")
        if title.attributes.get("value") != self.data["title"]:
            return _abort(f"this is not the product I was creating: its title is {title.attributes.get('value')!r}")
        fields = {key: self._named(f"variations-0-{key}") for key in ("sku", "num_in_stock", "unit_price", "sale_price")}
        image = self._named("variations-0-image")
        lacking = [key for key, element in fields.items() if element is None] + (["image"] if image is None else [])
        save = self._submit("_save")
        if lacking or save is None:
            return self._not_in_view(f"the variation row lacks {', '.join(lacking or ['a Save button'])}")
        values = {"sku": self.data["sku"], "num_in_stock": str(self.data["stock"]),
                  "unit_price": str(self.data["price"]), "sale_price": str(self.data["sale_price"])}
        calls = [ToolUse("fill", {"element_id": element.id, "text": values[key]})
                 for key, element in fields.items() if element is not None]
        caption = self.data["photo_caption"]
        assert image is not None  # `lacking` said so
        if image.attributes.get("value") != caption:
            if caption not in image.attributes.get("options", "").split(" | "):
                return _abort(f"the variation's image list does not offer the photo {caption!r}")
            calls.append(ToolUse("select_option", {"element_id": image.id, "option": caption}))
        return Reply(text="Filling in the variation (SKU, stock, prices, image) and saving the product.",
                     tool_uses=[*calls, ToolUse("click", {"element_id": save.id})])

    def _media_library(self) -> Reply:
        """The Media Library popup: select the photo I uploaded in its row, else go and upload it."""
        reader = PageReader(self.tree)
        uploaded = self._said(_UPLOADING)
        # The library lists files under names of its own (lower case). Handed the task midway (the
        # upload was replayed), I know no name of mine: a file named after the product's SKU is its photo.
        sku = self.data["sku"].casefold()
        names = [uploaded.casefold()] if uploaded is not None else [
            e.text for e in reader.elements if e.tag == "a" and e.text.casefold().rsplit(".", 1)[0] == sku]
        for name in names:
            select = next((e for e in reader.row_of(name) if e.attributes.get("hint") == "Select"), None)
            if select is not None:
                return _click(select, f"Selecting the photo, {name}.")
        upload = next((e for e in self.elements if e.tag == "a" and e.text == "Upload"), None)
        if upload is None:
            return _abort("the Media Library offers no Upload")
        return _click(upload, "Uploading the photo to the Media Library.")

    def _upload_page(self) -> Reply:
        photo = str(self.data["photo"])
        if photo not in resource_names(self.request):
            return _abort(f"the photo {photo} is not among the resources I was given")
        field = next((e for e in self.elements if e.attributes.get("type") == "file"), None)
        button = next((e for e in self.elements if e.attributes.get("type") == "submit" and e.text == "Upload"), None)
        if field is None or button is None:
            return _abort("the upload page has no file field or Upload button")
        chosen = field.attributes.get("value")
        if not chosen:
            return Reply(text="Choosing the photo.", tool_uses=[
                ToolUse("upload", {"element_id": field.id, "resources": [photo]})])
        # The page names the file; I note it to find the file in the library's list afterwards.
        return _click(button, f"Uploading the photo, {chosen}.")

    # ---- the add form, part by part (None: that part is as the task asks) --------------------------

    def _main_fields(self) -> Reply | None:
        title = self._named("title")
        status = next((e for e in self.elements if e.attributes.get("name") == "status" and e.text == self.data["status"]),
                      None)
        available = self._named("available")
        date, time = self._named("publish_date_0"), self._named("publish_date_1")
        if not (title and status and available and date and time):
            lacking = [what for what, element in (("a title", title), (f"a {self.data['status']!r} status", status),
                                                  ("the availability box", available), ("the publish date", date),
                                                  ("the publish time", time)) if element is None]
            return self._not_in_view(f"the product form lacks {', '.join(lacking)}", way="up")
        calls = []
        if title.attributes.get("value") != self.data["title"]:
            calls.append(ToolUse("fill", {"element_id": title.id, "text": self.data["title"]}))
        if not status.has("checked"):
            calls.append(ToolUse("check", {"element_id": status.id}))
        if available.has("checked") != bool(self.data["available"]):
            calls.append(ToolUse("check", {"element_id": available.id, "checked": bool(self.data["available"])}))
        if date.attributes.get("value") != self.data["publish_date"]:
            calls.append(ToolUse("fill", {"element_id": date.id, "text": self.data["publish_date"]}))
        if time.attributes.get("value", "")[:5] != self.data["publish_time"][:5]:
            calls.append(ToolUse("fill", {"element_id": time.id, "text": self.data["publish_time"]}))
        if not calls:
            return None
        return Reply(text="Filling in the title, status, availability and publish date.", tool_uses=calls)

    def _content(self) -> Reply | None:
        editor = self._editor()
        assert editor is not None  # checked by the caller
        held = editor.attributes.get("value", "")
        wanted = self.data["description"]
        if _shows(held, wanted):
            return None
        if self.policy.rich_text == "fill":
            return Reply(text="Writing the content.", tool_uses=[
                ToolUse("fill", {"element_id": editor.id, "text": wanted})])
        if held.strip():
            return _abort("the content editor holds text I did not expect: " + " / ".join(_lines(held)))
        calls = [ToolUse("click", {"element_id": editor.id})]
        for act, text in rich_text_keys(wanted):
            calls.append(ToolUse("type", {"text": text}) if act == "type" else ToolUse("press_key", {"key": text}))
        return Reply(text="Writing the content, with its bold phrase.", tool_uses=calls)

    def _categories(self) -> Reply | None:
        chosen, available = self._named("categories"), self._named("categories_old")
        choose = next((e for e in self.elements if e.tag == "a" and e.text == "Choose"), None)
        if chosen is None or available is None or choose is None:
            return self._not_in_view("the product form has no category chooser")
        wanted = [str(name) for name in self.data["categories"]]
        have = _options(chosen)
        if sorted(have) == sorted(wanted):
            return None
        extra = [name for name in have if name not in wanted]
        if extra:
            return _abort(f"categories I was not asked for are chosen: {', '.join(extra)}")
        offered = _options(available)
        to_choose = [name for name in wanted if name not in have]
        unknown = [name for name in to_choose if name not in offered]
        if unknown:
            return _abort(f"the shop has no category {', '.join(unknown)} (it offers {', '.join(offered)})")
        return Reply(text=f"Choosing the categories {', '.join(to_choose)}.", tool_uses=[
            ToolUse("select_option", {"element_id": available.id, "option": to_choose}),
            ToolUse("click", {"element_id": choose.id}),
        ])

    def _keywords(self) -> Reply | None:
        field = self._named("keywords_1")
        wanted = [str(tag) for tag in self.data["tags"]]
        if field is None:
            heading = next((e for e in self.elements if e.text == "Meta data"), None)
            if heading is None:
                return self._not_in_view("the product form has no keywords field and no Meta data section")
            return _click(heading, "Opening the Meta data section for the keywords.")
        have = [word.strip() for word in field.attributes.get("value", "").split(",") if word.strip()]
        if have == wanted:
            return None
        return Reply(text="Typing the keywords.", tool_uses=[
            ToolUse("fill", {"element_id": field.id, "text": ", ".join(wanted)})])

    def _colour(self) -> Reply | None:
        box = next((e for e in self.elements if e.attributes.get("name") == "option2"
                    and e.text == self.data["colour"]), None)
        if box is None:
            offered = [e.text for e in self.elements if e.attributes.get("name") == "option2"]
            if not offered:
                return self._not_in_view("the product form shows no colour options")
            return _abort(f"the shop offers no colour {self.data['colour']!r} for the variations (it offers "
                          f"{', '.join(offered)})")
        return None if box.has("checked") else Reply(text=f"Ticking the colour {self.data['colour']}.", tool_uses=[
            ToolUse("check", {"element_id": box.id})])

    def _photo(self) -> Reply | None:
        if any(e.attributes.get("hint") == "link_id_images-0-file" for e in self.elements):
            return None
        library = next((index for index, title, url, active in self._tabs()
                        if not active and "/admin/media-library/" in url), None)
        if library is not None:
            return Reply(text="The Media Library opened in a tab of its own; going there.",
                         tool_uses=[ToolUse("switch_tab", {"tab_index": library})])
        browse = next((e for e in self.elements if e.attributes.get("hint") == "fb_show"), None)
        if browse is None:
            return self._not_in_view("the Images section has no way to choose an image")
        return _click(browse, "Opening the image chooser for the photo.")

    def _photo_caption(self) -> Reply | None:
        caption = self._named("images-0-description")
        if caption is None:
            return self._not_in_view("the image has no description field")
        if caption.attributes.get("value") == self.data["photo_caption"]:
            return None
        return Reply(text="Describing the photo.", tool_uses=[
            ToolUse("fill", {"element_id": caption.id, "text": self.data["photo_caption"]})])

    # ---- reading the request ---------------------------------------------------------------------

    def _not_in_view(self, reason: str, *, way: str = "down") -> Reply:
        """What I need is not in the tree: scroll where the tree says it left elements out (`way`
        first when it left out both); else the page may still be loading: wait once, then abort
        with `reason`."""
        sides = {match.group(1) for match in map(_ELIDED.match, self.tree.splitlines()) if match}
        if sides:
            side = ({"up": "above", "down": "below"}[way] if len(sides) == 2 else sides.pop())
            direction = "up" if side == "above" else "down"
            return Reply(text=f"I do not see it ({reason}); the page goes on {side}: scrolling {direction}.",
                         tool_uses=[ToolUse("scroll", {"direction": direction, "amount": 1.0})])
        waiting = f"I do not see it yet ({reason}); the page may still be loading: waiting."
        if self._last_reply_text() != waiting:
            return Reply(text=waiting, tool_uses=[ToolUse("wait_for", {"timeout_s": 5})])
        return _abort(reason)

    def _last_reply_text(self) -> str:
        """The text of my reply before this request (replayed steps' replies included)."""
        for message in reversed(self.request["messages"]):
            if message.get("role") == "assistant":
                content = message.get("content")
                blocks = [content] if isinstance(content, str) else [
                    b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
                return " ".join(blocks).strip()
        return ""

    def _named(self, name: str) -> TreeElement | None:
        return next((e for e in self.elements if e.attributes.get("name") == name), None)

    def _submit(self, name: str) -> TreeElement | None:
        return next((e for e in self.elements if e.attributes.get("type") == "submit"
                     and e.attributes.get("name") == name), None)

    def _editor(self) -> TreeElement | None:
        return next((e for e in self.elements if e.has("contenteditable") and "Rich Text Area" in e.text), None)

    def _page_words(self) -> str:
        """The words the page shows, line after line (no attribute values), as one text."""
        texts = []
        for line in self.tree.splitlines():
            rest = _LINE_HEAD.sub("", marked_line(line))  # a text line as `- text: "..."`
            texts += re.findall(r'"((?:[^"\\]|\\.)*)"', rest)
        return "".join(texts)

    def _errors(self) -> list[str]:
        return [text for text in _ERROR_TEXTS if text in self.tree]

    def _tabs(self) -> list[tuple[int, str, str, bool]]:
        """The open tabs the last history block lists: (index, title, url, active)."""
        last = self.request["messages"][-1]
        blocks = last.get("content", [])
        texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        history = next((t for t in reversed(texts) if "<history>" in t), "")
        return [(int(m.group(1)), m.group(2), m.group(3), bool(m.group(4))) for m in _TAB_LINE.finditer(history)]

    def _said(self, pattern: re.Pattern[str]) -> str | None:
        """What I noted in an earlier reply of this task (the newest one matching `pattern`)."""
        for message in reversed(self.request["messages"]):
            if message.get("role") != "assistant" or isinstance(message.get("content"), str):
                continue
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "text":
                    match = pattern.match(block.get("text", "").strip())
                    if match is not None:
                        return match.group(1)
        return None


def _shows(held: str, wanted: str) -> bool:
    """Whether a field showing `held` holds `wanted`: line by line, or (the tree cuts long values with
    an ellipsis) as far as it shows."""
    if held.endswith("…"):
        shown = " ".join(_lines(held[:-1]))
        return bool(shown) and " ".join(_lines(wanted)).startswith(shown)
    return _lines(held) == _lines(wanted)


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.replace("\u00a0", " ").splitlines() if line.strip()]


def _options(select: TreeElement) -> list[str]:
    return [option for option in select.attributes.get("options", "").split(" | ") if option]
