"""The Marketplace object itself: lifecycle, request log, reset, and the HTTP rules (no browser)."""

from __future__ import annotations

import html
import http.cookiejar
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from webtask_core.testing.marketplace import CATEGORIES, Marketplace, RequestRecord


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _client(follow_redirects: bool = True) -> urllib.request.OpenerDirector:
    handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())]
    if not follow_redirects:
        handlers.append(_NoRedirect())
    return urllib.request.build_opener(*handlers)


def _post(client: urllib.request.OpenerDirector, url: str, fields: dict[str, str]) -> tuple[int, str, str]:
    try:
        response = client.open(url, data=urllib.parse.urlencode(fields).encode())
    except urllib.error.HTTPError as redirect:  # a 303 when redirects are not followed
        return redirect.code, redirect.headers.get("location", ""), ""
    return response.status, response.url, response.read().decode()


def test_start_stop_cleans_up_its_folder() -> None:
    shop = Marketplace()
    shop.start()
    root = shop._root
    assert root is not None and (root / "marketplace.sqlite3").is_file()
    assert shop.base_url.startswith("http://127.0.0.1:")
    shop.stop()
    shop.stop()  # twice is fine
    assert not Path(root).exists()
    with pytest.raises(RuntimeError, match="not running"):
        shop.base_url  # noqa: B018 - reading it raises
    with pytest.raises(RuntimeError, match="not running"):
        shop.listings()


async def test_async_context_manager() -> None:
    async with Marketplace() as shop:
        with urllib.request.urlopen(shop.url("/login")) as response:
            assert "<h1>Log in</h1>" in response.read().decode()


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="users"):
        Marketplace(users={})
    with pytest.raises(ValueError, match="preview_delay_ms"):
        Marketplace(preview_delay_ms=-1)


def test_request_log_and_reset() -> None:
    with Marketplace() as shop:
        assert shop.request_log == []
        client = _client()
        client.open(shop.url("/listings?sku=A-1"))
        assert shop.request_log == [
            RequestRecord("GET", "/listings", "sku=A-1", 303),
            RequestRecord("GET", "/login", "next=/listings%3Fsku%3DA-1", 200),
        ]
        shop.reset()
        assert shop.request_log == []


def test_login_keeps_next_on_this_site_only() -> None:
    with Marketplace(users={"ana": "s3cret"}) as shop:
        client = _client(follow_redirects=False)
        status, location, body = _post(client, shop.url("/login"), {"username": "ana", "password": "nope"})
        assert status == 200 and "Incorrect username or password." in body
        status, location, _ = _post(client, shop.url("/login"),
                                    {"username": "ana", "password": "s3cret", "next": "//evil.example/x"})
        assert (status, location) == (303, "/listings")
        status, location, _ = _post(client, shop.url("/login"),
                                    {"username": "ana", "password": "s3cret", "next": "/listings/new"})
        assert (status, location) == (303, "/listings/new")


def test_posting_a_listing_without_a_session_goes_to_login() -> None:
    with Marketplace() as shop:
        status, location, _ = _post(_client(follow_redirects=False), shop.url("/listings/new"), {"title": "x"})
        assert (status, location) == (303, "/login?next=/listings/new")
        assert shop.listings() == []


def test_category_form_lists_a_dozen_choices() -> None:
    with Marketplace() as shop:
        client = _client()
        _post(client, shop.url("/login"), {"username": "demo", "password": "demo-pass"})
        form = html.unescape(client.open(shop.url("/listings/new")).read().decode())
    assert len(CATEGORIES) >= 12
    for value, label in CATEGORIES:
        assert f'<option value="{value}"' in form and label in form
    for field in ('name="title"', 'name="description"', 'name="price"', 'name="category"',
                  'name="condition"', 'name="sku"', 'type="file" name="photos" multiple accept="image/*"'):
        assert field in form
