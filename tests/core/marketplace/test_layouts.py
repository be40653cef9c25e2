"""Each layout change, and all of them together, over HTTP: what the pages show and that a listing
still gets published; switching the running site; the WEBTASK_SITE_LAYOUT default."""

from __future__ import annotations

import re

import httpx
import pytest
from site_pages import jpeg_bytes, listing_fields, logged_in_client

from webtask_core.testing.marketplace import Layout, Marketplace

EVERY_LAYOUT = [Layout(renamed_field=True), Layout(extra_step=True), Layout(moved_button=True), Layout.every_change()]
PHOTO = [("photos", ("front.jpg", jpeg_bytes(), "image/jpeg"))]


def publish(client: httpx.Client, layout: Layout, sku: str, shipping: str = "local-pickup") -> httpx.Response:
    """Form -> (Shipping) -> review -> Publish, as the layout asks; the listing page."""
    draft = client.post("/listings/new", data=listing_fields(sku, layout.title_field.name), files=PHOTO)
    assert draft.status_code == 200, draft.text
    if layout.extra_step:
        assert draft.url.path.endswith("/shipping") and "<h1>Shipping</h1>" in draft.text
        draft = client.post(draft.url.path, data={"shipping": shipping})
    assert "<h1>Review your listing</h1>" in draft.text
    return client.post(f"{draft.url.path}/publish")


def test_parse_names_and_every_change() -> None:
    assert Layout.parse("") == Layout.parse("original") == Layout() and Layout().is_original
    assert Layout.parse("all") == Layout.every_change() == Layout(True, True, True)
    assert Layout.parse("renamed_field,extra_step") == Layout(renamed_field=True, extra_step=True)
    assert Layout.parse(" moved_button  extra_step ") == Layout(extra_step=True, moved_button=True)
    assert str(Layout.every_change()) == "renamed_field,extra_step,moved_button" and str(Layout()) == "original"
    with pytest.raises(ValueError, match="renamed_feild.*known: renamed_field, extra_step, moved_button"):
        Layout.parse("renamed_feild")


@pytest.mark.parametrize("layout", EVERY_LAYOUT, ids=str)
def test_each_layout_renders_its_changes_and_publishes(layout: Layout) -> None:
    with Marketplace(layout=layout) as shop, logged_in_client(shop) as client:
        form = client.get("/listings/new").text
        if layout.renamed_field:
            assert '<label for="headline">Listing headline</label>' in form and 'name="headline"' in form
            assert 'name="title"' not in form
            rejected = client.post("/listings/new", data=listing_fields("L-1", "headline") | {"headline": ""}).text
            assert "Error: Enter a headline." in rejected and 'id="headline-error"' in rejected
        else:
            assert '<label for="title">Title</label>' in form

        if layout.extra_step:
            # Review and Publish both send a draft without a shipping choice back to the Shipping page.
            draft = client.post("/listings/new", data=listing_fields("L-0", layout.title_field.name), files=PHOTO)
            base = draft.url.path.removesuffix("/shipping")
            assert client.get(base).url.path == draft.url.path
            assert client.post(f"{base}/publish").url.path == draft.url.path and shop.listings() == []
            assert 'type="radio" name="shipping"' in draft.text and "required" in draft.text
            assert "Choose how the item will reach the buyer." in client.post(draft.url.path, data={}).text

        listing = publish(client, layout, "L-1")
        assert "Your listing is live!" in listing.text
        [record] = shop.listing_by_sku("L-1")
        assert record.title == "Blue suede shoes" and len(record.photos) == 1
        assert record.shipping == ("Local pickup" if layout.extra_step else None)
        assert ("<dt>Shipping</dt><dd>Local pickup</dd>" in listing.text) == layout.extra_step


@pytest.mark.parametrize("layout", [Layout(moved_button=True), Layout.every_change()], ids=str)
def test_moved_publish_sits_in_a_toolbar_above_the_heading(layout: Layout) -> None:
    with Marketplace(layout=layout) as shop, logged_in_client(shop) as client:
        draft = client.post("/listings/new", data=listing_fields("M-1", layout.title_field.name), files=PHOTO)
        if layout.extra_step:
            draft = client.post(draft.url.path, data={"shipping": "own-carrier"})
        page = draft.text
        buttons = re.findall(r"<button[^>]*>Publish</button>", page)
        assert buttons == ['<button type="submit" form="publish-form" class="toolbar-button">Publish</button>']
        assert page.index('role="toolbar"') < page.index("<h1>Review your listing</h1>")
        assert 'id="publish-form"' in page and "/static/toolbar.css" in page
        assert client.get("/static/toolbar.css").status_code == 200
        # The form the toolbar button names is what publishes.
        assert "Your listing is live!" in client.post(f"{draft.url.path}/publish").text
        assert shop.listing_by_sku("M-1")[0].shipping == ("I'll ship it myself" if layout.extra_step else None)


def test_switching_layout_keeps_listings_drafts_and_sessions() -> None:
    with Marketplace() as shop, logged_in_client(shop) as client:
        assert shop.layout == Layout()
        assert "Your listing is live!" in publish(client, Layout(), "S-1").text
        open_draft = client.post("/listings/new", data=listing_fields("S-2"), files=PHOTO).url.path

        shop.set_layout(Layout.every_change())
        assert shop.layout == Layout.every_change()
        assert 'name="headline"' in client.get("/listings/new").text  # same cookie, still logged in
        assert "S-1" in client.get("/listings", params={"sku": "S-1"}).text
        # A draft made before the switch now asks for shipping, then publishes.
        assert client.get(open_draft).url.path == f"{open_draft}/shipping"
        client.post(f"{open_draft}/shipping", data={"shipping": "prepaid-label"})
        assert "Your listing is live!" in client.post(f"{open_draft}/publish").text
        assert "Your listing is live!" in publish(client, shop.layout, "S-3").text

        shop.set_layout(Layout())
        assert '<label for="title">Title</label>' in client.get("/listings/new").text
        assert [(r.sku, r.shipping) for r in shop.listings()] == [  # in publishing order
            ("S-1", None), ("S-2", "Prepaid label (we email it)"), ("S-3", "Local pickup")]
        # What a script counts without scraping (no login, every user's, ?sku= as the search).
        published = httpx.get(shop.url("/api/listings")).json()
        assert published["count"] == 3 and [item["sku"] for item in published["listings"]] == ["S-1", "S-2", "S-3"]
        assert published["listings"][0]["url"] == shop.listings()[0].url and published["listings"][0]["photos"] == 1
        assert httpx.get(shop.url("/api/listings"), params={"sku": " s-2 "}).json()["count"] == 1
        with pytest.raises(TypeError, match="Layout.parse"):
            shop.set_layout("all")  # type: ignore[arg-type]


def test_post_layout_switches_a_site_in_another_process() -> None:
    with Marketplace() as shop, httpx.Client(base_url=shop.base_url) as client:
        assert client.get("/_layout").json() == {"layout": "original", "changes": []}
        switched = client.post("/_layout", json={"changes": ["extra_step", "moved_button"]})
        assert switched.json() == {"layout": "extra_step,moved_button", "changes": ["extra_step", "moved_button"]}
        assert shop.layout == Layout(extra_step=True, moved_button=True)
        assert client.post("/_layout", json={"changes": ["nope"]}).status_code == 400
        assert client.post("/_layout", content=b"all").status_code == 400
        assert shop.layout == Layout(extra_step=True, moved_button=True)


def test_the_environment_sets_the_default_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBTASK_SITE_LAYOUT", "renamed_field, moved_button")
    assert Marketplace().layout == Layout(renamed_field=True, moved_button=True)
    assert Marketplace(layout=Layout()).layout == Layout()  # an explicit layout wins
    monkeypatch.setenv("WEBTASK_SITE_LAYOUT", "all")
    assert Marketplace().layout == Layout.every_change()
    monkeypatch.setenv("WEBTASK_SITE_LAYOUT", "sideways")
    with pytest.raises(ValueError, match="^WEBTASK_SITE_LAYOUT: unknown layout change 'sideways'"):
        Marketplace()
