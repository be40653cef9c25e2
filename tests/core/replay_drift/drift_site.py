"""A small listing site for the replay drift suite, built the way a reviewer would, not for our code.

Log in → "My listings" → "New listing" (title, price, quantity, category, ships from / ships to,
description, "Show in search") → a page that shows what was entered → Submit → published. Every
state-changing request is kept in ``site.events`` as ``(kind, values)``: ``publish`` for a listing,
``draft`` for a draft saved, ``delete`` for a deletion; the judge reads nothing else.

Two markup styles: ``label`` (real ``<label for>`` and names that say what they are) and ``span``
(a text ``<span>`` beside each control, generated names ``field1``…``field8``). A :class:`Variant`
describes one version of the site: which label goes with which control, the options, extra fields,
notes, a second Submit, a frame, what happens after Submit. The server reads each control by what
its label says *on this variant* — the label is what the site means.
"""

from __future__ import annotations

import html
import itertools
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from drift_widgets import (
    WIDGETS,
    description_lines,
    late_sidebar,
    own_rows,
    read_widgets,
    recent_edits,
    slug,
    teaser_row,
    widget_head,
    widget_rows,
    widget_shown,
)

__all__ = ["Style", "MEANINGS", "ENGLISH", "GERMAN", "CATEGORIES", "COUNTRIES", "Extra", "Variant", "DriftSite",
           "USERNAME", "PASSWORD"]

Style = Literal["label", "span"]
USERNAME, PASSWORD = "seller", "drift-pass"
MEANINGS = ("title", "price", "quantity", "category", "ships_from", "ships_to", "description", "show_in_search")
ENGLISH = {"title": "Title", "price": "Price", "quantity": "Quantity", "category": "Category",
           "ships_from": "Ships from", "ships_to": "Ships to", "description": "Description",
           "show_in_search": "Show in search"}
GERMAN = {"title": "Titel", "price": "Preis", "quantity": "Menge", "category": "Kategorie",
          "ships_from": "Versand von", "ships_to": "Versand nach", "description": "Beschreibung",
          "show_in_search": "In der Suche anzeigen"}
CATEGORIES = (("books", "Books"), ("audiobooks", "Audiobooks"), ("electronics", "Electronics"),
              ("home", "Home & Garden"), ("toys", "Toys"))
COUNTRIES = (("de", "Germany"), ("fr", "France"), ("es", "Spain"), ("it", "Italy"), ("pl", "Poland"))
_SELECTS = {"category": "CATEGORIES", "ships_from": "COUNTRIES", "ships_to": "COUNTRIES"}
_SEEDED = (("Old oak chair", "12.00"), ("Green glass vase", "8.50"))
_EXTRA_ROWS = (("Copper kettle", "19.00"), ("Linen tablecloth", "14.00"), ("Wool blanket", "30.00"))


@dataclass(frozen=True)
class Extra:
    """A field the recording never saw: ``required`` ones make the server refuse a form without them."""

    label: str
    name: str
    required: bool = False
    kind: Literal["text", "checkbox"] = "text"
    html_required: bool = True  # the `required` attribute (the browser refuses to send the form)


@dataclass(frozen=True)
class Variant:
    style: Style = "label"
    labels: dict[str, str] = field(default_factory=lambda: dict(ENGLISH))
    names: dict[str, str] = field(default_factory=dict)  # meaning -> name attribute, over the style's default
    order: tuple[str, ...] = MEANINGS
    categories: tuple[tuple[str, str], ...] = CATEGORIES
    countries: tuple[tuple[str, str], ...] = COUNTRIES
    hide_from_search: bool = False  # the checkbox means the opposite ("Hide from search")
    checked_by_default: bool = False
    extras: tuple[Extra, ...] = ()
    form_note: str = ""  # text shown above the form
    price_in_cents: bool = False  # the server reads the price as cents
    number_inputs: bool = False  # price and quantity as <input type="number">
    confirm_note: str = ""  # text shown on the confirm page
    confirm_quantity_cap: int | None = None  # the confirm page (and what is published) caps the quantity
    # A "save as draft" form before the real one on the confirm page, its button also "Submit" (same
    # name): "identical" says nothing else, "explained" has a line saying it saves a draft.
    draft_button: Literal["", "identical", "explained"] = ""
    delete_button: bool = False  # the confirm page's button deletes instead ("Delete")
    submit_text: str = "Submit"
    in_iframe: bool = False  # the form lives in an <iframe> of the new-listing page
    extra_rows: int = 0  # more listings on "My listings" than when recorded
    search_box: bool = False  # a search form above the listing form with its own "Title" field
    # Issue 25 (drift_widgets.py): the widget form, and what grows with the seller's work around it.
    widgets: bool = False  # condition radios, Tagify tags, a Pikaday date, the description in TinyMCE
    picker: bool = True  # the date field opens a Pikaday calendar on focus (else a plain text field)
    preset_tags: tuple[str, ...] = ()  # the tag field starts with these (it remembers the last listing's)
    recent_edits: bool = False  # a "Your most recent edits" panel above the form
    autosave: bool = False  # an autosave status in the form ("Saving…", "Saved 10:42:07")
    # What the autosave makes of the page's heading once saved: "" nothing, "title" the listing's
    # title (the draft it saved is the item's now), any other text that text ("New auction")
    autosave_heading: str = ""
    # Links under the tag field, one per tag earlier listings saved ("+lamp"): a click adds it
    tag_suggestions: tuple[str, ...] = ()
    # The condition radio checked when the form opens (its key, "new"): a seller whose condition is
    # the default never clicks it
    condition_default: str = ""
    condition_labels: dict[str, str] = field(default_factory=dict)  # a condition's key -> what its radio says now
    # A "Teaser" select on the confirm page offering the description's first line (this item's own
    # words, typed on the form), "No teaser" chosen; teaser_extra: one more fixed option it offers
    teaser: bool = False
    late_sidebar: bool = False  # "My listings" draws an account sidebar 0.7 s after it loaded (its script)
    editor_delay_ms: int = 0  # the widget form's TinyMCE editor is built this long after the page loaded
    teaser_extra: str = ""
    sections: bool = False  # "Ships from"/"Ships to" as fieldsets (headings) each with a "Country" select
    vat_note: str = ""  # a line inside the form under the price ("Prices incl. VAT")
    slow_submit_s: float = 0.0  # the Submit's answer comes this late (the listing is stored first)
    # The form saves itself 500 ms after the last change: a POST that saves a draft the first time and
    # hands its id back for the form's next save (Wagtail's page editor does), and Continue answers in 1 s.
    # A Continue sent before the first autosave was answered saves the listing a second time as a draft.
    autosave_posts: bool = False
    # What the site changes in what was typed when it publishes (the confirm page still shows what was
    # typed; only the listing's own page shows what was stored): "vat" adds 19 % to the price (the
    # form says prices now exclude VAT), "quantity_cap" stores at most 5, "title_cut" keeps the title's
    # first 16 characters, "shipping_swap" puts the Price field in a Shipping section and stores it as
    # the shipping cost (the item's price: 0.00).
    stored_changes: tuple[str, ...] = ()

    def name_of(self, meaning: str) -> str:
        if meaning in self.names:
            return self.names[meaning]
        return meaning if self.style == "label" else f"field{MEANINGS.index(meaning) + 1}"

    def options_of(self, meaning: str) -> tuple[tuple[str, str], ...]:
        return self.categories if meaning == "category" else self.countries


_STYLE = """<style>body{font-family:sans-serif;margin:24px;max-width:760px}.row{margin:10px 0}
.caption{display:inline-block;width:140px}label{display:inline-block;width:140px}
.check label,.check .caption{width:auto}input[type=text],input[type=number],textarea,select{width:320px}
.note{background:#fff3cd;padding:8px;border:1px solid #e0c36c}.error{color:#b00020}
table{border-collapse:collapse}td{padding:4px 10px}</style>"""


# The form's autosave (Variant.autosave_posts): 500 ms after the last change, the whole form, as
# Wagtail's page editor saves itself; the answer is the draft's id, sent with every later save.
_AUTOSAVE_POSTS = """<input type='hidden' name='draft_id' value=''><script>(() => {
  const form = document.currentScript.closest('form');
  let timer = null;
  const save = () => { clearTimeout(timer); timer = setTimeout(() => {
    fetch('/listings/autosave', {method: 'POST', body: new URLSearchParams(new FormData(form))})
      .then((answer) => answer.text()).then((id) => { form.elements.draft_id.value = id; });
  }, 500); };
  form.addEventListener('input', save, true); form.addEventListener('change', save, true);
})();</script>"""


def _page(title: str, body: str, head: str = "") -> str:
    head = f"<meta charset='utf-8'><title>{html.escape(title)}</title>{_STYLE}{head}"
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"


def _parse_number(text: str) -> Decimal | None:
    cleaned = text.strip().replace("$", "").replace("€", "").replace(" ", "")
    try:
        return Decimal(cleaned) if cleaned else None
    except InvalidOperation:
        return None


class DriftSite:
    """The site on 127.0.0.1:random; ``events`` holds what was published, drafted or deleted."""

    def __init__(self, variant: Variant | None = None):
        self.variant = variant or Variant()
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.requests: list[tuple[str, str]] = []
        self._drafts: dict[int, dict[str, Any]] = {}
        # Drafts the form's autosave saved and no Continue named yet, with their event ("autosave"): one
        # left at the end is a second copy of a listing.
        self._autosaved: dict[int, tuple[str, dict[str, Any]]] = {}
        self._listings: dict[int, dict[str, Any]] = {}
        self._sessions: set[str] = set()
        self._ids = itertools.count(101)
        self._lock = threading.Lock()
        self.on_publish: list[Any] = []  # callables run after a listing is stored (fault injection)
        # An Event to hold the answers to Submits until it is set (at most 10 s): the listing is
        # stored, the browser still waits for the page.
        self.hold_answer: threading.Event | None = None
        rows = _SEEDED + _EXTRA_ROWS[: self.variant.extra_rows]
        for title, price in rows:
            self._listings[next(self._ids)] = {"title": title, "price": price}
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                site._handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                site._handle(self, "POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # ---- lifecycle ----

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.origin + path

    def __enter__(self) -> DriftSite:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.hold_answer is not None:
            self.hold_answer.set()
        self._server.shutdown()
        self._server.server_close()

    # ---- requests ----

    def _handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length).decode() if length else ""
        form = {key: values[-1] for key, values in parse_qs(body, keep_blank_values=True).items()}
        path = urlsplit(request.path).path
        if path.startswith("/node_modules/"):  # the widget libraries, as installed from npm
            self._static(request, path)
            return
        self.requests.append((method, request.path))
        cookie = request.headers.get("Cookie") or ""
        logged_in = any(part.strip() == f"sid={sid}" for part in cookie.split(";") for sid in self._sessions)
        with self._lock:
            if path in ("/", "/login"):
                answer = self._login(method, form)
            elif not logged_in:
                answer = (303, "", {"Location": "/login"})
            else:
                answer = self._route(method, path, form)
        status, page, headers = answer
        if path == "/listings/submit" and self.hold_answer is not None and not self.hold_answer.is_set():
            self.hold_answer.wait(10)
        if path == "/listings/new" and method == "POST" and self.variant.autosave_posts:
            time.sleep(1.0)  # a slow save: the form page stays while its answer comes
        if path == "/listings/submit" and method == "POST" and self.variant.slow_submit_s:
            time.sleep(self.variant.slow_submit_s)  # stored already; the answer comes late
        data = page.encode()
        request.send_response(status)
        request.send_header("Content-Type", "text/html; charset=utf-8")
        request.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            request.send_header(key, value)
        request.end_headers()
        request.wfile.write(data)

    def _static(self, request: BaseHTTPRequestHandler, path: str) -> None:
        file = (WIDGETS / path.lstrip("/")).resolve()
        if not file.is_relative_to(WIDGETS) or not file.is_file():
            request.send_response(404)
            request.end_headers()
            return
        data = file.read_bytes()
        kind = {".js": "text/javascript", ".css": "text/css"}.get(file.suffix, "application/octet-stream")
        request.send_response(200)
        request.send_header("Content-Type", kind)
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)

    def _route(self, method: str, path: str, form: dict[str, str]) -> tuple[int, str, dict[str, str]]:
        parts = [part for part in path.split("/") if part]
        if path == "/listings":
            return 200, self._list_page(), {}
        if path == "/listings/new":
            if method == "POST":
                return self._save_form(form)
            return 200, self._new_page(), {}
        if path == "/listings/autosave" and method == "POST" and self.variant.autosave_posts:
            return 200, str(self._autosave(form)), {}
        if path == "/listings/new/form":
            return 200, self._form_page({}, ""), {}
        if path == "/listings/submit" and method == "POST":
            return self._submit(form)
        if len(parts) == 3 and parts[1] == "confirm" and parts[2].isdigit() and int(parts[2]) in self._drafts:
            return 200, self._confirm_page(int(parts[2])), {}
        if len(parts) == 2 and parts[1].isdigit() and int(parts[1]) in self._listings:
            return 200, self._listing_page(int(parts[1])), {}
        by_title = [key for key, item in self._listings.items() if len(parts) == 3 and parts[1] == "by-title"
                    and slug(item["title"]) == parts[2]]
        if by_title:
            return 200, self._listing_page(by_title[-1]), {}
        return 404, _page("Not found", "<h1>Not found</h1><p><a href='/listings'>My listings</a></p>"), {}

    def _login(self, method: str, form: dict[str, str]) -> tuple[int, str, dict[str, str]]:
        error = ""
        if method == "POST":
            if form.get("username") == USERNAME and form.get("password") == PASSWORD:
                sid = f"s{len(self._sessions) + 1}x{id(self) % 9973}"
                self._sessions.add(sid)
                return 303, "", {"Location": "/listings", "Set-Cookie": f"sid={sid}; Path=/; HttpOnly"}
            error = "<p class='error'>Wrong username or password.</p>"
        body = f"""<h1>Seller log in</h1>{error}<form method="post" action="/login">
<div class="row"><label for="u">Username</label><input id="u" name="username" type="text"></div>
<div class="row"><label for="p">Password</label><input id="p" name="password" type="password"></div>
<button type="submit">Log in</button></form>"""
        return 200, _page("Log in", body), {}

    # ---- pages ----

    def _list_page(self) -> str:
        rows = "".join(f"<tr><td><a href='/listings/{key}'>{html.escape(item['title'])}</a></td>"
                       f"<td>{Decimal(str(item['price'])):.2f}</td></tr>" for key, item in self._listings.items())
        body = f"""<h1>My listings</h1><p><a href="/listings/new">New listing</a></p>
<table><thead><tr><th>Title</th><th>Price</th></tr></thead><tbody>{rows}</tbody></table>"""
        return _page("My listings", body + late_sidebar(self.variant))

    def _new_page(self) -> str:
        if not self.variant.in_iframe:
            return self._form_page({}, "")
        body = ("<h1>New listing</h1><iframe src='/listings/new/form' title='Listing form' "
                "style='width:100%;height:820px;border:1px solid #ccc'></iframe>")
        return _page("New listing", body)

    def _control(self, meaning: str, values: dict[str, str]) -> tuple[str, str]:
        """(caption html, control html) of one of the eight fields."""
        variant = self.variant
        name, label = variant.name_of(meaning), variant.labels[meaning]
        if variant.sections and meaning in ("ships_from", "ships_to"):
            label = "Country"  # its section says which
        if variant.hide_from_search and meaning == "show_in_search":
            label = "Hide from search"
        ident = f"f-{name}"
        caption = (f"<label for='{ident}'>{html.escape(label)}</label>" if variant.style == "label"
                   else f"<span class='caption'>{html.escape(label)}</span>")
        attribute = f"id='{ident}' name='{name}'" if variant.style == "label" else f"name='{name}'"
        value = values.get(name, "")
        if meaning in _SELECTS:
            options = "".join(f"<option value='{html.escape(key)}'{' selected' if key == value else ''}>"
                              f"{html.escape(text)}</option>" for key, text in variant.options_of(meaning))
            return caption, f"<select {attribute}><option value=''>Choose…</option>{options}</select>"
        if meaning == "description":
            return caption, f"<textarea {attribute} rows='4'>{html.escape(value)}</textarea>"
        if meaning == "show_in_search":
            checked = (name in values) if values else variant.checked_by_default
            return caption, f"<input type='checkbox' {attribute} value='yes'{' checked' if checked else ''}>"
        kind = "number' step='any" if variant.number_inputs and meaning in ("price", "quantity") else "text"
        return caption, f"<input type='{kind}' {attribute} value='{html.escape(value)}'>"

    def _form_page(self, values: dict[str, str], error: str) -> str:
        variant = self.variant
        rows = []
        for meaning in variant.order:
            caption, control = self._control(meaning, values)
            if meaning == "show_in_search":
                rows.append(f"<div class='row check'>{control} {caption}</div>")
            elif variant.sections and meaning in ("ships_from", "ships_to"):
                heading = html.escape(variant.labels[meaning])
                rows.append(f"<fieldset><legend>{heading}</legend><div class='row'>{caption}{control}</div></fieldset>"
                            if variant.style == "label" else
                            f"<div><h3>{heading}</h3><div class='row'>{caption}{control}</div></div>")
            else:
                rows.append(f"<div class='row'>{caption}{control}</div>")
            if meaning == "price" and variant.vat_note:
                rows.append(f"<p class='hint'>{html.escape(variant.vat_note)}</p>")
        for extra in variant.extras:
            ident = f"x-{extra.name}"
            caption = (f"<label for='{ident}'>{html.escape(extra.label)}</label>" if variant.style == "label"
                       else f"<span class='caption'>{html.escape(extra.label)}</span>")
            attribute = f"id='{ident}' name='{extra.name}'" if variant.style == "label" else f"name='{extra.name}'"
            required = " required" if extra.required and extra.html_required else ""
            if extra.kind == "checkbox":
                rows.append(f"<div class='row check'><input type='checkbox' {attribute} value='yes'{required}> {caption}</div>")
            else:
                value = html.escape(values.get(extra.name, ""))
                rows.append(f"<div class='row'>{caption}<input type='text' {attribute} value='{value}'{required}></div>")
        if "shipping_swap" in variant.stored_changes:  # the Price row moves into a Shipping section
            price_row = next(index for index, meaning in enumerate(variant.order) if meaning == "price")
            rows.append(f"<fieldset><legend>Shipping</legend>{rows.pop(price_row)}</fieldset>")
        form_note = variant.form_note or ("Prices exclude VAT: 19 % VAT is added to the price buyers pay."
                                          if "vat" in variant.stored_changes else "")
        note = f"<p class='note'>{html.escape(form_note)}</p>" if form_note else ""
        errors = f"<p class='error'>{html.escape(error)}</p>" if error else ""
        search = ""
        if variant.search_box:
            search_name = "q" if variant.style == "label" else "field1"
            search_caption = ("<label for='q'>Title</label>" if variant.style == "label"
                              else "<span class='caption'>Title</span>")
            search_id = " id='q'" if variant.style == "label" else ""
            search = (f"<form method='get' action='/listings'><div class='row'>{search_caption}"
                      f"<input type='text' name='{search_name}'{search_id}><button type='submit'>Search</button></div></form>")
        target = " target='_top'" if variant.in_iframe else ""
        widgets = widget_rows(variant, values, variant.name_of("description"))
        body = (f"<h1>New listing</h1>{recent_edits(variant, self._listings)}{search}{note}{errors}"
                f"<form method='post' action='/listings/new'{target}>{''.join(rows)}{widgets}"
                f"{_AUTOSAVE_POSTS if variant.autosave_posts else ''}<button type='submit'>Continue</button></form>")
        return _page("New listing", body, widget_head(variant))

    def _autosave(self, form: dict[str, str]) -> int:
        """The form's own save: the draft it saved before (its id in the form), else a new one."""
        draft = int(form["draft_id"]) if form.get("draft_id", "").isdigit() else -1
        if draft not in self._autosaved:
            draft = next(self._ids)
            self._autosaved[draft] = ("autosave", {"title": form.get(self.variant.name_of("title"), "")})
            self.events.append(self._autosaved[draft])
        return draft

    def _save_form(self, form: dict[str, str]) -> tuple[int, str, dict[str, str]]:
        variant = self.variant
        if form.get("draft_id", "").isdigit() and int(form["draft_id"]) in self._autosaved:
            saved = self._autosaved.pop(int(form["draft_id"]))  # the autosaved draft is this listing's
            self.events[:] = [event for event in self.events if event is not saved]
        values: dict[str, Any] = {}
        problems = []
        for meaning in MEANINGS:
            name = variant.name_of(meaning)
            raw = form.get(name, "")
            if meaning == "show_in_search":
                values[meaning] = (name in form) != variant.hide_from_search
            elif meaning in _SELECTS:
                chosen = dict(variant.options_of(meaning)).get(raw)
                if chosen is None:
                    problems.append(f"choose a {variant.labels[meaning]}")
                values[meaning] = chosen
            elif meaning in ("price", "quantity"):
                number = _parse_number(raw)
                if number is None:
                    problems.append(f"{variant.labels[meaning]} must be a number")
                elif meaning == "price" and variant.price_in_cents:
                    number = number / 100
                values[meaning] = number
            else:
                values[meaning] = raw.strip()
                if meaning == "title" and not raw.strip():
                    problems.append(f"{variant.labels[meaning]} is required")
        for extra in variant.extras:
            if extra.required and not form.get(extra.name, "").strip():
                problems.append(f"{extra.label} is required")
        if variant.widgets:
            values["description"] = description_lines(form.get(variant.name_of("description"), ""))
        widget_values, widget_problems = read_widgets(variant, form)
        values.update(widget_values)
        problems += widget_problems

        if problems:
            return 200, self._form_page(form, "Please correct: " + "; ".join(problems) + "."), {}
        if variant.confirm_quantity_cap is not None:
            values["quantity"] = min(values["quantity"], Decimal(variant.confirm_quantity_cap))
        draft = next(self._ids)
        self._drafts[draft] = values
        return 303, "", {"Location": f"/listings/confirm/{draft}"}

    def _confirm_page(self, draft: int) -> str:
        values, variant = self._drafts[draft], self.variant
        shown = []
        for meaning in MEANINGS:
            value = values[meaning]
            if meaning == "show_in_search":
                text = "Yes" if value else "No"
            elif meaning == "price":
                text = f"{value:.2f}"
            else:
                text = str(value)
            label = "Shown in search" if meaning == "show_in_search" else variant.labels[meaning]
            shown.append(f"<tr><td>{html.escape(label)}:</td><td>{html.escape(text)}</td></tr>")
        for label, text in widget_shown(values):
            shown.append(f"<tr><td>{html.escape(label)}:</td><td>{html.escape(text)}</td></tr>")
        note = f"<p class='note'>{html.escape(variant.confirm_note)}</p>" if variant.confirm_note else ""
        publish_text, action = ("Delete", "delete") if variant.delete_button else (variant.submit_text, "publish")
        hidden = f"<input type='hidden' name='draft' value='{draft}'>"
        forms = (f"<form method='post' action='/listings/submit'>{hidden}{teaser_row(variant, values)}"
                 f"<button type='submit' name='action' value='{action}'>{html.escape(publish_text)}</button></form>")
        if variant.draft_button:
            hint = "<p>Not ready yet? Save it as a draft.</p>" if variant.draft_button == "explained" else ""
            forms = (f"<form method='post' action='/listings/submit'>{hidden}{hint}"
                     f"<button type='submit' name='action' value='draft'>Submit</button></form>") + forms
        body = f"<h1>Check your listing</h1>{note}<table>{''.join(shown)}</table>{forms}"
        return _page("Check your listing", body)

    def _submit(self, form: dict[str, str]) -> tuple[int, str, dict[str, str]]:
        draft = int(form["draft"]) if form.get("draft", "").isdigit() else -1
        values = self._drafts.get(draft)
        if values is None:
            return 404, _page("Not found", "<h1>No such draft</h1>"), {}
        action = form.get("action", "publish")
        if self.variant.vat_note and "excl" in self.variant.vat_note.casefold():
            values = values | {"price": (values["price"] * Decimal("1.19")).quantize(Decimal("0.01"))}  # buyers pay VAT
        self.events.append((action, dict(values)))
        if action == "draft":
            return 303, "", {"Location": "/listings"}
        if action == "delete":
            self._listings.pop(min(self._listings), None)
            return 303, "", {"Location": "/listings"}
        listing = next(self._ids)
        self._listings[listing] = self._stored(values)
        self.events[-1] = (action, dict(self._listings[listing]))
        for callback in self.on_publish:
            callback()
        return 303, "", {"Location": f"/listings/{listing}"}

    def _stored(self, values: dict[str, Any]) -> dict[str, Any]:
        """What the site stores for a submitted draft (its stored_changes applied)."""
        stored, changes = dict(values), self.variant.stored_changes
        if "vat" in changes:
            stored["price"] = (stored["price"] * Decimal("1.19")).quantize(Decimal("0.01"))
        if "quantity_cap" in changes:
            stored["quantity"] = min(stored["quantity"], Decimal(5))
        if "title_cut" in changes:
            stored["title"] = stored["title"][:16].rstrip()
        if "shipping_swap" in changes:
            stored["shipping"], stored["price"] = stored["price"], Decimal(0)
        return stored

    def _listing_page(self, listing: int) -> str:
        """The listing's own page: what the site stored, as a person reads it (English labels)."""
        item = self._listings[listing]
        price = f"{Decimal(str(item['price'])):.2f}"
        rows = []
        for meaning in (*MEANINGS, "shipping"):
            if meaning not in item:
                continue
            value = item[meaning]
            text = ("Yes" if value else "No") if meaning == "show_in_search" else \
                f"{value:.2f}" if meaning in ("price", "shipping") else str(value)
            label = {"show_in_search": "Shown in search", "shipping": "Shipping"}.get(meaning, ENGLISH.get(meaning, ""))
            rows.append(f"<tr><td>{html.escape(label)}:</td><td>{html.escape(text)}</td></tr>")
        body = (f"<h1>Listing published</h1><p>“{html.escape(item['title'])}” is live at {html.escape(price)}.</p>"
                f"<table>{''.join(rows)}</table><p><a href='/listings'>Back to my listings</a></p>"
                f"{own_rows(self.variant, self._listings)}")
        return _page(item["title"], body)
