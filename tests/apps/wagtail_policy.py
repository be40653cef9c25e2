"""`WagtailProductPolicy`: a scripted model that adds one product page in Wagtail's page editor.

Like a careful model it decides from the request alone (the task's ```json block, the element tree,
the last tool results), never from Wagtail's code: log in, open the page explorer and go down to the
Products page, add a child page of type "Product page", fill the page in the editor
(`wagtail_editor.EditorDecision`: the details, the date typed and confirmed in the calendar that
opens on focus, the photo uploaded in the image chooser, the body, the tags one at a time, Publish
in the footer's menu), and complete once the explorer says the page was published, naming the live
URL it links to. One decision per page state; the next state shows whether it took, and a state it
did not expect ends the task with an abort that says what it saw.

How it writes what it composes matters to replay (issue 25 §1, §2): ``rich_text="keys"`` types the
body in pieces (the text, Ctrl+B, the bold words, Ctrl+B, ...) as a model does when ``fill`` does
not format; ``rich_text="fill"`` writes it with one ``fill`` of the markdown-like text (``A **bold**
phrase``), what the tree shows as an editor's value once ``fill`` formats (issue 27). Tags are typed
one at a time, each ended with Enter, all in one reply (issue 25 §7).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin, urlsplit

from policy_kit import PageReader, abort, click
from wagtail_editor import EditorDecision, RichText
from wagtail_site.shop import PAGE_TYPE, SECTION

from webtask_core.testing.replies import Reply, ToolUse
from webtask_core.testing.request_view import error_streak, last_tool_results, latest_page, latest_url, task_json

__all__ = ["WagtailProductPolicy", "REQUIRED_KEYS"]

REQUIRED_KEYS = ("title", "sku", "price", "category", "condition", "release_date", "photo", "body", "tags",
                 "username", "password", "site_url")
_EDITOR_PATH = re.compile(r"^/admin/pages/(add/products/productpage/\d+|\d+/edit)$")
_EXPLORER_PATH = re.compile(r"^/admin/pages/\d+$")
_ADD_SUBPAGE_PATH = re.compile(r"^/admin/pages/\d+/add_subpage$")


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
        self.rich_text: RichText = rich_text
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
            return abort(f"I cannot read the product data: {exc}")
        if not isinstance(data, dict):
            return abort("the task's ```json block is not an object")
        missing = [key for key in REQUIRED_KEYS if key not in data]
        if missing:
            return abort(f"the task's product data lacks {', '.join(missing)}")
        if not isinstance(data["tags"], list):
            return abort("the task's tags are not a list")
        self.data = data
        failures = error_streak(self.request)
        if failures >= self.policy.max_failed_turns:
            errors = [text for _, is_error, text in last_tool_results(self.request) if is_error]
            return abort(f"the last {failures} attempts failed; last error: {errors[-1] if errors else '?'}")

        self.page = PageReader(latest_page(self.request))
        self.url = latest_url(self.request)
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https"):
            return Reply(text="Opening the site's admin.", tool_uses=[ToolUse("navigate", {"url": data["site_url"]})])
        if not self.page.elements:  # a page still loading shows nothing yet
            return Reply(text="The page is still loading.", tool_uses=[ToolUse("wait_for", {"timeout_s": 5})])
        path = parts.path.rstrip("/")
        if path == "/admin/login":
            return self._log_in()
        if path == "/admin":
            return self._dashboard()
        if _EXPLORER_PATH.match(path):
            return self._explorer()
        if _ADD_SUBPAGE_PATH.match(path):
            return self._page_types()
        if _EDITOR_PATH.match(path):
            return EditorDecision(self.request, data, self.page, self.policy.rich_text).decide()
        return abort(f"I did not expect the page {self.url}; the task is about the admin's Products pages")

    def _log_in(self) -> Reply:
        if "didn't match" in self.page.tree or "Please enter a correct" in self.page.tree:
            return abort("the admin rejected the username or password")
        username, password = self.page.named("username"), self.page.named("password")
        button = self.page.button("Sign in")
        if not (username and password and button):
            return abort("the sign-in page has no username/password form that I can see")
        return Reply(text=f"Signing in as {self.data['username']}.", tool_uses=[
            ToolUse("fill", {"element_id": username.id, "text": self.data["username"]}),
            ToolUse("fill", {"element_id": password.id, "text": self.data["password"]}),
            ToolUse("click", {"element_id": button.id}),
        ])

    def _dashboard(self) -> Reply:
        """The page explorer of the sidebar: open it, go down to the Products page."""
        explorer = self.page.block('dialog "Page explorer"')
        if explorer is None:
            pages = self.page.button("Pages")
            if pages is None:
                return abort("the dashboard has no Pages menu")
            return click(pages, "Opening the page explorer.")
        section = next((e for e in explorer if e.tag == "a" and e.text == SECTION
                        and _EXPLORER_PATH.match(urlsplit(e.attributes.get("href", "")).path.rstrip("/"))), None)
        if section is not None:
            return click(section, f"Going to the {SECTION} page.")
        deeper = [e for e in explorer if e.tag == "a" and e.text.startswith("View child pages of")]
        if len(deeper) != 1:
            return abort(f"the page explorer shows no {SECTION} page and no single page to look under")
        return click(deeper[0], f"Looking for the {SECTION} page under the home page.")

    def _explorer(self) -> Reply:
        title = self.data["title"]
        published = f"Page '{title}' has been published."
        if published in self.page.tree:
            live = self.page.link_after(published, "View live")
            if live is None:
                return abort(f"the admin says the page was published but links to no live page: {published}")
            address = urljoin(self.url, live.attributes.get("href", ""))
            feedback = f"Published the product page {title} (SKU {self.data['sku']}); it is live at {address}"
            return Reply(text=feedback, tool_uses=[ToolUse("complete", {"feedback": feedback})])
        if f'h1 "Exploring: {SECTION}"' not in self.page.tree:
            section = self.page.link(SECTION)
            if section is None:
                return abort(f"this is not the {SECTION} page and it links to none")
            return click(section, f"Going to the {SECTION} page.")
        row = self.page.row_of(title)
        if row:
            if any("Current page status: live" in e.text for e in row):
                feedback = f"The product page {title} is published already; nothing new was created."
                return Reply(text=feedback, tool_uses=[ToolUse("complete", {"feedback": feedback})])
            return click(row[0], f"{title} is there as a draft: opening it to finish it.")
        add = self.page.link("Add child page")
        if add is None:
            return abort(f"the {SECTION} page offers no way to add a child page")
        return click(add, f"Adding a child page under {SECTION}.")

    def _page_types(self) -> Reply:
        choice = self.page.link(PAGE_TYPE)
        if choice is None:
            offered = ", ".join(e.text for e in self.page.elements if e.tag == "a" and not e.text.startswith("Pages using"))
            return abort(f"no page type {PAGE_TYPE!r} to choose (the page offers {offered})")
        return click(choice, f"Creating a {PAGE_TYPE}.")
