"""A published listing's edit page: ``GET|POST /listings/{id}/edit`` changes its title, description,
price, category, condition and quantity (its SKU and photos stay); what is stored follows the site's
alterations as a new listing's does. Saving leads back to the listing (``?saved=1``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response

from .forms import CATEGORIES, CONDITIONS, ListingForm, validate_edit_form
from .store import ListingRecord

if TYPE_CHECKING:
    from .app import SiteState

__all__ = ["add_edit_pages"]


def _form_of(listing: ListingRecord) -> ListingForm:
    def value_of(choices: tuple[tuple[str, str], ...], label: str) -> str:
        return next((value for value, shown in choices if shown == label), "")

    return ListingForm(title=listing.title, description=listing.description, price=f"{listing.price:.2f}",
                       category=value_of(CATEGORIES, listing.category),
                       condition=value_of(CONDITIONS, listing.condition), quantity=str(listing.quantity))


def add_edit_pages(app: FastAPI, state: SiteState, render: Callable[..., Response],
                   current_user: Callable[[Request], str]) -> None:
    store = state.store

    def page(request: Request, listing: ListingRecord, form: ListingForm, errors: dict[str, str]) -> Response:
        return render(request, "edit_listing.html", listing=listing, form=form, errors=errors,
                      categories=CATEGORIES, conditions=CONDITIONS)

    def listing_of(request: Request, listing_id: int) -> ListingRecord | Response:
        current_user(request)
        listing = store.listing(listing_id)
        return render(request, "not_found.html", 404, what="listing") if listing is None else listing

    @app.get("/listings/{listing_id}/edit")
    async def edit_page(request: Request, listing_id: int) -> Response:
        listing = listing_of(request, listing_id)
        return page(request, listing, _form_of(listing), {}) if isinstance(listing, ListingRecord) else listing

    @app.post("/listings/{listing_id}/edit")
    async def save_edit(request: Request, listing_id: int) -> Response:
        listing = listing_of(request, listing_id)
        if not isinstance(listing, ListingRecord):
            return listing
        data: Any = await request.form()
        def text(name: str) -> str:
            return str(data.get(name, ""))

        form = ListingForm(title=text("title"), description=text("description"), price=text("price"),
                           category=text("category"), condition=text("condition"), quantity=text("quantity"))
        valid, errors = validate_edit_form(form)
        if valid is None:
            return page(request, listing, form, errors)
        title, price, quantity = state.alterations.stored(title=valid.title, price=valid.price, quantity=valid.quantity)
        store.update(listing_id, title=title, description=valid.description, price=price, category=valid.category,
                     condition=valid.condition, quantity=quantity)
        return RedirectResponse(f"/listings/{listing_id}?saved=1", status_code=303)
