"""The parts of a replay script without a browser: placeholders in and out, page signatures,
fingerprint matching, script keys and the store's checks."""

from __future__ import annotations

import json

import pytest

from webtask_core.browser.models import ElementInfo, Observation
from webtask_core.errors import ConfigError, SessionFormatError
from webtask_core.replay import ReplayScript, ScriptStore, script_key
from webtask_core.replay.script import MissingValue, count_placeholders, fill_in, parameterise
from webtask_core.replay.signature import ElementFingerprint, Normaliser, PageSignature, resolve_element, url_pattern
from webtask_core.storage import LocalSessionStore

PARAMS = {"sku": "BOOT-7", "title": "Red boots BOOT-7", "price": "45.00", "photos": ["p1", "p2"],
          "password": "{{secret:shop_password}}"}


def observation(url: str, *elements: ElementInfo, title: str = "Shop", tree: str = "") -> Observation:
    return Observation(url=url, title=title, tabs=[], tree=tree, scroll="", elements={e.id: e for e in elements})


def test_recorded_values_become_placeholders_and_come_back_with_this_runs_values():
    recorded, literal = parameterise(
        {"text": "45", "resources": ["p1", "p2"], "url": "http://shop:81/listings?q=BOOT-7", "secret": PARAMS["password"]},
        PARAMS, page_url="http://shop:81/listings?q=BOOT-7")
    assert recorded == {"text": "{{param:price}}", "resources": "{{param:photos}}", "url": "{{page:url}}",
                        "secret": "{{param:password}}"}
    assert literal is False
    other = {"sku": "HAT-1", "title": "Green hat HAT-1", "price": "9.99", "photos": ["q1"],
             "password": "{{secret:shop_password}}"}
    assert fill_in(recorded, other, page_url="https://other:8443/listings?q=HAT-1") == {
        "text": "9.99", "resources": ["q1"], "url": "https://other:8443/listings?q=HAT-1",
        "secret": "{{secret:shop_password}}"}


def test_a_literal_the_model_made_up_stays_and_is_flagged():
    value, literal = parameterise({"text": "Size 8"}, PARAMS)
    assert value == {"text": "Size 8"} and literal is True
    # a secret placeholder alone is not a literal value: it is typed from the run's secrets
    assert parameterise("{{secret:other}}", PARAMS) == ("{{secret:other}}", False)


def test_free_text_keeps_placeholders_inside_and_a_missing_parameter_is_named():
    text, _ = parameterise("Listed BOOT-7 at http://shop/listings/3", PARAMS, page_url="http://shop/listings/3",
                           free_text=True)
    assert text == "Listed {{param:sku}} at {{page:url}}"
    with pytest.raises(MissingValue, match="'sku'"):
        fill_in("{{param:sku}}", {}, page_url="")


def test_counts_follow_this_runs_list_and_its_plural():
    recorded = count_placeholders("2 photos ready", PARAMS)
    assert recorded == "{{count:photos}} photos ready"
    assert fill_in(recorded, {"photos": ["only"]}, page_url="") == "1 photo ready"
    assert fill_in(recorded, {"photos": ["a", "b", "c"]}, page_url="") == "3 photos ready"
    assert count_placeholders("Step 12 of 20", PARAMS) == "Step 12 of 20"  # no list has 12 or 20 items


def test_url_patterns_drop_ids_and_query_values():
    assert url_pattern("https://shop/listings/drafts/a1b2?sku=X&page=2") == "/listings/drafts/*?page&sku"
    assert url_pattern("https://shop/") == "/"
    assert url_pattern("about:blank") == "about:blank"


def test_texts_fold_this_runs_values_and_digits():
    fold = Normaliser(PARAMS)
    assert fold("  Search results for BOOT-7 ") == fold("search results for boot-7") == "search results for {sku}"
    assert Normaliser({"sku": "HAT-1"})("Search results for HAT-1") == "search results for {sku}"
    assert fold("Order 1234") == "order #"


def link(id_: str, href: str, text: str) -> ElementInfo:
    return ElementInfo(id=id_, tag="a", text=text, attributes={"href": href})


def button(id_: str, text: str, *context: str) -> ElementInfo:
    return ElementInfo(id=id_, tag="button", type="submit", text=text, context=context)


def test_a_search_that_now_finds_the_item_is_a_difference_of_the_item_not_the_site():
    fold = Normaliser(PARAMS, identifying=("sku", "title"))
    empty = observation("http://shop/listings?q=BOOT-7", button("button-0", "Search"))
    found = observation("http://shop/listings?q=BOOT-7", button("button-0", "Search"),
                        link("a-0", "/listings/3", "Red boots BOOT-7"))
    recorded, now = PageSignature.of(empty, fold), PageSignature.of(found, fold)
    assert recorded.keyed  # the URL shows the SKU
    assert "has 1 kind(s) of control" in recorded.difference(now)
    assert recorded.only_grew(now) and not now.only_grew(recorded)


def test_a_list_page_may_grow_links_but_not_controls():
    fold = Normaliser(PARAMS, identifying=("sku",))
    before = PageSignature.of(observation("http://shop/listings", button("button-0", "New listing")), fold)
    assert not before.keyed
    grown = observation("http://shop/listings", button("button-0", "New listing"), link("a-0", "/listings/9", "Hat"))
    assert before.difference(PageSignature.of(grown, fold)) is None
    new_button = observation("http://shop/listings", button("button-0", "New listing"), button("button-1", "Delete all"))
    assert "delete all" in before.difference(PageSignature.of(new_button, fold))
    renamed = observation("http://shop/listings", button("button-0", "Create listing"))
    assert "lacks" in before.difference(PageSignature.of(renamed, fold))
    assert "recording was on /listings" in before.difference(PageSignature.of(observation("http://shop/help"), fold))


def test_an_element_is_found_by_what_it_is_and_never_by_a_guess():
    fold = Normaliser(PARAMS)
    publish = ElementFingerprint.of(button("button-3", "Publish", "form"), fold)
    moved = observation("http://shop/d/1", button("button-0", "Back"), button("button-1", "Publish", "toolbar"))
    assert resolve_element(publish, moved, fold) == ("button-1", "")
    twice = observation("http://shop/d/1", button("button-0", "Publish", "form"), button("button-1", "Publish", "form"))
    found, why = resolve_element(publish, twice, fold)
    assert found is None and "not acting on a guess" in why
    gone = observation("http://shop/d/1", button("button-0", "Back"))
    assert resolve_element(publish, gone, fold)[0] is None


def test_script_keys_name_the_job_not_the_values():
    assert script_key("listing_task", "127.0.0.1:8000", 2).startswith("listing-task.127-0-0-1-8000.v2-")
    assert script_key("listing-task", "shop", 1) == "listing-task.shop.v1"
    assert script_key("a b", "shop") != script_key("a-b", "shop")  # a hash keeps slugged names apart
    with pytest.raises(ConfigError, match="replay host"):
        script_key("job", "  ")


def test_the_store_names_a_script_it_cannot_read(tmp_path):
    store = ScriptStore(LocalSessionStore(tmp_path))
    store.save(ReplayScript(key="job.shop.v1", steps=[]))
    assert store.keys() == ["job.shop.v1"] and store.load("job.shop.v1").revision == 1
    path = tmp_path / "scripts" / "job.shop.v1.json"
    path.write_text(json.dumps({"schema_version": 99, "key": "job.shop.v1", "steps": []}))
    with pytest.raises(SessionFormatError, match="schema_version 99.*Delete it"):
        store.load("job.shop.v1")
    path.write_text(json.dumps({"schema_version": 1, "key": "job.shop.v1", "steps": [{"page": 3}]}))
    with pytest.raises(SessionFormatError, match="malformed"):
        store.load("job.shop.v1")
    assert store.delete("job.shop.v1") and store.load("job.shop.v1") is None and not store.delete("job.shop.v1")
