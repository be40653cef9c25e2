"""The pages of the demo marketplace's checks (checks.py): the log-in's second factor, the inbox
standing in for e-mail, and the security check after a burst of listings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from .checks import Checks

__all__ = ["add_check_pages", "second_factor_redirect", "challenge_redirect"]

Render = Callable[..., HTMLResponse]


def second_factor_redirect(checks: Checks, username: str, next_path: str) -> Response | None:
    """Where a right password leads when the site asks for a second factor (None: it does not)."""
    if checks.second_factor is None:
        return None
    token = checks.start_login(username, next_path)
    return RedirectResponse(f"/login/verify?token={token}", status_code=303)


def challenge_redirect(checks: Checks, next_path: str) -> Response | None:
    """The security check, when one is due (None: go on)."""
    if not checks.challenge_due:
        return None
    return RedirectResponse(f"/challenge?next={next_path}", status_code=303)


def add_check_pages(app: FastAPI, checks: Checks, render: Render, *, sign_in: Callable[[str, str], Response],
                    safe_next: Callable[[str | None], str]) -> None:
    """``sign_in(username, next_path)``: the response that logs the user in (the session cookie)."""

    @app.get("/login/verify")
    async def verify_page(request: Request, token: str = "") -> Response:
        if checks.pending(token) is None:
            return RedirectResponse("/login", status_code=303)
        return render(request, "verify.html", token=token, method=checks.second_factor, error=None)

    @app.post("/login/verify")
    async def verify(request: Request) -> Response:
        form = await request.form()
        token = str(form.get("token", ""))
        if checks.pending(token) is None:
            return RedirectResponse("/login", status_code=303)
        login = checks.verify(token, str(form.get("code", "")))
        if login is None:
            return render(request, "verify.html", token=token, method=checks.second_factor,
                          error="That code is not valid. Check it and try again.")
        return sign_in(login.username, login.next_path)

    @app.get("/inbox")
    async def inbox(request: Request) -> Response:
        return render(request, "inbox.html", mails=list(reversed(checks.inbox)))

    @app.get("/challenge")
    async def challenge_page(request: Request, next: str = "/listings/new") -> Response:
        if not checks.challenge_due:
            return RedirectResponse(safe_next(next), status_code=303)
        return render(request, "challenge.html", next=safe_next(next), version=checks.challenge_version, error=None)

    @app.get("/challenge/picture")
    async def challenge_picture() -> Response:
        return Response(checks.challenge_picture(), media_type="image/png", headers={"Cache-Control": "no-store"})

    @app.post("/challenge")
    async def answer_challenge(request: Request) -> Response:
        form: Any = await request.form()
        next_path = safe_next(str(form.get("next", "")))
        if checks.answer_challenge(str(form.get("answer", ""))):
            return RedirectResponse(next_path, status_code=303)
        return render(request, "challenge.html", next=next_path, version=checks.challenge_version,
                      error="Those are not the characters in the picture. Try again.")
