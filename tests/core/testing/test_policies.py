"""Scripted policies decide from hand-written requests (docs/internals.md §3), one page at a time."""

from __future__ import annotations

import threading

import pytest
from listing_requests import (
    CONFIRM_TREE,
    FOUND_TREE,
    LISTING,
    LISTING_PAGE_TREE,
    LISTINGS_TREE,
    LOGIN_TREE,
    NAV,
    NO_RESULTS_TREE,
    PLAIN_OUTPUT_TOOL,
    SITE,
    build_request,
    form_tree,
)

from webtask_core.testing.policies import MarketplaceListingPolicy, ReplayPolicy
from webtask_core.testing.replies import Reply, ToolUse


def _calls(reply: Reply) -> list[tuple[str, object]]:
    return [(use.name, use.input) for use in reply.tool_uses]


def _abort_reason(reply: Reply) -> str:
    [use] = reply.tool_uses
    assert use.name == "abort"
    return use.input["reason"]


# ---- ReplayPolicy ---------------------------------------------------------------------------------


def test_replay_policy_replays_then_aborts() -> None:
    two_calls = Reply(text="both", tool_uses=[ToolUse("click", {"element_id": "a-1"}), ToolUse("go_back")])
    policy = ReplayPolicy([ToolUse("navigate", {"url": "http://x"}), two_calls])
    request = build_request(SITE, "")
    assert _calls(policy(request)) == [("navigate", {"url": "http://x"})]
    assert policy(request) is two_calls
    assert policy.remaining == 0
    assert _abort_reason(policy(request)) == "replay exhausted"
    assert _abort_reason(policy(request)) == "replay exhausted"
    assert policy.calls == 4


def test_replay_policy_is_safe_across_threads() -> None:
    policy = ReplayPolicy([ToolUse("wait_for", {"text": str(n)}) for n in range(50)])
    seen: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(10):
            reply = policy({})
            with lock:
                seen.append(reply.tool_uses[0].input.get("text", "exhausted"))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(text for text in seen if text != "exhausted") == sorted(str(n) for n in range(50))
    assert seen.count("exhausted") == 10


def test_replay_policy_rejects_other_items() -> None:
    with pytest.raises(TypeError, match="item 1 is dict"):
        ReplayPolicy([ToolUse("go_back"), {"name": "click"}])  # type: ignore[list-item]


# ---- MarketplaceListingPolicy: the happy path, page by page --------------------------------------


def test_logs_in_with_the_placeholder_unchanged() -> None:
    reply = MarketplaceListingPolicy()(build_request(f"{SITE}/login?next=/listings", LOGIN_TREE))
    assert _calls(reply) == [
        ("fill", {"element_id": "input-0", "text": "demo"}),
        ("fill", {"element_id": "input-1", "text": "{{secret:shop_password}}"}),
        ("click", {"element_id": "button-0"}),
    ]


def test_starts_from_a_blank_page_at_the_site_url() -> None:
    policy = MarketplaceListingPolicy()
    reply = policy(build_request("about:blank", "", data={**LISTING, "site_url": f"{SITE}/listings"}))
    assert _calls(reply) == [("navigate", {"url": f"{SITE}/listings"})]
    assert "names no site" in _abort_reason(policy(build_request("about:blank", "")))


def test_accepts_cookies_and_searches_the_sku_first() -> None:
    reply = MarketplaceListingPolicy()(build_request(f"{SITE}/listings", LISTINGS_TREE))
    assert _calls(reply) == [
        ("click", {"element_id": "button-2"}),  # the cookie banner's Accept
        ("fill", {"element_id": "input-0", "text": "SHOE-001"}),
        ("click", {"element_id": "button-1"}),
    ]


def test_not_listed_yet_opens_the_new_listing_form() -> None:
    reply = MarketplaceListingPolicy()(build_request(f"{SITE}/listings?sku=SHOE-001", NO_RESULTS_TREE))
    assert _calls(reply) == [("click", {"element_id": "a-2"})]


def test_already_listed_reports_the_existing_listing() -> None:
    reply = MarketplaceListingPolicy()(build_request(f"{SITE}/listings?sku=shoe-001", FOUND_TREE))
    assert _calls(reply) == [
        ("set_output", {"listing_url": f"{SITE}/listings/7", "sku": "SHOE-001"}),
        ("complete", {"feedback": f"SKU SHOE-001 is already listed at {SITE}/listings/7; nothing new was created."}),
    ]


def test_fills_the_form_and_uploads_by_resource_name() -> None:
    reply = MarketplaceListingPolicy()(build_request(f"{SITE}/listings/new", form_tree()))
    assert _calls(reply) == [
        ("fill", {"element_id": "input-1", "text": "Blue suede shoes"}),
        ("fill", {"element_id": "textarea-0", "text": "Worn twice.\nSize 8."}),
        ("fill", {"element_id": "input-6", "text": "45"}),
        ("select_option", {"element_id": "select-0", "option": "Women's Shoes"}),
        ("check", {"element_id": "input-3", "checked": True}),
        ("fill", {"element_id": "input-7", "text": "SHOE-001"}),
        ("upload", {"element_id": "input-0", "resources": ["listing_image_1", "listing_image_2"]}),
        ("wait_for", {"text": "2 photos ready", "timeout_s": 10}),
    ]


def test_waits_while_previews_are_prepared_then_clicks_next() -> None:
    policy = MarketplaceListingPolicy()
    preparing = policy(build_request(f"{SITE}/listings/new", form_tree("Preparing 2 photos…", next_disabled=True)))
    assert _calls(preparing) == [("wait_for", {"text": "2 photos ready", "timeout_s": 10})]
    ready = policy(build_request(f"{SITE}/listings/new", form_tree("2 photos ready")))
    assert _calls(ready) == [("click", {"element_id": "button-1"})]


def test_publishes_from_the_confirmation_page() -> None:
    reply = MarketplaceListingPolicy()(build_request(f"{SITE}/listings/drafts/ab12", CONFIRM_TREE))
    assert _calls(reply) == [("click", {"element_id": "button-1"})]


def test_reports_the_new_listing_url_through_set_output() -> None:
    reply = MarketplaceListingPolicy()(build_request(f"{SITE}/listings/12?published=1", LISTING_PAGE_TREE))
    assert _calls(reply) == [
        ("set_output", {"listing_url": f"{SITE}/listings/12", "sku": "SHOE-001"}),
        ("complete", {"feedback": f"Listed SKU SHOE-001 at {SITE}/listings/12."}),
    ]


def test_a_listing_page_reached_later_is_reported_as_already_listed() -> None:
    reply = MarketplaceListingPolicy()(build_request(f"{SITE}/listings/12", LISTING_PAGE_TREE))
    assert reply.tool_uses[1].input == {
        "feedback": f"SKU SHOE-001 is already listed at {SITE}/listings/12; nothing new was created."
    }


def test_set_output_without_a_caller_schema_wraps_the_result() -> None:
    request = build_request(f"{SITE}/listings/12", LISTING_PAGE_TREE, tools=[PLAIN_OUTPUT_TOOL])
    reply = MarketplaceListingPolicy()(request)
    assert reply.tool_uses[0].input == {"output": {"listing_url": f"{SITE}/listings/12", "sku": "SHOE-001"}}


def test_other_pages_lead_back_to_my_listings() -> None:
    help_page = MarketplaceListingPolicy()(build_request(f"{SITE}/help", NAV + '\n- h1 "Help"'))
    assert _calls(help_page) == [("click", {"element_id": "a-1"})]
    wrong_listing = LISTING_PAGE_TREE.replace("SHOE-001", "HAT-9")
    assert _calls(MarketplaceListingPolicy()(build_request(f"{SITE}/listings/3", wrong_listing))) == [
        ("click", {"element_id": "a-1"})
    ]


# ---- modes and failures ---------------------------------------------------------------------------


def test_login_only_completes_once_logged_in() -> None:
    policy = MarketplaceListingPolicy(login_only=True)
    data = {"username": "demo", "password": "pw"}
    assert _calls(policy(build_request(f"{SITE}/login", LOGIN_TREE, data=data)))[2] == ("click", {"element_id": "button-0"})
    assert _calls(policy(build_request(f"{SITE}/listings", LISTINGS_TREE, data=data))) == [
        ("complete", {"feedback": "Logged in as demo."})
    ]


def test_a_task_without_a_sku_is_a_login_task() -> None:
    policy = MarketplaceListingPolicy(abort_on_sku={"shoe-001"})  # no SKU, nothing to abort
    data = {"username": "demo", "password": "{{secret:shop_password}}", "site_url": SITE}
    assert _calls(policy(build_request(f"{SITE}/login", LOGIN_TREE, data=data))) == [
        ("fill", {"element_id": "input-0", "text": "demo"}),
        ("fill", {"element_id": "input-1", "text": "{{secret:shop_password}}"}),
        ("click", {"element_id": "button-0"}),
    ]
    # Logged in (or already logged in from stored cookies): done, without searching or listing.
    assert _calls(policy(build_request(f"{SITE}/listings", LISTINGS_TREE, data=data))) == [
        ("complete", {"feedback": "Logged in as demo."})
    ]
    assert _calls(policy(build_request("about:blank", "", data=data))) == [("navigate", {"url": SITE})]
    assert _abort_reason(policy(build_request(f"{SITE}/login", LOGIN_TREE, data={"username": "demo"}))) == \
        "the task's login data lacks password"


def test_abort_on_sku() -> None:
    policy = MarketplaceListingPolicy(abort_on_sku={"shoe-001"})
    assert _abort_reason(policy(build_request(f"{SITE}/listings", LISTINGS_TREE))) == \
        "told to abort the listing of SKU SHOE-001"
    other = {**LISTING, "sku": "HAT-9"}
    assert policy(build_request(f"{SITE}/listings", LISTINGS_TREE, data=other)).tool_uses[0].name == "click"


def test_rejected_credentials_abort() -> None:
    tree = LOGIN_TREE + '\n- text: "Incorrect username or password."'
    assert "username or password" in _abort_reason(MarketplaceListingPolicy()(build_request(f"{SITE}/login", tree)))


def test_bad_task_data_aborts_with_the_reason() -> None:
    policy = MarketplaceListingPolicy()
    no_json = build_request(f"{SITE}/listings", LISTINGS_TREE, task="<task>List something.</task>")
    assert "no ```json" in _abort_reason(policy(no_json))
    partial = {key: value for key, value in LISTING.items() if key not in ("price", "photos")}
    assert _abort_reason(policy(build_request(f"{SITE}/listings", LISTINGS_TREE, data=partial))) == \
        "the task's listing data lacks price, photos"


def test_unknown_photo_resource_aborts_before_uploading() -> None:
    request = build_request(f"{SITE}/listings/new", form_tree(), resources=("listing_image_1",))
    assert "listing_image_2" in _abort_reason(MarketplaceListingPolicy()(request))


def test_a_failed_action_is_retried_from_the_fresh_page() -> None:
    url = f"{SITE}/listings/new"
    failed = ("select_option", {"element_id": "select-0", "option": "Women's Shoes"}, "select-0 is stale", True)
    reply = MarketplaceListingPolicy()(build_request(url, form_tree(), turns=[(url, [failed])]))
    assert [name for name, _ in _calls(reply)][-2:] == ["upload", "wait_for"]


def test_repeated_failures_abort() -> None:
    url = f"{SITE}/listings/new"
    failed = ("click", {"element_id": "button-1"}, "button-1 is disabled", True)
    request = build_request(url, form_tree(), turns=[(url, [failed])] * 3)
    assert _abort_reason(MarketplaceListingPolicy()(request)) == \
        "the last 3 attempts failed; last error: button-1 is disabled"
    assert MarketplaceListingPolicy(max_failed_turns=4)(request).tool_uses[0].name == "fill"


def test_site_validation_errors_refill_once_then_abort() -> None:
    url = f"{SITE}/listings/new"
    tree = form_tree(price_error="Price must be greater than $0.", title="Blue suede shoes", price="-5")
    data = {**LISTING, "price": -5}
    fill_turn = (url, [("fill", {"element_id": "input-1", "text": "x"}, "filled", False)])
    next_turn = (url, [("click", {"element_id": "button-1"}, "clicked; page reloaded", False)])

    first_rejection = build_request(url, tree, data=data, turns=[fill_turn, next_turn])
    assert _calls(MarketplaceListingPolicy()(first_rejection))[2] == ("fill", {"element_id": "input-6", "text": "-5"})

    second_rejection = build_request(url, tree, data=data, turns=[fill_turn, next_turn, fill_turn, next_turn])
    assert _abort_reason(MarketplaceListingPolicy()(second_rejection)) == \
        "the marketplace rejected the listing: Price must be greater than $0."
