"""The parts of a replay script without a browser: values in and out of placeholders (exact, or
declined), reading a tree the way a model does, page signatures, finding an element again, the check
before a submit, script keys and the store's checks."""

from __future__ import annotations

import json

import pytest

from webtask_core.browser.models import ElementInfo, Observation
from webtask_core.errors import ConfigError, SessionFormatError
from webtask_core.replay import ReplayScript, ScriptStore, script_key
from webtask_core.replay.binding import Binding, count_placeholders, template_text, template_value
from webtask_core.replay.commit import capture_commit, is_commit, verify_commit
from webtask_core.replay.folding import Normaliser, label_words, url_pattern
from webtask_core.replay.reading import read_page
from webtask_core.replay.signature import PageSignature, PageView
from webtask_core.replay.templates import MissingValue, render, shown_matches
from webtask_core.storage import LocalSessionStore

PARAMS = {"sku": "BOOT-7", "title": "Red boots BOOT-7", "price": "45.00", "photos": ["p1", "p2"],
          "password": "{{secret:shop_password}}"}
OTHER = {"sku": "HAT-1", "title": "Green hat HAT-1", "price": "9.99", "photos": ["q1"],
         "password": "{{secret:shop_password}}"}


def typed(value, params=PARAMS, *label: str, page_url: str = ""):
    """A value the model typed into a field labelled ``label``: its template and the binding's problem."""
    binding = Binding(params, label_words(*label), strict=True)
    return template_value(value, binding, page_url=page_url), binding.problem


def test_recorded_values_become_placeholders_and_come_back_with_this_runs_values():
    recorded, problem = typed({"text": "45", "resources": ["p1", "p2"], "url": "http://shop:81/listings?q=BOOT-7",
                               "secret": PARAMS["password"]}, page_url="http://shop:81/listings?q=BOOT-7")
    assert problem is None
    # 45 for 45.00: the model wrote it without trailing zeros, and so will the next run (9.99, 120)
    assert recorded == {"text": "{{param:price|num}}", "resources": "{{param:photos}}", "url": "{{page:url}}",
                        "secret": "{{param:password}}"}
    assert render(recorded, OTHER, page_url="https://other:8443/listings?q=HAT-1") == {
        "text": "9.99", "resources": ["q1"], "url": "https://other:8443/listings?q=HAT-1",
        "secret": "{{secret:shop_password}}"}


def test_a_value_written_the_models_own_way_is_a_format_of_the_parameter_or_declined():
    assert typed("$45.00")[0] == "${{param:price}}"
    assert typed("45,00 €")[0] == "{{param:price|num:2:comma}} €"
    assert render("{{param:price|num:2:comma}} €", {"price": 1200.5}) == "1200,50 €"
    assert typed("RED BOOTS BOOT-7")[0] == "{{param:title|upper}}"
    assert typed("red-boots-boot-7")[0] == "{{param:title|slug}}"
    assert render("{{param:title|slug}}", OTHER) == "green-hat-hat-1"
    # shortened: no format repeats it, so the step is the model's
    value, problem = typed("Red boots")
    assert value == "Red boots" and "written from title" in problem
    # a number is never rounded into the recorded format: the model decides
    with pytest.raises(MissingValue, match="2 decimals"):
        render("${{param:price|num:2}}", {"price": "19.999"})
    # a constant the model made up stays as it is
    assert typed("Size 8") == ("Size 8", None)


def test_equal_values_are_bound_by_the_label_they_went_into_or_not_at_all():
    params = {"price": 5, "quantity": 5, "show_in_search": True, "gift": True}
    assert typed("5", params, "Price") == ("{{param:price}}", None)
    assert typed("5", params, "Quantity") == ("{{param:quantity}}", None)
    value, problem = typed("5", params, "Menge")
    assert value == "5" and "fits price, quantity" in problem
    assert typed(True, params, "Show in search") == ("{{param:show_in_search}}", None)
    assert render("{{param:show_in_search}}", {"show_in_search": False}) is False
    assert render({"text": "{{param:price}}"}, {"price": 61.5}) == {"text": "61.5"}  # a JSON number, typed
    # a weak value (a boolean, one digit) equal to one parameter needs the label too
    value, problem = typed(True, {"show_in_search": True}, "I agree to the terms")
    assert value is True and "cannot be told apart" in problem
    assert typed("1", {"quantity": 1}, "Quantity") == ("{{param:quantity}}", None)
    assert typed("1", {"quantity": 1}, "Packages")[1] is not None


def test_free_text_keeps_placeholders_inside_and_a_missing_parameter_is_named():
    binding = Binding(PARAMS, set(), strict=False)
    text = template_value("Listed BOOT-7 at http://shop/listings/3 for the demo", binding)
    assert text == "Listed {{param:sku}} at http://shop/listings/3 for the demo"
    # whole words only: a value inside another word is not that value
    assert template_value("demonstrate", Binding({"user": "demo"}, set(), strict=False)) == "demonstrate"
    with pytest.raises(MissingValue, match="'sku'"):
        render("{{param:sku}}", {})


def test_counts_follow_this_runs_list_and_its_plural():
    recorded = count_placeholders("2 photos ready", PARAMS)
    assert recorded == "{{count:photos}} photos ready"
    assert render(recorded, {"photos": ["only"]}) == "1 photo ready"
    assert render(recorded, {"photos": ["a", "b", "c"]}) == "3 photos ready"
    assert count_placeholders("Step 12 of 20", PARAMS) == "Step 12 of 20"  # no list has 12 or 20 items
    # a number is a list's count only where the words beside it name the list
    one = {"photos": ["front"]}
    assert count_placeholders("Step 1 of 3", one) == "Step 1 of 3"
    assert count_placeholders("Photos: 1", one) == "Photos: {{count:photos}}"
    assert count_placeholders("Listed with 1 photo", one) == "Listed with {{count:photos}} photo"


def test_a_shown_number_is_a_count_only_where_its_line_names_the_list():
    one = {"photos": ["front"], "sku": "BOOT-7"}

    def shown(line: str, previous: str = "") -> str:
        return template_text(line, Binding(one, label_words(previous, line), strict=False, counts=True, shown=True))

    assert shown("1 photo ready") == "{{count:photos}} photo ready"
    assert shown("1", previous="Photos") == "{{count:photos}}"
    # a quantity of 1 beside one uploaded photo stays 1: with two photos it is still 1
    assert shown("1", previous="Quantity") == "1"
    assert shown("Page 1 of 4") == "Page 1 of 4"


def test_shown_text_matches_this_runs_values_case_and_reformatting_aside():
    assert shown_matches("Price: ${{param:price}}", "price:  $9.99", OTHER)
    assert not shown_matches("Price: ${{param:price}}", "Price: $45.00", OTHER)
    assert shown_matches("{{param:price}}", "9.990 ", {"price": "9.99"}) is False  # 9.990 may be 9990
    assert shown_matches("{{param:price}}", "$ 9.99", OTHER)  # a field that formats what was typed
    assert shown_matches("Preview of {{file}}", "Preview of front.jpg", OTHER, files=["front.jpg"])
    assert shown_matches("{{param:title}} is great", "Green hat HAT-1 is gr…", OTHER)  # cut by the tree


def test_url_patterns_drop_ids_and_query_values():
    assert url_pattern("https://shop/listings/drafts/a1b2?sku=X&page=2") == "/listings/drafts/*?page&sku"
    assert url_pattern("https://shop/") == "/"
    assert url_pattern("about:blank") == "about:blank"


def test_texts_fold_this_runs_values_digits_and_dates():
    fold = Normaliser(PARAMS, identifying=("sku", "title"))
    assert fold("  Search results for BOOT-7 ") == fold("search results for boot-7") == "search results for {sku}"
    assert fold.offer("Listed Nov 26, 2026 00:39") == fold.offer("Listed Dec 1, 2027 13:05") == "listed @ #, # #:#"
    assert fold.choice("45.00") == "{price}" and fold.offer("45.00") == "#.#"  # the page offers, the model chose


def page(url: str, tree: str, *elements: ElementInfo, title: str = "Shop") -> Observation:
    return Observation(url=url, title=title, tabs=[], tree=tree.strip("\n"), scroll="",
                       elements={element.id: element for element in elements})


def field(id_: str, name: str, text: str = "", value: str | None = None, **attributes: str) -> ElementInfo:
    attrs = dict(attributes)
    if value is not None:
        attrs["value"] = value
    return ElementInfo(id=id_, tag="input", type="text", role="textbox", name=name, text=text, attributes=attrs)


def button(id_: str, text: str, *context: str, **attributes: str) -> ElementInfo:
    return ElementInfo(id=id_, tag="button", role="button", text=text, context=context, attributes=attributes)


def link(id_: str, href: str, text: str) -> ElementInfo:
    return ElementInfo(id=id_, tag="a", role="link", text=text, attributes={"href": href})


def test_a_field_without_a_label_is_named_by_the_text_beside_it():
    observation = page("http://shop/new", """
- form
  - group
    - text: "Price"
    - input-0 (type="text" name="field1")
  - group
    - text: "Quantity"
    - input-1 (type="text" name="field2")
    - text: "pieces"
  - group
    - input-2 (type="checkbox" name="field3")
    - text: "Show in search"
""", field("input-0", "field1"), field("input-1", "field2"),
        ElementInfo(id="input-2", tag="input", type="checkbox", role="checkbox", name="field3"))
    reading = read_page(observation)
    assert (reading.controls["input-0"].before, reading.controls["input-0"].after) == ("Price", "")
    assert (reading.controls["input-1"].before, reading.controls["input-1"].after) == ("Quantity", "pieces")
    assert reading.controls["input-2"].after == "Show in search"
    # swapped labels: the field once beside "Price" is not found as the price field
    view = PageView.of(observation, Normaliser(PARAMS))
    swapped = page("http://shop/new", observation.tree.replace('"Price"', '"@@"').replace('"Quantity"', '"Price"')
                   .replace('"@@"', '"Quantity"'), *observation.elements.values())
    now = PageView.of(swapped, Normaliser(PARAMS))
    assert now.resolve(view.fingerprints["input-0"]) == (None, 'no element like input "price" (type=text, role=textbox, '
                                                              'name=field1) on the page')


SEARCH_EMPTY = """
- form
  - input-0 (type="search" name="sku" value="BOOT-7") "Search"
  - button-0 "Search"
- status "No listings with SKU BOOT-7."
"""
SEARCH_FOUND = """
- form
  - input-0 (type="search" name="sku" value="BOOT-7") "Search"
  - button-0 "Search"
- table
  - row
    - text: "Title"
    - text: "Price"
  - row
    - a-0 (href="/listings/3") "Red boots BOOT-7"
    - text: "$45.00"
"""


def signature_and_view(tree: str, *elements: ElementInfo, params=PARAMS, url: str = "http://shop/listings?q=BOOT-7"):
    fold = Normaliser(params, identifying=("sku", "title"))
    return PageView.of(page(url, tree, *elements), fold)


def test_a_search_that_now_finds_the_item_is_a_difference_of_the_item_not_the_site():
    search = [field("input-0", "sku", "Search", "BOOT-7", type="search"), button("button-0", "Search")]
    recorded = PageSignature.of(signature_and_view(SEARCH_EMPTY, *search))
    assert recorded.keyed  # the URL shows the SKU
    found = signature_and_view(SEARCH_FOUND, *search, link("a-0", "/listings/3", "Red boots BOOT-7"))
    difference = recorded.difference(found)
    assert difference is not None and difference.kind == "item"


def test_a_list_of_records_may_grow_but_the_page_around_it_may_not():
    listing_rows = """
- h1 "My listings"
- a-0 (href="/listings/new") "New listing"
- table
  - row
    - text: "Title"
  - row
    - a-1 (href="/listings/3") "Hat"
"""
    params = {"sku": "BOOT-7", "title": "Red boots BOOT-7"}
    before = PageSignature.of(signature_and_view(listing_rows, link("a-0", "/listings/new", "New listing"),
                                                 link("a-1", "/listings/3", "Hat"), params=params,
                                                 url="http://shop/listings"))
    assert not before.keyed
    grown = listing_rows + '  - row\n    - a-2 (href="/listings/9") "Scarf"\n'
    view = signature_and_view(grown, link("a-0", "/listings/new", "New listing"), link("a-1", "/listings/3", "Hat"),
                              link("a-2", "/listings/9", "Scarf"), params=params, url="http://shop/listings")
    assert before.difference(view) is None
    warned = listing_rows + '- alert "Your account is suspended: listings are hidden."\n'
    view = signature_and_view(warned, link("a-0", "/listings/new", "New listing"), link("a-1", "/listings/3", "Hat"),
                              params=params, url="http://shop/listings")
    assert "says what it did not" in before.difference(view).message
    extra = listing_rows + '- button-0 "Delete all"\n'
    view = signature_and_view(extra, link("a-0", "/listings/new", "New listing"), link("a-1", "/listings/3", "Hat"),
                              button("button-0", "Delete all"), params=params, url="http://shop/listings")
    assert before.difference(view).kind == "site" and "delete all" in before.difference(view).message


def test_an_element_is_found_by_what_it_is_and_never_by_a_guess():
    fold = Normaliser(PARAMS)
    recorded = PageView.of(page("http://shop/d/1", '- form\n  - button-0 "Publish"', button("button-0", "Publish", "form")),
                           fold)
    publish = recorded.fingerprints["button-0"]
    moved = PageView.of(page("http://shop/d/1", '- button-0 "Back"\n- button-1 "Publish"',
                             button("button-0", "Back"), button("button-1", "Publish", "toolbar")), fold)
    assert moved.resolve(publish) == ("button-1", "")
    twice = PageView.of(page("http://shop/d/1", '- form\n  - button-0 "Publish"\n- form\n  - button-1 "Publish"',
                             button("button-0", "Publish", "form"), button("button-1", "Publish", "form")), fold)
    found, why = twice.resolve(publish)
    assert found is None and "nothing tells them apart" in why
    # what tells them apart, shown to the model too: the value a button sends
    by_value = PageView.of(page("http://shop/d/1", '- button-0 (value="draft") "Publish"\n- button-1 "Publish"',
                                button("button-0", "Publish", value="draft"), button("button-1", "Publish")), fold)
    assert by_value.resolve(publish) == ("button-1", "")
    gone = PageView.of(page("http://shop/d/1", '- button-0 "Back"', button("button-0", "Back")), fold)
    assert gone.resolve(publish)[0] is None


FORM = """
- form
  - input-0 (type="text" name="title" value="{title}") "Title"
  - input-1 (type="text" name="price" value="{price}") "Price"
  - button-0 "Publish"
- text: "Price differs from your last listing by 90%"
"""


def test_before_a_submit_the_page_must_show_this_runs_values():
    def view(title: str, price: str, warning: bool = False, params=PARAMS):
        tree = FORM.format(title=title, price=price)
        if not warning:
            tree = tree.replace('- text: "Price differs from your last listing by 90%"\n', "")
        return PageView.of(page("http://shop/new", tree,
                                field("input-0", "title", "Title", title, _form="0"),
                                field("input-1", "price", "Price", price, _form="0"),
                                button("button-0", "Publish", _submit="post", _form="0")),
                           Normaliser(params, identifying=("sku", "title")))

    publish = view("x", "y").observation.elements["button-0"]
    assert is_commit("click", {}, publish) and not is_commit("click", {}, button("b", "Search", _submit="get"))
    assert is_commit("press_key", {"key": "Enter"}, None)
    check = capture_commit(view("Red boots BOOT-7", "45.00"), "button-0", PARAMS, ())
    assert [control.value for control in check.controls] == ["{{param:title}}", "{{param:price}}", None]
    assert verify_commit(check, view("Green hat HAT-1", "9.99", params=OTHER), "button-0", OTHER, ()) is None
    wrong = verify_commit(check, view("Green hat HAT-1", "45.00", params=OTHER), "button-0", OTHER, ())
    assert "shows '45.00', not this run's value" in wrong
    warned = verify_commit(check, view("Green hat HAT-1", "9.99", warning=True, params=OTHER), "button-0", OTHER, ())
    assert "says what it did not" in warned


def test_a_recording_whose_values_cannot_be_told_apart_is_never_checked_as_matching():
    params = {"price": 5, "quantity": 5}
    tree = ('- form\n  - input-0 (type="text" name="a" value="5")\n  - input-1 (type="text" name="b" value="5")\n'
            '  - button-0 "Submit"')
    observation = page("http://shop/new", tree, field("input-0", "a", value="5", _form="0"),
                       field("input-1", "b", value="5", _form="0"),
                       button("button-0", "Submit", _submit="post", _form="0"))
    check = capture_commit(PageView.of(observation, Normaliser(params)), "button-0", params, ())
    assert check.unsure and "fits price, quantity" in check.unsure
    assert verify_commit(check, PageView.of(observation, Normaliser(params)), "button-0", params, ()) == check.unsure


def test_script_keys_name_the_job_not_the_values():
    assert script_key("listing_task", "127.0.0.1:8000", 2).startswith("listing-task.127-0-0-1-8000.v2-")
    assert script_key("listing-task", "shop", 1) == "listing-task.shop.v1"
    assert script_key("a b", "shop") != script_key("a-b", "shop")  # a hash keeps slugged names apart
    with pytest.raises(ConfigError, match="replay host"):
        script_key("job", "  ")


def test_the_store_names_a_script_it_cannot_read_and_records_an_older_one_afresh(tmp_path):
    store = ScriptStore(LocalSessionStore(tmp_path))
    store.save(ReplayScript(key="job.shop.v1", steps=[]))
    assert store.keys() == ["job.shop.v1"] and store.load("job.shop.v1").revision == 1
    path = tmp_path / "scripts" / "job.shop.v1.json"
    path.write_text(json.dumps({"schema_version": 99, "key": "job.shop.v1", "steps": []}))
    with pytest.raises(SessionFormatError, match="schema_version 99.*Delete it"):
        store.load("job.shop.v1")
    path.write_text(json.dumps({"schema_version": 2, "key": "job.shop.v1", "steps": [{"page": 3}]}))
    assert store.load("job.shop.v1") is None  # an older webtask's script: checked less, recorded afresh
    path.write_text(json.dumps({"schema_version": 3, "key": "job.shop.v1", "steps": [{"page": 3}]}))
    with pytest.raises(SessionFormatError, match="malformed"):
        store.load("job.shop.v1")
    assert store.delete("job.shop.v1") and store.load("job.shop.v1") is None and not store.delete("job.shop.v1")


def test_where_a_value_sits_in_a_text_is_found_the_same_run_by_run_as_character_by_character():
    """``binding._spaced`` (a page's text casefolded, each run of whitespace one space, and where each
    character came from) folds whole runs now; the answer is the character-by-character one's."""
    import random
    import re

    from webtask_core.replay import binding

    def by_character(text: str) -> tuple[str, list[int]]:
        out: list[str] = []
        where: list[int] = []
        for match in re.finditer(r"\s+|\S", text):
            piece = " " if match.group(0).isspace() else match.group(0).casefold()
            out.extend(piece)
            where.extend([match.start()] * len(piece))
        return "".join(out), [*where, len(text)]

    chosen = random.Random(29)
    texts = ["", " ", "Blue  suede\nshoes", "Straße\tİstanbul  ﬁne", "ΣΑΣ ς", "a\u00a0b\u2003 c\n\n  d"]
    for alphabet in ("abXY ß\n\t  İﬁΣς1-.\u00a0\u2003", "abXY \n\t  Σς1-.\u00a0"):
        texts += ["".join(chosen.choice(alphabet) for _ in range(chosen.randint(0, 50))) for _ in range(500)]
    for text in texts:
        assert binding._spaced(text) == by_character(text), repr(text)
