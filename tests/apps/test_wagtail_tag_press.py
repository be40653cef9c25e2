"""An Enter meant to add a typed tag, pressed while Wagtail's tag-it suggestion list is still open from a
search for fewer letters (replay types faster than the list's 300 ms search delay under load): tag-it
ignores Enter while its list is open, and jQuery UI's Escape puts back the term the list was searched
for. ``item_press.confirm_item_added`` must end with exactly the typed tag added once: the list's
option that says it is picked; with no such option, the tag typed again over the term Escape put back,
then Enter — never the shorter term as a tag, never a second copy."""

from __future__ import annotations

import pytest
from app_process import DjangoAppProcess
from wagtail_site.shop import SECTION, STAFF_PASSWORD, STAFF_USERNAME

from webtask_core.browser import Browser, BrowserTab
from webtask_core.browser.item_press import confirm_item_added, item_field

pytestmark = [pytest.mark.slow, pytest.mark.apps, pytest.mark.timeout(300)]

MENU = "ul.ui-autocomplete"


def shop_has_tags(shop: DjangoAppProcess) -> None:
    shop.query("from taggit.models import Tag\nfor name in ('leather', 'leatherette'): "
               "Tag.objects.get_or_create(name=name)\nprint(Tag.objects.count())")


async def open_editor_tags(shop: DjangoAppProcess, browser: Browser) -> BrowserTab:
    """A new product page's editor, logged in, with the focus in its (empty) tag field."""
    parent = shop.query(f"from wagtail.models import Page\nprint(Page.objects.get(title={SECTION!r}).id)")
    assert isinstance(parent, int), parent
    tab = await browser.new_tab()
    page = tab.page
    assert page is not None
    await page.goto(shop.url("/admin/login/"))
    await page.fill("input[name=username]", STAFF_USERNAME)
    await page.fill("input[name=password]", STAFF_PASSWORD)
    async with page.expect_navigation():
        await page.click("button[type=submit]")
    await page.goto(shop.url(f"/admin/pages/add/products/productpage/{parent}/"))
    await page.click(".tagit-new input")
    return tab


async def press_enter_while_the_list_is_open_for_fewer_letters(tab: BrowserTab, first: str, rest: str,
                                                               *, search_delay_ms: int = 300) -> str:
    """``search_delay_ms``: jQuery UI's delay before it searches for what was typed since (300 ms by
    default; a busy machine's replay can take longer than that between its last key and Escape)."""
    page = tab.page
    assert page is not None
    await page.keyboard.type(first)
    await page.locator(MENU).wait_for(state="visible", timeout=10_000)  # the list for `first` is open
    await page.evaluate("(delay) => $('.tagit-new input').autocomplete('option', 'delay', delay)", search_delay_ms)
    await page.keyboard.type(rest)
    before = await item_field(page, first + rest)
    await page.keyboard.press("Enter")  # before the search for the whole tag could start
    return await confirm_item_added(page, "Enter", first + rest, before)


async def tags_of(tab: BrowserTab) -> list[str]:
    assert tab.page is not None
    return await tab.page.evaluate("() => $('[data-controller=w-tag]').tagit('assignedTags')")


@pytest.mark.parametrize(("first", "rest", "search_delay_ms", "note"), [
    # an existing tag: its option in the list is picked
    ("leathe", "r", 300, "picked 'leather' in the list"),
    # the search for the whole tag not started before Escape: Escape puts back what the list is for
    ("leath", "ery", 5000, "put back 'leath' (typed 'leathery' again)"),
    # a new tag whose letters begin longer ones: never taken from their list
    ("leat", "h", 300, "pressed again"),
], ids=["existing-tag-picked", "typed-again-over-the-term", "new-tag-not-taken-from-the-list"])
async def test_the_typed_tag_is_added_once_whatever_the_list_enter_found_open(
        wagtail_shop: DjangoAppProcess, browser: Browser, first: str, rest: str, search_delay_ms: int, note: str) -> None:
    shop_has_tags(wagtail_shop)
    tab = await open_editor_tags(wagtail_shop, browser)
    try:
        said = await press_enter_while_the_list_is_open_for_fewer_letters(tab, first, rest,
                                                                          search_delay_ms=search_delay_ms)
        assert await tags_of(tab) == [first + rest], said  # never the shorter term, nor a longer suggestion
        assert note in said
    finally:
        await tab.close()
