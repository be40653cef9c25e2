"""The demo marketplace's "the site changes what you typed" switch and a listing's edit page: the
review page shows what was typed, the listing what was stored; bad switches are refused by name."""

from __future__ import annotations

import httpx
import pytest
from site_pages import jpeg_bytes, listing_fields, logged_in_client

from webtask_core.testing.marketplace import Alterations, Marketplace


def publish(client: httpx.Client, sku: str, **changes: str) -> tuple[str, str]:
    """(the review page's HTML, the listing's URL) of one listing made over HTTP."""
    data = listing_fields(sku) | {"quantity": "9", "title": "A rather long title for a pair of blue suede shoes"} | changes
    review = client.post("/listings/new", data=data, files={"photos": ("front.jpg", jpeg_bytes(), "image/jpeg")})
    published = client.post(review.url.path + "/publish")
    return review.text, str(published.url).split("?")[0]


def test_what_is_stored_follows_the_alterations_and_the_review_shows_what_was_typed():
    with Marketplace(alterations=Alterations.parse("vat,quantity,title")) as shop, logged_in_client(shop) as client:
        assert "Prices exclude VAT: 19 % VAT is added" in client.get("/listings/new").text
        review, url = publish(client, "ALT-1")
        assert "$45.00" in review and "<dd>9</dd>" in review  # what was typed
        (stored,) = shop.listing_by_sku("ALT-1")
        assert (stored.price, stored.quantity, stored.title) == (53.55, 5, "A rather long title for a pair of blue s")
        assert stored.url == url and "$53.55" in client.get(url).text
        shop.set_alterations(Alterations())  # the original site again
        publish(client, "ALT-2")
        assert shop.listing_by_sku("ALT-2")[0].price == 45.0


def test_a_listing_is_corrected_on_its_edit_page():
    with Marketplace(alterations=Alterations(max_quantity=5)) as shop, logged_in_client(shop) as client:
        _, url = publish(client, "EDIT-1")
        form = client.get(url + "/edit").text
        assert 'value="5"' in form and "SKU EDIT-1" in form
        fields = {"title": "Blue suede shoes", "description": "Worn twice.", "price": "45", "category": "bags",
                  "condition": "good", "quantity": "4"}
        saved = client.post(url + "/edit", data=fields)
        assert str(saved.url).endswith("?saved=1") and "Your changes are saved." in saved.text
        (stored,) = shop.listing_by_sku("EDIT-1")
        assert (stored.title, stored.category, stored.condition, stored.quantity) == ("Blue suede shoes", "Bags", "Good", 4)
        rejected = client.post(url + "/edit", data=fields | {"quantity": "0"})
        assert "Quantity must be a whole number from 1 to 999." in rejected.text
        assert client.get("/listings/999/edit").status_code == 404


def test_the_switch_over_http_and_its_bad_input():
    with Marketplace() as shop, httpx.Client(base_url=shop.base_url) as client:
        assert client.get("/_alterations").json()["alterations"] == "none"
        answer = client.post("/_alterations", json={"vat_percent": 20, "title_chars": 30})
        assert answer.json()["alterations"] == "vat=20,title=30" and shop.alterations.vat_percent == 20
        for body, problem in (({"vat": 19}, "unknown alteration field vat"),
                              ({"max_quantity": 0}, "max_quantity must be a whole number of at least 1"),
                              ([1], "unknown alteration field")):
            refused = client.post("/_alterations", json=body)
            assert refused.status_code == 400 and problem in refused.json()["error"]
        assert shop.alterations == Alterations(vat_percent=20, title_chars=30)  # unchanged by the refusals


def test_parsing_names_what_is_wrong():
    assert Alterations.parse("vat=7, quantity") == Alterations(vat_percent=7, max_quantity=5)
    assert str(Alterations.parse("none")) == "none" and Alterations.parse("") == Alterations()
    for text, problem in (("tax", "unknown alteration 'tax'"), ("vat=x", "'x' is not a whole number"),
                          ("title=0", "at least 1")):
        with pytest.raises(ValueError, match=problem):
            Alterations.parse(text)
    with pytest.raises(TypeError, match="set_alterations takes Alterations"):
        Marketplace().set_alterations("vat")  # type: ignore[arg-type]
