"""Scripted model policies for the offline kit: `request -> Reply`, deciding only from the request body.

`ReplayPolicy` answers a fixed script. `MarketplaceListingPolicy` lists one item on the demo
marketplace the way a careful model would: log in, check the SKU is not listed yet, fill the form,
upload the photos by resource name, wait for the previews, confirm, publish, report the URL; and
handles a log-in task (task data without a SKU): log in if needed, then complete.

Where only a person can help — a second factor at log-in, a security check, an approval the task
asks for before Publish — it calls ``ask_human`` (or types ``{{totp:NAME}}``), see human_steps.py.
A task whose data has ``repair`` (a listing's URL) corrects that listing on its edit page instead
(repair_steps.py).

It reads pages rather than remembering them, so it copes with the marketplace's changed layouts
(`marketplace.Layout`): a form field is found by its name or by the words of its label (a renamed
"Listing headline" is still the title), a page between the form and the review that asks for a
choice gets one and is continued, and buttons are found by their text wherever they sit.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

from .human_steps import approval_step, human_step
from .repair_steps import repair_step
from .replies import Reply, ToolUse
from .request_view import (
    TreeElement,
    error_streak,
    find_element,
    last_tool_results,
    latest_page,
    latest_url,
    page_urls,
    resource_names,
    task_json,
    task_text,
    tree_elements,
)

__all__ = ["ReplayPolicy", "MarketplaceListingPolicy"]

_LISTING_PATH = re.compile(r"^/listings/(\d+)/?$")
_LISTING_HREF = re.compile(r'href="([^"]*/listings/\d+)/?"')
_FIELD_ERROR = re.compile(r"Error: ([^\"\n]+)")
_REQUIRED_KEYS = ("sku", "title", "description", "price", "category", "condition", "photos")
# Names and label words a form field may go by: a redesign renames "Title" to "Listing headline".
_FIELD_WORDS = {"title": ("title", "headline"), "description": ("description",), "price": ("price",),
                "category": ("category",), "sku": ("sku",), "quantity": ("quantity",)}
_NOT_TEXT_FIELDS = ("file", "radio", "checkbox", "hidden", "submit", "button", "search")


def _abort(reason: str) -> Reply:
    return Reply(text=reason, tool_uses=[ToolUse("abort", {"reason": reason})])


class ReplayPolicy:
    """Answers request N with reply N; once the script runs out, aborts with "replay exhausted".

    Items are `Reply`s, or `ToolUse`s (each one a reply with that single call).
    """

    def __init__(self, replies: Sequence[Reply | ToolUse]) -> None:
        self._replies: list[Reply] = []
        for position, item in enumerate(replies):
            if isinstance(item, Reply):
                self._replies.append(item)
            elif isinstance(item, ToolUse):
                self._replies.append(Reply(tool_uses=[item]))
            else:
                raise TypeError(f"ReplayPolicy item {position} is {type(item).__name__}; expected Reply or ToolUse")
        self._lock = threading.Lock()
        self.calls = 0

    @property
    def remaining(self) -> int:
        return max(0, len(self._replies) - self.calls)

    def __call__(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            position = self.calls
            self.calls += 1
        if position < len(self._replies):
            return self._replies[position]
        return _abort("replay exhausted")


def _price_text(price: Any) -> str:
    if isinstance(price, float) and price.is_integer():
        return str(int(price))
    return str(price)


def _photo_count_text(count: int) -> str:
    return f"{count} photo{'' if count == 1 else 's'}"


class MarketplaceListingPolicy:
    """Lists the item described by the task's ```json block on the demo marketplace.

    Task keys: sku, title, description, price, category, condition, photos (resource names),
    username, password (placeholders such as ``{{secret:shop_password}}`` are typed unchanged), and
    optionally site_url (where to go when the browser starts on a blank page; else the first URL the
    task names). A task whose data has
    no ``sku`` (username, password, site_url only) is a log-in task: log in if needed, then complete.

    - `abort_on_sku`: SKUs for which the policy aborts at once (to test failure handling).
    - `login_only`: treat every task as a log-in task — for session-persistence tests.
    - `max_failed_turns`: abort after this many replies in a row had a failing tool call.
    - `max_form_attempts`: abort when the site rejects the form (or a page's required choice)
      this many times.

    A page that asks for a required choice before the review (radio buttons and Continue) is
    answered from the task's key of the same name as the radio group (``"shipping": "Local
    pickup"``), else with its first option.
    """

    def __init__(self, *, abort_on_sku: Iterable[str] = (), login_only: bool = False,
                 max_failed_turns: int = 3, max_form_attempts: int = 2) -> None:
        self.abort_on_sku = {sku.strip().casefold() for sku in abort_on_sku}
        self.login_only = login_only
        self.max_failed_turns = max_failed_turns
        self.max_form_attempts = max_form_attempts

    def __call__(self, request: dict[str, Any]) -> Reply:
        return _Step(self, request).decide()


class _Step:
    """One decision: what a model would do next, seeing this request."""

    def __init__(self, policy: MarketplaceListingPolicy, request: dict[str, Any]) -> None:
        self.policy = policy
        self.request = request

    def decide(self) -> Reply:
        try:
            self.data = task_json(self.request)
        except ValueError as exc:
            return _abort(f"I cannot read the listing data: {exc}")
        if not isinstance(self.data, dict):
            return _abort("the task's ```json block is not an object")
        # A task whose data names no SKU is a log-in task (a batch's shared login).
        self.login_only = self.policy.login_only or "sku" not in self.data
        needed = ("username", "password") if self.login_only else (*_REQUIRED_KEYS, "username", "password")
        missing = [key for key in needed if key not in self.data]
        if missing:
            return _abort(f"the task's {'login' if self.login_only else 'listing'} data lacks {', '.join(missing)}")
        self.sku = str(self.data.get("sku", "")).strip()
        if not self.login_only and self.sku.casefold() in self.policy.abort_on_sku:
            return _abort(f"told to abort the listing of SKU {self.sku}")

        failures = error_streak(self.request)  # only the trailing run: earlier tasks do not count
        if failures >= self.policy.max_failed_turns:
            errors = [text for _, is_error, text in last_tool_results(self.request) if is_error]
            return _abort(f"the last {failures} attempts failed; last error: {errors[-1] if errors else '?'}")

        self.url = latest_url(self.request)
        self.tree = latest_page(self.request)
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https"):
            # The data's site_url, else the site the task's words name ("the marketplace at http://...").
            named = re.search(r"https?://[^\s\"'<>)]+", task_text(self.request))
            site = self.data.get("site_url") or (named.group(0).rstrip(".,;:") if named else None)
            if not site:
                return _abort(f"the browser is on {self.url or 'no page'} and the task names no site")
            return Reply(text="Opening the marketplace.", tool_uses=[ToolUse("navigate", {"url": site})])
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path.rstrip("/") or "/"
        self.query = parse_qs(parts.query)

        human = human_step(self.request, self.tree, self.path, self.data)  # a second factor, a challenge
        if human is not None:
            return human
        if self.path == "/login":
            return self._log_in()
        if self.login_only:
            return Reply(tool_uses=[ToolUse("complete", {"feedback": f"Logged in as {self.data['username']}."})])
        reply = repair_step(self) or self._route()  # a repair task corrects a published listing instead
        banner = self._accept_cookies()
        if banner is not None and reply.tool_uses and reply.tool_uses[0].name not in ("abort", "set_output"):
            reply.tool_uses.insert(0, banner)
        return reply

    # ---- pages ---------------------------------------------------------------------------------

    def _route(self) -> Reply:
        if self.path == "/listings":
            searched = self.query.get("sku", [""])[0].strip().casefold()
            if searched == self.sku.casefold():
                return self._read_search_results()
            return self._search_sku()
        if self.path == "/listings/new":
            return self._fill_form()
        if self.path.startswith("/listings/drafts/"):
            # Publish if the page offers it; a step the site put before the review asks for a choice.
            if find_element(self.tree, tag="button", text="Publish") is None:
                step = self._answer_step()
                if step is not None:
                    return step
            return approval_step(self.request, self.data) or self._publish()
        if _LISTING_PATH.match(self.path):
            return self._report_listing()
        return Reply(text="Going to my listings.", tool_uses=[self._go("/listings", link_text="My listings")])

    def _log_in(self) -> Reply:
        if "Incorrect username or password" in self.tree:
            return _abort("the marketplace rejected the username or password")
        username = find_element(self.tree, name="username")
        password = find_element(self.tree, name="password")
        button = find_element(self.tree, tag="button", text="Log in")
        if not (username and password and button):
            return _abort("the log-in page has no username/password form that I can see")
        return Reply(text=f"Logging in as {self.data['username']}.", tool_uses=[
            ToolUse("fill", {"element_id": username, "text": str(self.data["username"])}),
            ToolUse("fill", {"element_id": password, "text": str(self.data["password"])}),
            ToolUse("click", {"element_id": button}),
        ])

    def _accept_cookies(self) -> ToolUse | None:
        if "cookie" not in self.tree.casefold():
            return None
        accept = find_element(self.tree, tag="button", text="Accept")
        return ToolUse("click", {"element_id": accept}) if accept else None

    def _search_sku(self) -> Reply:
        box = find_element(self.tree, name="sku")
        button = find_element(self.tree, tag="button", text="Search")
        if box is None or button is None:
            return Reply(text="Opening my listings to search by SKU.",
                         tool_uses=[self._go("/listings", link_text="My listings")])
        return Reply(text=f"Checking whether SKU {self.sku} is already listed.", tool_uses=[
            ToolUse("fill", {"element_id": box, "text": self.sku}),
            ToolUse("click", {"element_id": button}),
        ])

    def _read_search_results(self) -> Reply:
        links = [urljoin(self.url, href) for href in _LISTING_HREF.findall(self.tree)]
        if links:
            return self._finish(links[0], f"SKU {self.sku} is already listed at {links[0]}; nothing new was created.")
        if "No listings with SKU" in self.tree:
            return Reply(text=f"SKU {self.sku} is not listed yet; creating it.",
                         tool_uses=[self._go("/listings/new", link_text="New listing")])
        return _abort(f"I cannot tell from the search page whether SKU {self.sku} is already listed")

    def _fill_form(self) -> Reply:
        errors = _FIELD_ERROR.findall(self.tree)
        if errors and self._trailing_visits("/listings/new") >= 2 * self.policy.max_form_attempts:
            return _abort("the marketplace rejected the listing: " + " ".join(e.strip() for e in errors))
        photos = [str(name) for name in self.data["photos"]]
        ready = f"{_photo_count_text(len(photos))} ready"
        next_button = find_element(self.tree, tag="button", text="Next")
        if not errors and ready in self.tree and next_button:
            return Reply(text="Everything is filled in and the photos are ready; going on.",
                         tool_uses=[ToolUse("click", {"element_id": next_button})])
        if not errors and "Preparing" in self.tree:
            return Reply(text="The photos are still being prepared.",
                         tool_uses=[ToolUse("wait_for", {"text": ready, "timeout_s": 10})])

        unknown = [name for name in photos if name not in resource_names(self.request)]
        if unknown:
            return _abort(f"the photos {', '.join(unknown)} are not among the resources I was given")
        fields = {name: self._form_field(name) for name in ("title", "description", "price", "category", "sku")}
        file_input = find_element(self.tree, type="file")
        missing = [name for name, element_id in fields.items() if element_id is None]
        if missing or file_input is None:
            return _abort(f"the new listing form lacks fields I need: {', '.join(missing or ['photos'])}")
        condition = self._condition_radio()
        if condition is None:
            return _abort(f"the form offers no condition called {self.data['condition']!r}")
        quantity = []
        if "quantity" in self.data:  # an optional field of the form: filled when the data has it
            quantity_field = self._form_field("quantity")
            if quantity_field is None:
                return _abort("the new listing form has no quantity field, and the data gives a quantity")
            quantity = [ToolUse("fill", {"element_id": quantity_field, "text": str(self.data["quantity"])})]
        note = "Filling in the listing form" + (" again after the site's errors" if errors else "") + "."
        return Reply(text=note, tool_uses=[
            ToolUse("fill", {"element_id": fields["title"], "text": str(self.data["title"])}),
            ToolUse("fill", {"element_id": fields["description"], "text": str(self.data["description"])}),
            ToolUse("fill", {"element_id": fields["price"], "text": _price_text(self.data["price"])}),
            *quantity,
            ToolUse("select_option", {"element_id": fields["category"], "option": str(self.data["category"])}),
            ToolUse("check", {"element_id": condition, "checked": True}),
            ToolUse("fill", {"element_id": fields["sku"], "text": self.sku}),
            # Last, so a failure above leaves no previews and the next turn starts over.
            ToolUse("upload", {"element_id": file_input, "resources": photos}),
            ToolUse("wait_for", {"text": ready, "timeout_s": 10}),
        ])

    def _form_field(self, key: str) -> str | None:
        """The field for the task's `key`: by its name, else by a name or label word it may go by."""
        by_name = find_element(self.tree, name=key)
        if by_name is not None:
            return by_name
        words = _FIELD_WORDS[key]
        for element in tree_elements(self.tree):
            if element.tag not in ("input", "textarea", "select") \
                    or element.attributes.get("type", "").casefold() in _NOT_TEXT_FIELDS:
                continue
            label = f"{element.text} {element.label}".casefold()
            if element.attributes.get("name", "").casefold() in words or any(word in label for word in words):
                return element.id
        return None

    def _answer_step(self) -> Reply | None:
        """Choose an option in every unanswered radio group and Continue; None if this page is not
        such a step."""
        continue_button = find_element(self.tree, tag="button", text="Continue")
        if continue_button is None:
            return None
        if self._trailing_visits(self.path) > self.policy.max_form_attempts:
            return _abort(f"the page at {self.path} keeps asking for a choice; I cannot get past it")
        groups: dict[str, list[TreeElement]] = {}
        for element in tree_elements(self.tree):
            if element.attributes.get("type") == "radio" and element.attributes.get("name"):
                groups.setdefault(element.attributes["name"], []).append(element)
        uses, chosen = [], []
        for name, options in groups.items():
            if any(option.has("checked") for option in options):
                continue
            option = self._choose(name, options)
            if option is None:
                return _abort(f"the page offers no {name} option called {self.data[name]!r}")
            uses.append(ToolUse("check", {"element_id": option.id, "checked": True}))
            chosen.append(f"{name}: {option.text or option.label or option.attributes.get('value', '')}")
        note = f"The site asks for more before the review; choosing {', '.join(chosen)}." if chosen \
            else "The site asks for more before the review; continuing."
        return Reply(text=note, tool_uses=[*uses, ToolUse("click", {"element_id": continue_button})])

    def _choose(self, name: str, options: list[TreeElement]) -> TreeElement | None:
        if name not in self.data:
            return options[0]  # the task says nothing about it: the site's first choice
        wanted = str(self.data[name]).strip().casefold()
        for option in options:
            if wanted in (option.text.strip().casefold(), option.label.strip().casefold(),
                          option.attributes.get("value", "").casefold()):
                return option
        return None

    def _condition_radio(self) -> str | None:
        wanted = str(self.data["condition"]).strip().casefold()
        for element in tree_elements(self.tree):
            if element.attributes.get("name") != "condition":
                continue
            names = {element.text.strip().casefold(), element.label.strip().casefold(),
                     element.attributes.get("value", "").casefold()}
            if wanted in names:
                return element.id
        return None

    def _publish(self) -> Reply:
        if self.sku not in self.tree:
            return _abort(f"the confirmation page does not show SKU {self.sku}")
        publish = find_element(self.tree, tag="button", text="Publish")
        if publish is None:
            return _abort("the confirmation page has no Publish button")
        return Reply(text="The summary is right; publishing.", tool_uses=[ToolUse("click", {"element_id": publish})])

    def _report_listing(self) -> Reply:
        if self.sku not in self.tree:
            return Reply(text="This is another listing; back to my listings.",
                         tool_uses=[self._go("/listings", link_text="My listings")])
        listing_url = self.origin + self.path
        if "published" in self.query:  # the site's redirect right after Publish
            return self._finish(listing_url, f"Listed SKU {self.sku} at {listing_url}.")
        return self._finish(listing_url, f"SKU {self.sku} is already listed at {listing_url}; nothing new was created.")

    # ---- helpers -------------------------------------------------------------------------------

    def _finish(self, listing_url: str, feedback: str) -> Reply:
        output = {"listing_url": listing_url, "sku": self.sku}
        return Reply(text=feedback, tool_uses=[
            ToolUse("set_output", self._output_input(output)),
            ToolUse("complete", {"feedback": feedback}),
        ])

    def _output_input(self, output: dict[str, Any]) -> dict[str, Any]:
        # Without a caller schema the tool takes {"output": ...}; with one, the fields themselves.
        for tool in self.request.get("tools", []):
            if isinstance(tool, dict) and tool.get("name") == "set_output":
                properties = (tool.get("input_schema") or {}).get("properties") or {}
                if set(properties) == {"output"}:
                    return {"output": output}
                return output
        return {"output": output}

    def _go(self, path: str, *, link_text: str) -> ToolUse:
        link = find_element(self.tree, tag="a", text=link_text)
        if link is not None:
            return ToolUse("click", {"element_id": link})
        return ToolUse("navigate", {"url": self.origin + path})

    def _trailing_visits(self, path: str) -> int:
        count = 0
        for url in reversed(page_urls(self.request)):
            if (urlsplit(url).path.rstrip("/") or "/") != path:
                break
            count += 1
        return count
