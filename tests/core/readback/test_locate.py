"""Finding the listing's own page: the URL given or reported, a list's one link to it, the page
itself when it names the listing — never a link that is not the listing's."""

from __future__ import annotations

from pydantic import BaseModel

from webtask_core.readback import ReadBack
from webtask_core.readback.locate import links_from_final_page, listing_links, names_listing, reported_url

SPEC = ReadBack(fields={"sku": "BAG-7", "title": "Red leather bag", "price": "89.50"})
SEARCH = '''- group
  - form
    - input-0 (type="search" name="sku" value="BAG-7") "Search by SKU"
    - button-1 "Search"
  - status "1 listing with SKU “BAG-7”"
  - table
    - row
      - text: "Title"
      - text: "SKU"
    - row
      - a-6 (href="/listings/1") "Red leather bag"
      - text: "BAG-7"
      - text: "$89.50"
    - row
      - a-7 (href="/listings/2") "Blue suede shoes"
      - text: "SHOE-1"
'''
LISTING_PAGE = '''- group
  - article
    - h1 "Red leather bag"
    - text: "$89.50"
    - text: "SKU"
    - text: "BAG-7"
    - a-4 (href="/listings/1/edit") "Edit listing"
    - a-5 (href="/listings") "Back to my listings"
'''
CARDS = '''- list
  - item
    - text: "BAG-7 · Red leather bag"
    - a-0 (href="/p/991") "View"
  - item
    - text: "SHOE-1 · Blue suede shoes"
    - a-1 (href="/p/992") "View"
'''


class Output(BaseModel):
    listing_url: str
    sku: str


def test_the_url_given_else_the_one_the_run_reported():
    assert reported_url(SPEC.model_copy(update={"url": "https://shop/l/9"}), {"listing_url": "https://x/1"}) == "https://shop/l/9"
    assert reported_url(SPEC, {"listing_url": "https://shop/listings/1", "sku": "BAG-7"}) == "https://shop/listings/1"
    assert reported_url(SPEC, Output(listing_url="https://shop/listings/3", sku="BAG-7")) == "https://shop/listings/3"
    assert reported_url(SPEC, {"output": "done"}) is None and reported_url(SPEC, {"url": "/relative"}) is None
    # A URL the run's feedback names when its output has none; the output's first; two say nothing.
    live = "Published Blue Bag (SKU BAG-7); it is live at http://127.0.0.1:8123/products/blue-bag/."
    assert reported_url(SPEC, None, live) == "http://127.0.0.1:8123/products/blue-bag/"
    assert reported_url(SPEC, {"listing_url": "https://shop/listings/1"}, live) == "https://shop/listings/1"
    assert reported_url(SPEC, None, "Logged in at https://shop/admin/ and listed it at https://shop/l/4") is None
    assert reported_url(SPEC, None, "Listed SKU BAG-7 at https://shop/l/4 (see https://shop/l/4).") == "https://shop/l/4"


def test_a_list_leads_to_the_listing_by_its_row_and_never_to_another():
    assert listing_links(SPEC, SEARCH, "http://shop/listings?sku=BAG-7") == ["http://shop/listings/1"]
    assert listing_links(SPEC, CARDS, "http://shop/search") == ["http://shop/p/991"]  # the card's only link
    other = ReadBack(fields={"sku": "HAT-9", "title": "Straw hat"})
    assert listing_links(other, SEARCH, "http://shop/listings") == []


def test_a_result_link_whose_words_are_its_url_leads_there():
    # The tree leaves out an href the link's text spells out (links.py): the text is the address.
    rows = CARDS.replace('(href="/p/991") "View"', '"https://shop.test/p/991"').replace(
        '(href="/p/992") "View"', '"/p/992"')
    assert listing_links(SPEC, rows, "http://shop/search") == ["https://shop.test/p/991"]
    shoes = ReadBack(fields={"sku": "SHOE-1", "title": "Blue suede shoes"})
    assert listing_links(shoes, rows, "http://shop/search") == ["http://shop/p/992"]
    # Words that are no address stay words: a result whose one link is named "View" and has no href
    # leads nowhere the reader can tell.
    assert listing_links(SPEC, CARDS.replace('(href="/p/991") ', ""), "http://shop/search") == []


def test_the_listings_own_page_names_it_and_its_edit_and_back_links_are_not_the_listing():
    assert listing_links(SPEC, LISTING_PAGE, "http://shop/listings/1") == []
    assert names_listing(SPEC, LISTING_PAGE)
    assert not names_listing(ReadBack(fields={"sku": "BAG-70", "title": "Red bag"}), LISTING_PAGE)


def test_a_page_that_offers_to_go_on_with_the_listing_is_not_the_listing():
    review = LISTING_PAGE + '  - form\n    - button-2 "Publish"\n'
    assert not names_listing(SPEC, review)
    step = LISTING_PAGE + '  - input-3 (type="submit" name="go" value="Continue")\n'
    assert not names_listing(SPEC, step)
    logged_in = LISTING_PAGE + '  - form\n    - button-0 "Log out"\n'  # the site's own header: still the listing
    assert names_listing(SPEC, logged_in)


def test_a_review_before_publish_leads_nowhere_even_by_its_only_link():
    # The demo marketplace's review page: a card naming the listing whose one link starts over.
    review = """- group
  - h1 "Review your listing"
  - text: "Title"
  - text: "Red leather bag"
  - text: "SKU"
  - text: "BAG-7"
  - form
    - a-3 (href="/listings/new") "Start over"
    - button-4 "Publish"
"""
    assert listing_links(SPEC, review, "http://shop/listings/drafts/4") == ["http://shop/listings/new"]
    assert links_from_final_page(SPEC, review, "http://shop/listings/drafts/4") == []
    assert not names_listing(SPEC, review)
    # A list of listings the run ended on still leads to the listing's row.
    assert links_from_final_page(SPEC, SEARCH, "http://shop/listings?sku=BAG-7") == ["http://shop/listings/1"]
