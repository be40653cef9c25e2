"""request_view reads only the request body, in the shapes of docs/internals.md §2 and §3."""

from __future__ import annotations

import pytest
from listing_requests import LISTING, LISTINGS_TREE, LOGIN_TREE, SITE, build_request, form_tree, task_block

from webtask_core.testing.request_view import (
    error_streak,
    find_element,
    last_tool_results,
    latest_page,
    latest_page_attributes,
    latest_url,
    page_urls,
    resource_names,
    task_json,
    task_text,
    tree_elements,
)

# The iframe line ends in a space (\x20, so that editors keep it).
CONTRACT_EXAMPLE = """- h1 "New listing"
- label "Price"
 - input-2 (type="text" name="price" placeholder="Enter price" value="45")
- select-0 (name="category" value="Shoes") "Category"
- input-5 (type="radio" name="condition" value="new" checked) "New with tags"
- input-7 (type="file" name="photos" multiple hidden) "Add photos"
- button-3 "Next" (disabled)
- iframe "Payment"\x20
 - input-9 (type="text" name="card")"""


def _two_step_request():
    return build_request(
        f"{SITE}/listings", LISTINGS_TREE,
        turns=[(f"{SITE}/login?next=/listings", [
            ("fill", {"element_id": "input-0", "text": "demo"}, "filled input-0", False),
            ("fill", {"element_id": "input-1", "text": "pw"}, "filled input-1", False),
            ("click", {"element_id": "button-2"}, "clicked button-2; navigated to /listings", False),
        ])],
    )


def test_latest_page_is_the_current_tree_not_a_collapsed_one() -> None:
    request = _two_step_request()
    assert latest_page(request) == LISTINGS_TREE
    assert latest_url(request) == f"{SITE}/listings"
    assert latest_page_attributes(request)["step"] == "2"
    assert page_urls(request) == [f"{SITE}/login?next=/listings", f"{SITE}/listings"]


def test_page_attributes_are_unescaped_and_may_hold_angle_brackets() -> None:
    request = build_request("x", "- h1 \"Hi\"")
    block = request["messages"][-1]["content"][-3]
    block["text"] = ('<page url="http://h/a?x=1&amp;y=&quot;2&quot;" title="A > B" step="1">\n'
                     '- button-0 "Go"\n</page>')
    assert latest_url(request) == 'http://h/a?x=1&y="2"'
    assert latest_page_attributes(request)["title"] == "A > B"
    assert latest_page(request) == '- button-0 "Go"'


def test_missing_page_is_a_clear_error() -> None:
    request = {"messages": [{"role": "user", "content": "<task>hi</task>"}]}
    with pytest.raises(ValueError, match="no <page"):
        latest_page(request)
    with pytest.raises(ValueError, match="no messages"):
        latest_url({"messages": []})


def test_task_text_and_json() -> None:
    request = _two_step_request()
    assert task_text(request).startswith("List this item on the marketplace.")
    assert task_json(request) == LISTING

    # The current task is the last <task> of the first message (earlier tasks come first).
    later = build_request(f"{SITE}/listings", LISTINGS_TREE, task="<task>old</task>\n" + task_block({"sku": "B"}))
    assert task_json(later) == {"sku": "B"}


def test_task_without_json_block_is_a_clear_error() -> None:
    request = build_request(f"{SITE}/listings", LISTINGS_TREE, task="<task>Just log in.</task>")
    assert task_text(request) == "Just log in."
    with pytest.raises(ValueError, match="no ```json"):
        task_json(request)
    broken = build_request(f"{SITE}/listings", LISTINGS_TREE, task="<task>\n```json\n{nope\n```\n</task>")
    with pytest.raises(ValueError, match="not valid JSON"):
        task_json(broken)


def test_resource_names() -> None:
    assert resource_names(_two_step_request()) == ["listing_image_1", "listing_image_2"]
    assert resource_names(build_request(f"{SITE}/", "", resources=())) == []


def test_last_tool_results_are_named_by_their_tool_use() -> None:
    request = build_request(
        f"{SITE}/listings/new", form_tree(),
        turns=[(f"{SITE}/listings/new", [
            ("fill", {"element_id": "input-1", "text": "T"}, "filled", False),
            ("upload", {"element_id": "input-0", "resources": ["x"]}, "unknown resource 'x'", True),
        ])],
    )
    assert last_tool_results(request) == [("fill", False, "filled"), ("upload", True, "unknown resource 'x'")]
    name, is_error, _text = last_tool_results(request)[1]
    assert (name, is_error) == ("upload", True)
    # Plain-string content is read too.
    request["messages"][-1]["content"][0]["content"] = "ok"
    assert last_tool_results(request)[0].text == "ok"
    assert last_tool_results(build_request(f"{SITE}/", "")) == []


def test_error_streak_counts_the_trailing_failed_turns() -> None:
    ok = ("click", {"element_id": "button-1"}, "clicked", False)
    bad = ("click", {"element_id": "button-1"}, "button-1 is disabled", True)
    url = f"{SITE}/listings/new"
    assert error_streak(build_request(url, "", turns=[(url, [ok])])) == 0
    assert error_streak(build_request(url, "", turns=[(url, [bad]), (url, [ok]), (url, [bad]), (url, [bad])])) == 2


def test_tree_elements_parse_the_contract_example() -> None:
    elements = {element.id: element for element in tree_elements(CONTRACT_EXAMPLE)}
    assert list(elements) == ["input-2", "select-0", "input-5", "input-7", "button-3", "input-9"]
    price = elements["input-2"]
    assert price.attributes == {"type": "text", "name": "price", "placeholder": "Enter price", "value": "45"}
    assert (price.label, price.depth, price.tag) == ("Price", 1, "input")
    assert elements["input-5"].has("checked") and elements["input-5"].text == "New with tags"
    assert elements["input-7"].has("hidden") and elements["input-7"].has("multiple")
    assert elements["button-3"].text == "Next" and elements["button-3"].has("disabled")
    assert elements["input-9"].label == ""  # under an iframe line, not a label


def test_tree_elements_handle_escaped_quotes() -> None:
    [element] = tree_elements('- input-0 (type="text" name="q" value="say \\"hi\\"") "Say \\"hi\\" (now)"')
    assert element.attributes["value"] == 'say "hi"'
    assert element.text == 'Say "hi" (now)'


def test_find_element() -> None:
    assert find_element(CONTRACT_EXAMPLE, name="price") == "input-2"
    assert find_element(CONTRACT_EXAMPLE, text="price") == "input-2"  # through its label
    assert find_element(CONTRACT_EXAMPLE, type="file") == "input-7"
    assert find_element(CONTRACT_EXAMPLE, tag="button", text="next") == "button-3"
    assert find_element(CONTRACT_EXAMPLE, type="radio", text="New with") == "input-5"
    assert find_element(CONTRACT_EXAMPLE, tag="select", name="category") == "select-0"
    assert find_element(CONTRACT_EXAMPLE, name="price", type="radio") is None
    assert find_element(CONTRACT_EXAMPLE, text="Payment") is None  # frames are context, not elements
    assert find_element(LOGIN_TREE, tag="button", text="Log in") == "button-0"
    assert find_element(LISTINGS_TREE, tag="a", text="New listing") == "a-2"
    # Text lines are never interactive.
    assert find_element(LISTINGS_TREE, text="no listings yet") is None
