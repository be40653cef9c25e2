"""Read-back on the demo marketplace, in real Chromium: after a completed listing its own page is
read — by one forced model call on a live run, in code (0 calls) on a replayed one — and a listing
the site stored otherwise than was typed (VAT added, quantity capped, title cut) ends ``mismatch``
naming exactly those fields; what the page does not show is "not shown"."""

from __future__ import annotations

import pytest
from readback_helpers import list_item, listing, read_back_requests, scripts

from webtask_core import WorkerStatus
from webtask_core.readback import ReadBack
from webtask_core.testing import FakeLLM, MarketplaceListingPolicy, Reply
from webtask_core.testing.marketplace import Alterations


def mismatched(result) -> set[str]:
    return {check.field for check in result.readback.mismatches}


async def test_a_live_listing_is_read_by_one_forced_call_and_judged_in_code(browser, shop, photos):
    llm = FakeLLM(MarketplaceListingPolicy())
    result = await list_item(llm, browser, shop, photos, listing("LIVE-1", shop))
    assert result.status is WorkerStatus.completed, result.feedback
    readback = result.readback
    assert readback.status == "passed" and readback.method == "model" and readback.model_calls == 1
    assert {check.field: check.verdict for check in readback.fields} == dict.fromkeys(
        ("sku", "title", "description", "price", "category", "condition", "quantity", "photos"), "match")
    assert {check.field: check.shown for check in readback.fields}["price"] == "$46.00"
    assert readback.url == shop.listing_by_sku("LIVE-1")[0].url
    (request,) = read_back_requests(llm)
    assert request["tool_choice"] == {"type": "tool", "name": "report_listing"}
    fields_block = request["messages"][0]["content"][0]["text"].split("</fields>")[0]
    assert "46.00" not in fields_block and "Like new" not in fields_block  # the model reads, code judges
    assert result.usage.total_tokens > 0 and readback.usage.total_tokens > 0


async def test_replayed_listings_are_checked_in_code_with_no_model_call(browser, shop, photos, tmp_path):
    store, llm = scripts(tmp_path), FakeLLM(MarketplaceListingPolicy())
    first = await list_item(llm, browser, shop, photos, listing("REP-1", shop), store=store)
    assert first.replay == "recorded" and first.readback.templates == "recorded"
    assert (tmp_path / "sessions" / "readback").is_dir()
    for sku, price, category in (("REP-2", "19.99", "Bags"), ("REP-3", "1234.50", "Books")):
        before = len(llm.requests)
        data = listing(sku, shop, price=price, category=category, condition="Good", quantity="2")
        result = await list_item(llm, browser, shop, photos, data, store=store)
        assert result.status is WorkerStatus.completed, result.feedback
        assert result.readback.status == "passed" and result.readback.method == "templates", result.readback
        assert result.readback.model_calls == 0 and not read_back_requests(llm)[1:]
        if result.replay == "replayed":
            assert len(llm.requests) == before  # the whole listing, read-back included: no model call


@pytest.mark.parametrize("replayed", [False, True], ids=["live", "replayed"])
async def test_the_site_changing_what_you_typed_is_a_mismatch_naming_each_field(browser, shop, photos, tmp_path,
                                                                                replayed):
    store, llm = scripts(tmp_path), FakeLLM(MarketplaceListingPolicy())
    if replayed:
        await list_item(llm, browser, shop, photos, listing("ALT-0", shop), store=store)
    shop.set_alterations(Alterations.parse("vat,quantity,title"))
    data = listing("ALT-1", shop)
    result = await list_item(llm, browser, shop, photos, data, store=store if replayed else None)
    assert result.status is WorkerStatus.mismatch and not result.ok
    assert result.readback.method == ("templates" if replayed else "model")
    assert mismatched(result) == {"price", "quantity", "title"}
    shown = {check.field: check.shown for check in result.readback.fields}
    assert shown["price"] == "$54.74" and shown["quantity"] == "5"  # 46.00 + 19 %, and the cap
    assert shown["title"] == data["title"][:40] != data["title"]
    assert "price: expected '46.00', shown '$54.74'" in result.feedback
    assert result.readback.screenshot  # the page as it was read, for the alert
    (stored,) = shop.listing_by_sku("ALT-1")  # published once; nothing lost
    assert stored.price == 54.74 and stored.quantity == 5


async def test_only_the_field_the_site_changed_is_named(browser, shop, photos, tmp_path):
    store, llm = scripts(tmp_path), FakeLLM(MarketplaceListingPolicy())
    await list_item(llm, browser, shop, photos, listing("ONE-0", shop), store=store)
    shop.set_alterations(Alterations(vat_percent=19))
    result = await list_item(llm, browser, shop, photos, listing("ONE-1", shop, price="100.00"), store=store)
    assert result.status is WorkerStatus.mismatch and mismatched(result) == {"price"}
    assert {check.field: check.shown for check in result.readback.fields}["price"] == "$119.00"


async def test_verify_off_or_replayed_only_skips_the_read_back(browser, shop, photos, tmp_path):
    llm = FakeLLM(MarketplaceListingPolicy())
    shop.set_alterations(Alterations(vat_percent=19))  # it would be a mismatch, were it read
    off = await list_item(llm, browser, shop, photos, listing("OFF-1", shop), verify="off")
    live = await list_item(llm, browser, shop, photos, listing("OFF-2", shop), verify="replayed")
    for result in (off, live):
        assert result.status is WorkerStatus.completed and result.readback.status == "skipped"
    assert not read_back_requests(llm)
    replayed = await list_item(llm, browser, shop, photos, listing("OFF-3", shop), store=scripts(tmp_path),
                               verify="replayed")
    assert replayed.status is WorkerStatus.mismatch and replayed.readback.method == "model"


async def test_fields_the_page_does_not_show_are_not_shown_and_the_rest_still_judged(browser, shop, photos):
    llm = FakeLLM(MarketplaceListingPolicy())
    data = listing("HID-1", shop)
    fields = {"title": data["title"], "price": data["price"], "brand": "Acme", "colour": "blue"}
    result = await list_item(llm, browser, shop, photos, data, readback=ReadBack(fields=fields))
    assert result.status is WorkerStatus.completed
    assert result.readback.not_shown == ["brand", "colour"]
    assert "not shown: brand, colour" in result.readback.summary()


async def test_a_listing_the_site_does_not_show_at_all_is_not_done(browser, shop, photos):
    llm = FakeLLM(MarketplaceListingPolicy())
    data = listing("GONE-1", shop)
    spec = ReadBack(fields={"title": data["title"], "price": data["price"]}, url=shop.url("/listings/999"))
    result = await list_item(llm, browser, shop, photos, data, readback=spec)
    assert result.status is WorkerStatus.mismatch and result.readback.status == "unread"
    assert "/listings/999 answered HTTP 404" in result.readback.reason and "/listings/999" in result.feedback
    assert len(shop.listing_by_sku("GONE-1")) == 1  # it was published: the ledger must keep it


async def test_a_page_that_shows_none_of_the_fields_is_unread(browser, shop, photos):
    llm = FakeLLM(MarketplaceListingPolicy())
    data = listing("HELP-1", shop)
    spec = ReadBack(fields={"sku": data["sku"], "quantity": data["quantity"]}, url=shop.url("/help"))
    result = await list_item(llm, browser, shop, photos, data, readback=spec)
    assert result.status is WorkerStatus.mismatch and result.readback.status == "unread"
    assert "shows none of the listing's fields" in result.readback.reason


async def test_a_read_back_the_model_cannot_make_is_unread_and_loses_nothing(browser, shop, photos):
    # The model API refuses the read-back's request (here: a reply without the forced call, a 400).
    llm = FakeLLM(MarketplaceListingPolicy(), reader=lambda request: Reply(text="Looks fine to me."))
    result = await list_item(llm, browser, shop, photos, listing("ERR-1", shop))
    assert result.status is WorkerStatus.mismatch and result.readback.status == "unread"
    assert "could not be read back" in result.readback.reason and "report_listing" in result.readback.reason
    assert len(shop.listing_by_sku("ERR-1")) == 1
