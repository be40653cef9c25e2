"""`OscarProductPolicy`: a scripted model that creates one product in django-oscar's dashboard.

Like a careful model it decides from the request alone (the task's ```json block, the element tree,
the last tool results) and never from the site's code: log in, choose the product type in the
"Create new product" picker and open the form, fill title, UPC and the description, choose the
category, upload the photos, fill the stock record, save, and report the product once the list
shows it. One decision per page state, each checked on the next page before going on (a chosen
option is read back from the combobox, the description from the editor).

What the tree makes it do: TinyMCE's editable body (inside the "Rich Text Area" iframe) is an
element named "Description" whose value is the text it holds (its lines joined by a newline): it
clicks it and types with the keyboard. Oscar's selects are select2 widgets: the ``<select>`` is
hidden, so it clicks the combobox and then the option of the list that opens. The stock record's
fields are named by their column headers; it takes them by their ``name``, which says more.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from policy_kit import abort as _abort
from policy_kit import click as _click
from policy_kit import django_log_in, product_data

from webtask_core.browser.tree_lines import text_of
from webtask_core.testing.replies import Reply, ToolUse
from webtask_core.testing.request_view import TreeElement, latest_page, latest_url, resource_names, tree_elements

__all__ = ["OscarProductPolicy", "REQUIRED_KEYS"]

REQUIRED_KEYS = ("sku", "title", "upc", "description", "product_type", "category", "partner", "price",
                 "stock", "photos", "username", "password", "site_url")
_LIST_PATH = "/dashboard/catalogue"
_FORM_PATH = re.compile(r"^/dashboard/catalogue/products/(create/[\w-]+|\d+)$")
_ERROR_TEXTS = ("Your submitted data was not valid", "This field is required", "Please enter a correct")


class OscarProductPolicy:
    """Creates the product the task's ```json block describes (keys: `REQUIRED_KEYS`; ``photos``
    are resource names, ``password`` a ``{{secret:...}}`` placeholder typed as is).

    ``max_failed_turns``: abort after this many replies in a row had a failing tool call.
    """

    def __init__(self, *, max_failed_turns: int = 3) -> None:
        self.max_failed_turns = max_failed_turns

    def __call__(self, request: dict[str, Any]) -> Reply:
        return _Decision(self, request).decide()


class _Decision:
    def __init__(self, policy: OscarProductPolicy, request: dict[str, Any]) -> None:
        self.policy = policy
        self.request = request

    def decide(self) -> Reply:
        data = product_data(self.request, REQUIRED_KEYS, self.policy.max_failed_turns)
        if isinstance(data, Reply):
            return data
        self.data = {key: value if key == "photos" else str(value) for key, value in data.items()}

        self.tree = latest_page(self.request)
        self.elements = tree_elements(self.tree)
        url = latest_url(self.request)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return Reply(text="Opening the shop's dashboard.",
                         tool_uses=[ToolUse("navigate", {"url": self.data["site_url"]})])
        path = parts.path.rstrip("/")
        if path == "/dashboard/login":
            return self._log_in()
        if path == _LIST_PATH:
            return self._product_list()
        if _FORM_PATH.match(path):
            return self._product_form()
        return _abort(f"I did not expect the page {url}; the task is about the dashboard's products")

    # ---- pages -----------------------------------------------------------------------------------

    def _log_in(self) -> Reply:
        return django_log_in(self.tree, self.elements, self.data["username"], self.data["password"], site="dashboard")

    def _product_list(self) -> Reply:
        title = self.data["title"]
        listed = [e for e in self.elements if e.tag == "a" and e.text == title
                  and re.search(r"/dashboard/catalogue/products/\d+/", e.attributes.get("href", ""))]
        if listed:
            created = f"Created product '{title}'." in self.tree
            feedback = (f"Created the product {title} (UPC {self.data['upc']}, SKU {self.data['sku']}); "
                        "the dashboard lists it." if created else
                        f"The product {title} is in the dashboard's list already; nothing new was created.")
            return Reply(text=feedback, tool_uses=[ToolUse("complete", {"feedback": feedback})])
        picker = self._combobox_after('h3 "Create new product"')
        if picker is None:
            return _abort("the product list offers no product type to create a product with")
        return self._choose(picker, self.data["product_type"], then=lambda: self._new_product_button())

    def _new_product_button(self) -> Reply:
        button = next((e for e in self.elements if e.tag == "button" and e.text.casefold() == "new product"), None)
        if button is None:
            return _abort("the product list has no New Product button")
        return _click(button, f"Creating a new {self.data['product_type']} product.")

    def _product_form(self) -> Reply:
        errors = [text for text in _ERROR_TEXTS if text in self.tree]
        if errors:
            return _abort("the dashboard rejected the product: " + "; ".join(errors))
        heading = re.search(r'^- h1 "Create new (.+) product"$', self.tree, re.MULTILINE)
        if heading is not None and heading.group(1) != self.data["product_type"]:
            return _abort(f"this form creates a {heading.group(1)} product; the task's product type is "
                          f"{self.data['product_type']}")
        if self._named("stockrecords-0-partner_sku") is not None:
            return self._stock_tab()
        if any(e.attributes.get("name") == "images-0-original" and not e.has("hidden") for e in self.elements):
            return self._images_tab()
        if self._named("productcategory_set-0-DELETE") is not None:
            return self._categories_tab()
        if self._named("title") is not None:
            return self._details_tab()
        return _abort("I cannot tell which part of the product form this is")

    def _details_tab(self) -> Reply:
        editor = self._editor()
        if editor is None:  # TinyMCE builds its box after the page loaded
            return Reply(text="The description editor is still loading.",
                         tool_uses=[ToolUse("wait_for", {"timeout_s": 5})])
        title, upc = self._named("title"), self._named("upc")
        assert title is not None  # the caller found it
        if upc is None:
            return _abort("the product form has no UPC field")
        filled = (title.attributes.get("value") == self.data["title"] and upc.attributes.get("value") == self.data["upc"]
                  and self._editor_text() == self._description_lines())
        if filled:
            return self._open_section("Categories")
        if self._editor_text():
            return _abort("the description editor holds text I did not expect: " + " / ".join(self._editor_text()))
        return Reply(text="Filling in the title, UPC and description.", tool_uses=[
            ToolUse("fill", {"element_id": title.id, "text": self.data["title"]}),
            ToolUse("fill", {"element_id": upc.id, "text": self.data["upc"]}),
            ToolUse("click", {"element_id": editor.id}),
            ToolUse("type", {"text": self.data["description"]}),
        ])

    def _categories_tab(self) -> Reply:
        picker = self._combobox_after("Category", text=True)
        if picker is None:
            return _abort("the Categories section has no category picker")
        return self._choose(picker, self.data["category"], then=lambda: self._open_section("Images"))

    def _images_tab(self) -> Reply:
        photos = [str(name) for name in self.data["photos"]]
        unknown = [name for name in photos if name not in resource_names(self.request)]
        if unknown:
            return _abort(f"the photos {', '.join(unknown)} are not among the resources I was given")
        inputs = [e for e in self.elements if e.attributes.get("type") == "file"
                  and re.fullmatch(r"images-\d+-original", e.attributes.get("name", ""))]
        uploaded = [e for e in inputs if e.attributes.get("value")]
        if len(uploaded) >= len(photos):
            return self._open_section("Stock and pricing")
        if uploaded:
            return _abort("some images are attached already; I will not guess which photos they are")
        if len(inputs) < len(photos):
            return _abort(f"the Images section has {len(inputs)} upload field(s) for {len(photos)} photos")
        return Reply(text=f"Uploading the {len(photos)} photos, one per image slot.", tool_uses=[
            ToolUse("upload", {"element_id": field.id, "resources": [name]}) for field, name in zip(inputs, photos)
        ])

    def _stock_tab(self) -> Reply:
        partner = self._combobox_after("Partner", text=True)
        if partner is None:
            return _abort("the stock record has no partner picker")
        return self._choose(partner, self.data["partner"], then=self._fill_stock_and_save)

    def _fill_stock_and_save(self) -> Reply:
        fields = {key: self._named(f"stockrecords-0-{key}") for key in ("partner_sku", "num_in_stock", "price")}
        missing = [key for key, element in fields.items() if element is None]
        save = next((e for e in self.elements if e.tag == "button" and e.text == "Save"), None)
        if missing or save is None:
            return _abort(f"the stock record lacks {', '.join(missing or ['a Save button'])}")
        values = {"partner_sku": self.data["sku"], "num_in_stock": self.data["stock"], "price": self.data["price"]}
        fills = [ToolUse("fill", {"element_id": element.id, "text": values[key]})
                 for key, element in fields.items() if element is not None]
        return Reply(text="Filling in the stock record and saving the product.",
                     tool_uses=[*fills, ToolUse("click", {"element_id": save.id})])

    # ---- reading the tree ------------------------------------------------------------------------

    def _named(self, name: str) -> TreeElement | None:
        return next((e for e in self.elements if e.attributes.get("name") == name), None)

    def _choose(self, picker: TreeElement, wanted: str, *, then: Any) -> Reply:
        """Open the select2 `picker`, click the option reading `wanted`, and once the picker shows
        it, go on with `then()`."""
        if picker.text == wanted:
            return then()
        options = [e for e in self.elements if e.attributes.get("role") == "option"]
        if picker.attributes.get("aria-expanded") == "true" and options:
            option = next((e for e in options if e.text == wanted), None)
            if option is None:
                offered = ", ".join(e.text for e in options)
                return _abort(f"the list offers no {wanted!r} (it offers {offered})")
            return _click(option, f"Choosing {wanted}.")
        return _click(picker, f"Opening the list to choose {wanted}.")

    def _combobox_after(self, anchor: str, text: bool = False) -> TreeElement | None:
        """The first combobox after the line holding `anchor` (a heading), or with `text` after the
        text line reading `anchor` (a column header)."""
        lines = self.tree.splitlines()
        start = next((i for i, line in enumerate(lines) if (text_of(line) == anchor if text else anchor in line)), None)
        if start is None:
            return None
        for line in lines[start + 1:]:
            match = re.match(r'^\s*- ([a-z]+-\d+) \(role="combobox"', line)
            if match:
                return next(e for e in self.elements if e.id == match.group(1))
        return None

    def _open_section(self, label: str) -> Reply:
        link = next((e for e in self.elements if e.tag == "a" and e.text == label
                     and e.attributes.get("href", "").startswith("#")), None)
        if link is None:
            return _abort(f"the product form has no {label} section")
        return _click(link, f"Opening the {label} section.")

    def _editor(self) -> TreeElement | None:
        """The description's rich-text editor: the editable region named Description."""
        return next((e for e in self.elements if e.has("contenteditable") and e.text == "Description"), None)

    def _editor_text(self) -> list[str]:
        """The lines of text the editor holds."""
        editor = self._editor()
        value = editor.attributes.get("value", "") if editor is not None else ""
        return [line.strip() for line in value.splitlines() if line.strip()]

    def _description_lines(self) -> list[str]:
        return [line.strip() for line in self.data["description"].splitlines() if line.strip()]
