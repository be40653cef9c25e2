"""The demo marketplace's web app: log-in, my listings with SKU search, new listing → confirm → publish,
a listing's edit page; the pages follow `SiteState.layout` (layout.py), and what is stored follows
`SiteState.alterations` (alterations.py), both read afresh on every request. For scripts:
``GET /api/listings`` (JSON, ``?sku=`` to filter), ``GET|POST /_layout`` and ``GET|POST /_alterations``."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.datastructures import UploadFile
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .alterations import Alterations
from .check_pages import add_check_pages, challenge_redirect, second_factor_redirect
from .checks import Checks
from .edit_pages import add_edit_pages
from .forms import CATEGORIES, CONDITIONS, ListingForm, UploadedPhoto, validate_listing_form
from .layout import SHIPPING_OPTIONS, Layout
from .store import DraftListing, ListingRecord, ListingStore

__all__ = ["RequestRecord", "SiteState", "create_app", "SESSION_COOKIE", "CONSENT_COOKIE"]

SESSION_COOKIE = "shop_session"
CONSENT_COOKIE = "cookie_consent"
_HERE = Path(__file__).parent


@dataclass(frozen=True)
class RequestRecord:
    method: str
    path: str
    query: str
    status: int


@dataclass
class SiteState:
    """What the app shares with the `Marketplace` object that owns it."""

    store: ListingStore
    users: dict[str, str]
    preview_delay_ms: int
    layout: Layout = field(default_factory=Layout)  # replaced whole (frozen), so a request sees one layout
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    request_log: list[RequestRecord] = field(default_factory=list)
    checks: Checks = field(default_factory=Checks)  # second factor, challenge (checks.py)
    publish_answer_delay_s: float = 0.0  # a slow Publish: the listing is stored at once, the answer comes late
    alterations: Alterations = field(default_factory=Alterations)  # what the site changes when it stores

    def rotate_secret(self) -> None:
        """Invalidate every session cookie issued so far."""
        self.secret = secrets.token_bytes(32)

    def sign_session(self, username: str) -> str:
        payload = f"{username}|{int(time.time())}"
        signature = hmac.new(self.secret, payload.encode(), hashlib.sha256).hexdigest()
        return f"{payload}|{signature}"

    def user_from_cookie(self, cookie: str | None) -> str | None:
        if not cookie or cookie.count("|") != 2:
            return None
        username, issued, signature = cookie.split("|")
        expected = hmac.new(self.secret, f"{username}|{issued}".encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(signature, expected) or username not in self.users:
            return None
        return username


class _LoginRequired(Exception):
    def __init__(self, next_path: str) -> None:
        self.next_path = next_path


class _RequestLogMiddleware:
    """Records method, path and status of every request (tests assert on what touched the site)."""

    def __init__(self, app: ASGIApp, log: list[RequestRecord]) -> None:
        self.app = app
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        logged = False

        async def send_and_note(message: Message) -> None:
            nonlocal logged
            if message["type"] == "http.response.start" and not logged:
                # Noted before the response leaves, so a client never sees a reply the log lacks.
                self.log.append(RequestRecord(scope["method"], scope["path"], query, message["status"]))
                logged = True
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            if not logged:
                self.log.append(RequestRecord(scope["method"], scope["path"], query, 500))


def _safe_next(target: str | None) -> str:
    # Only paths on this site: an open redirect would be a bug even in a demo.
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/listings"
    return target


def _layout_json(layout: Layout) -> dict[str, Any]:
    return {"layout": str(layout), "changes": list(layout.changes)}


def _alterations_json(alterations: Alterations) -> dict[str, Any]:
    return {"alterations": str(alterations), "vat_percent": alterations.vat_percent,
            "max_quantity": alterations.max_quantity, "title_chars": alterations.title_chars}


def _listing_json(listing: ListingRecord) -> dict[str, Any]:
    return {"id": listing.id, "sku": listing.sku, "title": listing.title, "price": listing.price,
            "category": listing.category, "condition": listing.condition, "url": listing.url,
            "photos": len(listing.photos), "shipping": listing.shipping, "quantity": listing.quantity,
            "created_at": listing.created_at.astimezone(UTC).isoformat()}


def create_app(state: SiteState) -> FastAPI:
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    templates = Jinja2Templates(directory=str(_HERE / "templates"))
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")
    app.add_middleware(_RequestLogMiddleware, log=state.request_log)
    store = state.store

    def current_user(request: Request) -> str:
        user = state.user_from_cookie(request.cookies.get(SESSION_COOKIE))
        if user is None:
            query = f"?{request.url.query}" if request.url.query else ""
            raise _LoginRequired(request.url.path + query if request.method == "GET" else request.url.path)
        return user

    def render(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        user = state.user_from_cookie(request.cookies.get(SESSION_COOKIE))
        context.update(user=user, path=request.url.path, layout=state.layout, alterations=state.alterations)
        return templates.TemplateResponse(request, name, context, status_code=status_code)

    @app.exception_handler(_LoginRequired)
    async def to_login(request: Request, exc: _LoginRequired) -> Response:
        return RedirectResponse(f"/login?next={quote(exc.next_path, safe='/')}", status_code=303)

    @app.get("/")
    async def home() -> Response:
        return RedirectResponse("/listings", status_code=303)

    @app.get("/login")
    async def login_page(request: Request, next: str = "/listings") -> Response:
        if state.user_from_cookie(request.cookies.get(SESSION_COOKIE)):
            return RedirectResponse(_safe_next(next), status_code=303)
        return render(request, "login.html", next=_safe_next(next), username="", error=None)

    @app.post("/login")
    async def login(request: Request) -> Response:
        form = await request.form()
        username = str(form.get("username", "")).strip()
        password = str(form.get("password", ""))
        next_path = _safe_next(str(form.get("next", "")))
        expected = state.users.get(username)
        if expected is None or not hmac.compare_digest(password.encode(), expected.encode()):
            return render(request, "login.html", next=next_path, username=username,
                          error="Incorrect username or password.")
        return second_factor_redirect(state.checks, username, next_path) or sign_in(username, next_path)

    def sign_in(username: str, next_path: str) -> Response:
        response = RedirectResponse(next_path, status_code=303)
        response.set_cookie(SESSION_COOKIE, state.sign_session(username), httponly=True, samesite="lax")
        return response

    add_check_pages(app, state.checks, render, sign_in=sign_in, safe_next=_safe_next)

    @app.post("/logout")
    async def logout() -> Response:
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE)
        return response

    @app.get("/listings")
    async def my_listings(request: Request, sku: str | None = None) -> Response:
        user = current_user(request)
        search = sku.strip() if sku is not None else ""
        listings = store.listings(sku=search or None, owner=user)
        show_banner = request.cookies.get(CONSENT_COOKIE) != "accepted"
        return render(request, "listings.html", listings=listings, search=search,
                      searched=sku is not None, show_cookie_banner=show_banner)

    @app.get("/listings/new")
    async def new_listing(request: Request) -> Response:
        current_user(request)
        return challenge_redirect(state.checks, "/listings/new") or _form_page(request, ListingForm(), {})

    def _form_page(request: Request, form: ListingForm, errors: dict[str, str]) -> HTMLResponse:
        title = state.layout.title_field
        if "title" in errors:  # validation keys the title as "title"; the page names it as the layout does
            errors = {(title.name if key == "title" else key): text for key, text in errors.items()}
        return render(request, "new_listing.html", form=form, errors=errors, title=title,
                      categories=CATEGORIES, conditions=CONDITIONS, preview_delay_ms=state.preview_delay_ms)

    @app.post("/listings/new")
    async def submit_listing(request: Request) -> Response:
        user = current_user(request)
        data = await request.form()
        photos = []
        for item in data.getlist("photos"):
            # A file input with nothing chosen still sends an empty part.
            if isinstance(item, UploadFile) and item.filename:
                content = await item.read()
                if content:
                    photos.append(UploadedPhoto(Path(item.filename).name, content))
        title = state.layout.title_field
        form = ListingForm(title=str(data.get(title.name, "")), photos=photos,
                           **{name: str(data.get(name, "")) for name in
                              ("description", "price", "category", "condition", "sku", "quantity")})
        listing, errors = validate_listing_form(form, title_noun=title.noun)
        if listing is None:
            return _form_page(request, form, errors)
        draft_id = store.save_draft(
            owner=user, sku=listing.sku, title=listing.title, description=listing.description,
            price=listing.price, category=listing.category, condition=listing.condition,
            photos=[(photo.filename, photo.content) for photo in listing.photos], quantity=listing.quantity,
        )
        next_page = "/shipping" if state.layout.extra_step else ""
        return RedirectResponse(f"/listings/drafts/{draft_id}{next_page}", status_code=303)

    def _shipping_missing(draft: DraftListing) -> Response | None:
        # With the Shipping step the choice is required: review and publish send the user back to it.
        if state.layout.extra_step and draft.shipping is None:
            return RedirectResponse(f"/listings/drafts/{draft.id}/shipping", status_code=303)
        return None

    @app.get("/listings/drafts/{draft_id}")
    async def confirm_page(request: Request, draft_id: str) -> Response:
        draft = store.draft(draft_id, current_user(request))
        if draft is None:
            return render(request, "not_found.html", 404, what="draft")
        return _shipping_missing(draft) or render(request, "confirm.html", draft=draft)

    # The Shipping page answers in every layout, so a switch while a draft is open breaks nothing;
    # only the extra_step layout leads to it and requires it.
    @app.get("/listings/drafts/{draft_id}/shipping")
    async def shipping_page(request: Request, draft_id: str) -> Response:
        draft = store.draft(draft_id, current_user(request))
        if draft is None:
            return render(request, "not_found.html", 404, what="draft")
        return render(request, "shipping.html", draft=draft, options=SHIPPING_OPTIONS, error=None)

    @app.post("/listings/drafts/{draft_id}/shipping")
    async def choose_shipping(request: Request, draft_id: str) -> Response:
        draft = store.draft(draft_id, current_user(request))
        if draft is None:
            return render(request, "not_found.html", 404, what="draft")
        choice = dict(SHIPPING_OPTIONS).get(str((await request.form()).get("shipping", "")))
        if choice is None:
            return render(request, "shipping.html", draft=draft, options=SHIPPING_OPTIONS,
                          error="Choose how the item will reach the buyer.")
        store.set_shipping(draft.id, choice)
        return RedirectResponse(f"/listings/drafts/{draft.id}", status_code=303)

    @app.get("/listings/drafts/{draft_id}/photos/{position}")
    async def draft_photo(request: Request, draft_id: str, position: int) -> Response:
        if store.draft(draft_id, current_user(request)) is None:
            return Response(status_code=404)
        path = store.draft_photo(draft_id, position)
        return Response(status_code=404) if path is None else FileResponse(path)

    @app.post("/listings/drafts/{draft_id}/publish")
    async def publish(request: Request, draft_id: str) -> Response:
        draft = store.draft(draft_id, current_user(request))
        if draft is None:
            return render(request, "not_found.html", 404, what="draft")
        missing = _shipping_missing(draft)
        if missing is not None:
            return missing
        title, price, quantity = state.alterations.stored(title=draft.title, price=draft.price, quantity=draft.quantity)
        listing_id = store.publish(draft.model_copy(update={"title": title, "price": price, "quantity": quantity}))
        state.checks.note_published()
        if state.publish_answer_delay_s:
            await asyncio.sleep(state.publish_answer_delay_s)
        return RedirectResponse(f"/listings/{listing_id}?published=1", status_code=303)

    @app.get("/listings/{listing_id}")
    async def listing_page(request: Request, listing_id: int, published: int = 0, saved: int = 0) -> Response:
        current_user(request)
        listing = store.listing(listing_id)
        if listing is None:
            return render(request, "not_found.html", 404, what="listing")
        return render(request, "listing.html", listing=listing, published=bool(published), saved=bool(saved),
                      photo_names=store.stored_photo_names(listing_id))

    add_edit_pages(app, state, render, current_user)

    @app.get("/uploads/{listing_id}/{stored_name}")
    async def uploaded_photo(listing_id: int, stored_name: str) -> Response:
        path = store.photo_path(listing_id, stored_name)
        return Response(status_code=404) if path is None else FileResponse(path)

    @app.get("/help")
    async def help_page(request: Request) -> Response:
        current_user(request)
        return render(request, "help.html")

    @app.get("/api/listings")
    async def api_listings(sku: str | None = None) -> Response:
        # For scripts (an operator counting what a batch published): every user's listings as JSON,
        # without photo bytes; ?sku= filters as the search does.
        listings = store.listings(sku=sku.strip() if sku and sku.strip() else None)
        return JSONResponse({"count": len(listings), "listings": [_listing_json(listing) for listing in listings]})

    @app.get("/_layout")
    async def show_layout() -> Response:
        return JSONResponse(_layout_json(state.layout))

    @app.post("/_layout")
    async def switch_layout(request: Request) -> Response:
        # For a site run in another process (webtask services); in process, Marketplace.set_layout.
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": 'send JSON like {"changes": ["renamed_field"]}'}, status_code=400)
        changes = body.get("changes") if isinstance(body, dict) else None
        if not isinstance(changes, list) or not all(isinstance(change, str) for change in changes):
            return JSONResponse({"error": 'send JSON like {"changes": ["renamed_field"]}'}, status_code=400)
        try:
            state.layout = Layout.of(changes)
        except ValueError as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        return JSONResponse(_layout_json(state.layout))

    @app.get("/_alterations")
    async def show_alterations() -> Response:
        return JSONResponse(_alterations_json(state.alterations))

    @app.post("/_alterations")
    async def switch_alterations(request: Request) -> Response:
        # What the site changes in what you typed (alterations.py); in process, Marketplace.set_alterations.
        hint = 'send JSON like {"vat_percent": 19, "max_quantity": 5, "title_chars": 40} (null: off)'
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": hint}, status_code=400)
        try:
            state.alterations = Alterations.of(body if isinstance(body, dict) else {"": body})
        except ValueError as error:
            return JSONResponse({"error": f"{error}; {hint}"}, status_code=400)
        return JSONResponse(_alterations_json(state.alterations))

    @app.get("/favicon.ico")
    async def favicon() -> Response:
        return Response(status_code=204)

    templates.env.filters["money"] = lambda value: f"${value:,.2f}"
    templates.env.filters["when"] = lambda value: (
        value.astimezone(UTC).strftime("%b %d, %Y %H:%M UTC") if isinstance(value, datetime) else value
    )
    return app
