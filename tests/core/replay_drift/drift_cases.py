"""The drift cases: one site change each, in one or both markup styles.

A case names what changed and what besides "never a wrong submission" it expects (see
:class:`drift_run.Case`): harmless changes must replay with zero model calls; a page that says
something a model must weigh must reach the model. Everything else may go either way, as long as
the site ends with this run's listing stored exactly once or with nothing stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drift_run import Case
from drift_site import COUNTRIES, GERMAN, MEANINGS, Extra, Style, Variant

from webtask_core.tools.browser_tools import FillTool

__all__ = ["CASES", "case_runs"]


def site(**changes: Any) -> Callable[[Style], Variant]:
    return lambda style: Variant(style=style, **changes)


def swapped(first: str, second: str, **changes: Any) -> Callable[[Style], Variant]:
    """The labels of two controls swapped: the control the recording knew as ``first`` now says
    ``second`` (and the site reads it so), and the other way round."""

    def build(style: Style) -> Variant:
        plain = Variant(style=style)
        order = list(MEANINGS)
        i, j = order.index(first), order.index(second)
        order[i], order[j] = order[j], order[i]
        return Variant(style=style, order=tuple(order),
                       names={first: plain.name_of(second), second: plain.name_of(first)}, **changes)

    return build


def renamed(style: Style) -> Variant:
    names = ({meaning: f"listing_{meaning}" for meaning in MEANINGS} if style == "label"
             else {meaning: f"field{index + 11}" for index, meaning in enumerate(MEANINGS)})
    return Variant(style=style, names=names)


def extra_field(label: str, *, required: bool, kind: str = "text", html_required: bool = True) -> Callable[[Style], Variant]:
    def build(style: Style) -> Variant:
        name = "brand" if style == "label" else "field9"
        return Variant(style=style, extras=(Extra(label, name, required=required, kind=kind,  # type: ignore[arg-type]
                                                  html_required=html_required),))
    return build


WITHOUT_BOOKS = (("audiobooks", "Audiobooks"), ("electronics", "Electronics"), ("home", "Home & Garden"), ("toys", "Toys"))
BOOKS_RELABELLED = (("books", "Magazines"), *WITHOUT_BOOKS)
ITALY_ISLANDS = tuple((key, "Italy (islands only)" if key == "it" else text) for key, text in COUNTRIES)
REORDERED = ("description", "category", "title", "ships_to", "ships_from", "quantity", "price", "show_in_search")

CASES: list[Case] = [
    # The unchanged site: must replay alone, with this run's values (the box wanted off, recorded on).
    Case("unchanged", "nothing (every value differs from the recording's, the box too)", site(), expect="zero_calls"),
    Case("unchanged-box-same", "nothing (the box wanted on, as recorded)", site(),
         values={"show_in_search": True}, expect="zero_calls"),
    Case("json-numbers", "nothing; price and quantity come as JSON numbers (61.5, 7)", site(),
         values={"price": 61.5, "quantity": 7}, expect="zero_calls", styles=("label",)),
    # Labels.
    Case("swap-price-quantity", "the Price and Quantity labels swapped", swapped("price", "quantity")),
    Case("hide-from-search", "'Show in search' is now 'Hide from search'", site(hide_from_search=True),
         values={"show_in_search": True}),
    Case("swap-ships-from-to", "'Ships from' and 'Ships to' swapped", swapped("ships_from", "ships_to")),
    Case("german", "labels in German (Titel, Preis, Menge, ...)", site(labels=dict(GERMAN))),
    # Options.
    Case("books-gone", "'Books' gone, 'Audiobooks' still there", site(categories=WITHOUT_BOOKS)),
    Case("books-relabelled", "option value=books now labelled 'Magazines'", site(categories=BOOKS_RELABELLED), styles=("span",)),
    Case("route-near-match", "'Italy' is now 'Italy (islands only)'", site(countries=ITALY_ISLANDS), styles=("label",)),
    # Buttons.
    Case("second-submit", "a 'save as draft' form with the same Submit button first", site(draft_button="identical"),
         styles=("label",)),
    Case("second-submit-explained", "a draft form with the same Submit, and a line saying so",
         site(draft_button="explained"), styles=("span",)),
    Case("delete-button", "the confirm page's button is now 'Delete'", site(delete_button=True), styles=("span",)),
    Case("submit-says-publish", "the Submit button now reads 'Publish'", site(submit_text="Publish"), styles=("label",)),
    # Fields.
    Case("new-required-field", "a new required field 'Brand'", extra_field("Brand", required=True), styles=("label",)),
    Case("new-required-server-only", "a new field 'Brand *' the server requires (no required attribute)",
         extra_field("Brand *", required=True, html_required=False), styles=("span",)),
    Case("new-required-terms", "a required box 'I accept the new seller terms'",
         extra_field("I accept the new seller terms", required=True, kind="checkbox"), styles=("label",)),
    Case("extra-optional-field", "a new optional field 'Brand (optional)'", extra_field("Brand (optional)", required=False),
         styles=("span",)),
    Case("reordered", "the fields in another order (harmless)", site(order=REORDERED), expect="ideally_zero"),
    Case("renamed-names", "every name attribute renamed, labels the same", renamed),
    Case("number-inputs", "price and quantity are <input type=number>", site(number_inputs=True), styles=("label",)),
    Case("search-box", "a search form with its own 'Title' field above the form", site(search_box=True)),
    Case("iframe", "the form moved into an iframe", site(in_iframe=True)),
    # Checkbox state.
    Case("box-default-on", "the box is now checked by default (wanted off)", site(checked_by_default=True),
         values={"show_in_search": False}, styles=("span",)),
    Case("box-default-on-click", "box checked by default, wanted on; recorded as a click",
         site(checked_by_default=True), recording="click", values={"show_in_search": True}, styles=("label",)),
    Case("box-off-when-recorded", "nothing; the box was off when recorded (no call), wanted on now", site(),
         recording="box-off", values={"show_in_search": True}, styles=("span",)),
    # Values at recording time.
    Case("equal-when-recorded", "nothing; price = quantity = 5 when recorded", site(), recording="equal"),
    Case("dollar-format", "nothing; the model typed '$24.50' for 24.50 when recorded", site(), recording="dollar",
         styles=("span",)),
    # Text a model reads.
    Case("price-warning", "the confirm page warns 'Price differs from your last listing by 90%'",
         site(confirm_note="Price differs from your last listing by 90%."), expect="handover", styles=("label",)),
    Case("price-in-cents", "a note: prices are now entered in cents", site(
        form_note="Prices are now entered in cents: type 2450 for 24.50.", price_in_cents=True), styles=("label",)),
    Case("confirm-caps-quantity", "the confirm page shows (and publishes) quantity 5, not the 7 entered",
         site(confirm_quantity_cap=5), styles=("span",)),
    # Lists and failures.
    Case("list-grew", "'My listings' has one more row (harmless)", site(extra_rows=1), expect="zero_calls"),
    Case("crash-mid-submit", "TransientError once the Submit reached the server, before its answer", site(),
         fault="crash_mid_submit", styles=("label",)),
    Case("crash-after-submit", "TransientError after the Submit click's page loaded", site(),
         fault="crash_after_submit", styles=("span",)),
    # Issue 25, the widget form (drift_widgets.py): radios, Tagify tags, a Pikaday date, TinyMCE.
    Case("widgets", "nothing; condition Used (New recorded, as in 'New listing'), 2 tags for 3, another long "
         "description typed in two paragraphs", site(widgets=True), recording="widgets", expect="zero_calls"),
    Case("widgets-condition-new", "nothing; condition New, as recorded, which the title's 'New listing' also says",
         site(widgets=True), recording="widgets", values={"condition": "New"}, expect="zero_calls", styles=("span",)),
    Case("tags-per-turn", "nothing; recorded one tag per turn, now 4 tags", site(widgets=True),
         recording="widgets-per-turn", values={"tags": ["atlas", "maps", "world", "1998"]}, expect="zero_calls"),
    # The tree names the tag field by its only chip (one tag is not a list of records there): known,
    # handed over (docs/internals.md §10).
    Case("one-tag", "nothing; one tag now (three when recorded)", site(widgets=True), recording="widgets",
         values={"tags": ["atlas"]}, styles=("label",)),
    Case("bold-phrase", "nothing; a description with a bold phrase, typed with Ctrl+B when recorded",
         site(widgets=True), recording="widgets-bold",
         values={"description": "Second-hand **atlas** of the world.\nA few pencil marks."},
         expect="zero_calls" if FillTool.RICH_TEXT_FILL else "any"),
    Case("recent-edits", "a 'Your most recent edits' panel above the form (the seller's own work)",
         site(widgets=True, recent_edits=True), recording="widgets", expect="zero_calls"),
    Case("autosave", "an autosave status in the form ('Saving…', then 'Saved' and the time)",
         site(widgets=True, autosave=True), recording="widgets", expect="zero_calls"),
    # What the run's own autosave makes of the page, and what a growth rule must not let through.
    Case("autosave-names-item", "once autosaved, the heading 'New listing' names the listing by its title (the "
         "draft saved is the item's now)", site(widgets=True, autosave=True, autosave_heading="title"),
         recording="widgets", expect="zero_calls"),
    Case("autosave-heading-changed", "once autosaved, the heading 'New listing' says 'New auction' (the form "
         "makes something else now)", site(widgets=True, autosave=True, autosave_heading="New auction"),
         recording="widgets", expect="handover"),
    # The form's own save races the submit (Wagtail's autosave saved a published page as a draft again):
    # a Continue sent while the autosave is still to come saves the listing a second time.
    Case("autosave-posts", "nothing; the form saves itself 500 ms after the last change (a draft the first time) "
         "and Continue answers in 1 s", site(autosave_posts=True), expect="zero_calls"),
    Case("autosave-posts-widgets", "nothing; the widget form saves itself 500 ms after the last change, and "
         "Continue answers in 1 s", site(widgets=True, autosave=True, autosave_posts=True), recording="widgets",
         expect="zero_calls"),
    Case("tag-suggestions", "a '+tag' link under the tag field per tag earlier listings saved (the seller's own "
         "work)", site(widgets=True, tag_suggestions=("lamp", "brass", "desk", "vintage")), recording="widgets",
         expect="zero_calls"),
    Case("tag-suggestions-new-field", "the '+tag' links, and a required 'Brand' field the recording never saw",
         lambda style: Variant(style=style, widgets=True, tag_suggestions=("lamp", "brass"), extras=(
             Extra("Brand", "brand" if style == "label" else "field9", required=True),)),
         recording="widgets", expect="handover"),
    Case("sticky-tags", "the tag field starts with the last listing's tags (the chips before Continue are not this "
         "run's list)", site(widgets=True, preset_tags=("lamp", "brass")), recording="widgets", expect="handover"),
    # Pikaday takes the focus back to its field when a typed date changes (its draw() refocuses it): keys
    # are pressed on the field they were meant for; a tag typed meanwhile may be lost, so either way.
    Case("picker-added", "the date field now opens a calendar that takes the focus back (recorded as a plain field, "
         "the whole form in one turn)", site(widgets=True), recording="widgets-plain-date", styles=("label",)),
    # A radio left at its default when recorded (issue 25, Cartridge's status): the choice is kept as a step.
    Case("condition-default", "nothing; the condition radio opens on New, recorded New (never clicked), Used now",
         site(widgets=True, condition_default="new"), recording="widgets-default-new", expect="zero_calls"),
    Case("condition-default-same", "nothing; the condition radio opens on New, recorded New (never clicked), New now",
         site(widgets=True, condition_default="new"), recording="widgets-default-new", values={"condition": "New"},
         expect="zero_calls", styles=("label",)),
    Case("condition-default-relabelled", "the radio 'Used' now reads 'Pre-owned' (recorded New at its default)",
         site(widgets=True, condition_default="new", condition_labels={"used": "Pre-owned"}),
         recording="widgets-default-new", expect="handover"),
    # A select listing this item's own words (issue 25, Cartridge's image select listing the photo's caption).
    Case("teaser", "nothing; the confirm page's 'Teaser' select offers the description's first line (typed)",
         site(teaser=True), recording="teaser", expect="zero_calls"),
    Case("teaser-new-option", "the 'Teaser' select offers a fixed option more ('Sale banner')",
         site(teaser=True, teaser_extra="Sale banner"), recording="teaser", expect="handover"),
    # A page still drawing when a step looks at it (issue 25, Wagtail's sidebar after the page list loaded).
    Case("late-sidebar", "nothing; 'My listings' draws an account sidebar 0.7 s after it loaded",
         site(late_sidebar=True), recording="late-sidebar", expect="zero_calls"),
    # A widget still being built when a recorded step looked (issue 25: Cartridge's TinyMCE at load 18).
    Case("late-editor", "nothing; the description's editor was built 2 s after the form loaded when recorded, at "
         "once now", site(widgets=True), recording="late-editor", expect="zero_calls"),
    Case("late-editor-replayed", "nothing; the description's editor is built 2 s after the form loads (at once "
         "when recorded)", site(widgets=True, editor_delay_ms=2000), recording="widgets", expect="zero_calls"),
    Case("sections", "nothing; 'Country' selects under 'Ships from' and 'Ships to'", site(sections=True),
         recording="sections", expect="zero_calls"),
    Case("swap-sections", "the 'Ships from' and 'Ships to' sections swapped: the only select named ships_from now "
         "says where it ships to", swapped("ships_from", "ships_to", sections=True), recording="sections",
         expect="handover"),
    Case("vat", "nothing; 'Prices incl. VAT' under the price", site(vat_note="Prices incl. VAT"), recording="vat",
         expect="zero_calls"),
    Case("vat-excluded", "'Prices incl. VAT' is now 'Prices excl. VAT' (a short line inside the form)",
         site(vat_note="Prices excl. VAT"), recording="vat", expect="handover"),
    Case("slow-submit", "the Submit's answer comes 30 s late (the listing is stored at once)",
         site(slow_submit_s=30.0), expect="handover", styles=("span",)),
]


# The site changes what was typed when it publishes; the confirm page still shows what was typed, so
# only the read-back of the published listing can tell (issue 26; VAT and the section swap are the
# site changes issue 25 names).
CASES += [
    # The form says so: replay hands over before anything is submitted (issue 25) and the careful model
    # refuses; the read-back's VAT catch is tested on the demo marketplace (tests/core/readback).
    Case("vat-excl", "the form now says prices exclude VAT, and 19 % is added when published",
         site(stored_changes=("vat",)), expect="handover"),
    Case("shipping-swap", "Price moved into a Shipping section: stored as the shipping cost, price 0.00",
         site(stored_changes=("shipping_swap",)), expect="mismatch"),
    Case("publish-caps-quantity", "the quantity is capped at 5 when published (the confirm page shows 7)",
         site(stored_changes=("quantity_cap",)), expect="mismatch"),
    Case("publish-cuts-title", "the title is cut to 16 characters when published",
         site(stored_changes=("title_cut",)), expect="mismatch", styles=("span",)),
    Case("publish-changes-two", "quantity capped and title cut when published, the form saying nothing",
         site(stored_changes=("quantity_cap", "title_cut")), expect="mismatch", styles=("label",)),
]


def case_runs() -> list[tuple[Case, Style]]:
    return [(case, style) for case in CASES for style in case.styles]
