"""What grows with the user's own work, on real pages the Cartridge replay test does not replay
(issue 25 §4, a second example of each class the replay test met, with no new code).

Mezzanine's blog-post editor shows the same keyword field as the product form, and Django's date
navigation heads the blog's changelist. A page read before the shop knew these keywords (or had
these posts) — the editor with its "Meta data" opened, as the replay opens it — is the same page, to
replay, once the keyword links ("+…") and the date links with their way back ("‹ All dates") came
with the records; and a field gone from that page is still a change. The records are made through
the shop's own ORM (``manage.py shell``), the pages read in a real Chromium.
"""

from __future__ import annotations

import pytest
from app_process import DjangoAppProcess
from cartridge_case import STAFF_PASSWORD, STAFF_USERNAME

from webtask_core.browser import Browser, BrowserTab
from webtask_core.replay.folding import Normaliser
from webtask_core.replay.signature import PageSignature, PageView

pytestmark = [pytest.mark.apps, pytest.mark.timeout(300)]

# Words no product or post of the other tests uses: the records this test makes are its own.
KEYWORDS = ("zz-growth-walnut", "zz-growth-linen")
POSTS = (("Growth walnut notes", "2031-06-03 10:00"), ("Growth linen notes", "2031-07-19 16:30"))

_MAKE = """
import json
from datetime import datetime
from django.utils import timezone
from mezzanine.blog.models import BlogPost
from mezzanine.generic.models import AssignedKeyword, Keyword
made = []
for word in {keywords!r}:
    made.append(Keyword.objects.get_or_create(title=word)[0].title)
for title, when in {posts!r}:  # the posts' changelist filters by keyword once a keyword exists: made first
    post, _ = BlogPost.objects.get_or_create(title=title, defaults=dict(user_id=1))
    post.publish_date = timezone.make_aware(datetime.strptime(when, "%Y-%m-%d %H:%M"))
    post.save()
    made.append(post.title)
print(json.dumps(made))
"""


async def _logged_in(browser: Browser, shop: DjangoAppProcess, username: str = STAFF_USERNAME,
                     password: str = STAFF_PASSWORD) -> BrowserTab:
    """A tab logged in to the admin at /admin/login/ (Mezzanine's by default, or Wagtail's)."""
    tab = await browser.new_tab()
    assert tab.page is not None
    await tab.page.goto(shop.url("/admin/login/"))
    await tab.page.fill("input[name=username]", username)
    await tab.page.fill("input[name=password]", password)
    await tab.page.click("[type=submit]")
    await tab.page.wait_for_url("**/admin/**")
    return tab


async def _view(tab: BrowserTab, url: str, normalise: Normaliser, *, open_section: str = "") -> PageView:
    """The page at ``url`` as replay reads it (``open_section``: a collapsed fieldset opened first)."""
    assert tab.page is not None
    await tab.page.goto(url)
    # settled as a step waits for a page (not Playwright's "networkidle": Wagtail's admin under load
    # kept a request going for the 20 s of its bound)
    await tab.wait_for(timeout_s=15)
    if open_section:
        await tab.page.get_by_text(open_section, exact=True).click()
        await tab.page.wait_for_timeout(500)  # the fieldset's slide
    return PageView.of(await tab.observe(), normalise)


async def test_keyword_links_and_date_navigation_that_came_with_records_are_no_change_of_the_page(
        cartridge_shop: DjangoAppProcess, browser: Browser) -> None:
    normalise = Normaliser({"title": "Growth test post", "sku": "GROWTH-1"}, identifying=("sku", "title"))
    add, changelist = cartridge_shop.url("/admin/blog/blogpost/add/"), cartridge_shop.url("/admin/blog/blogpost/")
    tab = await _logged_in(browser, cartridge_shop)
    try:
        add_before = await _view(tab, add, normalise, open_section="Meta data")
        made = cartridge_shop.query(_MAKE.format(keywords=KEYWORDS, posts=()))
        assert made == list(KEYWORDS), made

        # The editor now offers the new keywords as links after the keyword field: the same page.
        add_after = await _view(tab, add, normalise, open_section="Meta data")
        shown = {element.text for element in add_after.observation.elements.values() if element.tag == "a"}
        assert {f"+{word}" for word in KEYWORDS} <= shown, sorted(shown)
        assert PageSignature.of(add_before).difference(add_after) is None

        list_before = await _view(tab, changelist, normalise)
        made = cartridge_shop.query(_MAKE.format(keywords=(), posts=POSTS))
        assert made == [title for title, _ in POSTS], made
        # The changelist now has the posts and Django's date navigation (drilled into 2031: June and
        # July, with its "‹ All dates" back): content that came with the records, not a change of the page.
        list_after = await _view(tab, changelist, normalise)
        links = {element.text for element in list_after.observation.elements.values() if element.tag == "a"}
        assert "‹ All dates" in links, sorted(links)
        assert PageSignature.of(list_before).difference(list_after) is None

        # A field the recording knew, gone from the editor beside the new links, is still a change.
        await _view(tab, add, normalise, open_section="Meta data")
        assert tab.page is not None
        await tab.page.evaluate("document.querySelector('[name=keywords_1]').remove()")
        removed = PageView.of(await tab.observe(), normalise)
        difference = PageSignature.of(add_before).difference(removed)
        assert difference is not None and difference.kind == "site" and "keywords_1" in difference.message, difference
    finally:
        cleanup = ("from mezzanine.blog.models import BlogPost; from mezzanine.generic.models import Keyword; "
                   f"BlogPost.objects.filter(title__in={[title for title, _ in POSTS]!r}).delete(); "
                   f"Keyword.objects.filter(title__in={list(KEYWORDS)!r}).delete(); import json; print(json.dumps(1))")
        cartridge_shop.query(cleanup)
        await tab.close()



_DOCUMENT = """
import json
from django.core.files.base import ContentFile
from wagtail.documents.models import Document
{action}
print(json.dumps(Document.objects.count()))
"""
_NO_DOCUMENTS = "Document.objects.all().delete()"
_ONE_DOCUMENT = "Document.objects.create(title='Care guide', file=ContentFile(b'care', name='care.txt'))"
# A collection of its own: the session's shop holds the replay tests' images, which stay.
_IMAGES = """
import io, json
from django.core.files.images import ImageFile
from PIL import Image as Picture
from wagtail.images.models import Image
from wagtail.models import Collection
collection = Collection.objects.filter(name="Growth test").first()
if collection is None:
    collection = Collection.get_first_root_node().add_child(name="Growth test")
{action}
print(json.dumps([collection.id, Image.objects.filter(collection=collection).count()]))
"""
_ONE_IMAGE = """
data = io.BytesIO()
Picture.new("RGB", (40, 30), (200, 40, 40)).save(data, "PNG")
Image.objects.create(title="Growth swatch", collection=collection, file=ImageFile(data, name="growth-swatch.png"))
"""
_NO_IMAGES = "Image.objects.filter(collection=collection).delete()"


async def test_a_list_that_grew_from_its_empty_state_to_one_record_is_no_change_of_the_page(
        wagtail_shop: DjangoAppProcess, browser: Browser) -> None:
    # The replay test's image chooser (empty when recorded, the recording's image alone when replayed)
    # on other pages of the same app: Wagtail's images of a collection, a grid where a list of one is no
    # list, and its documents, a table; each read while it had none ("You haven't uploaded any ... Why
    # not upload one now?") and with its first.
    normalise = Normaliser({"title": "Growth test", "sku": "GROWTH-2"}, identifying=("sku", "title"))
    from wagtail_site.shop import STAFF_PASSWORD as WAGTAIL_PASSWORD
    from wagtail_site.shop import STAFF_USERNAME as WAGTAIL_USERNAME
    tab = await _logged_in(browser, wagtail_shop, WAGTAIL_USERNAME, WAGTAIL_PASSWORD)
    assert tab.page is not None
    try:
        collection, count = wagtail_shop.query(_IMAGES.format(action=_NO_IMAGES))
        wagtail_shop.query(_DOCUMENT.format(action=_NO_DOCUMENTS))
        assert count == 0
        pages = ((f"/admin/images/?collection_id={collection}", _IMAGES.format(action=_ONE_IMAGE)),
                 ("/admin/documents/", _DOCUMENT.format(action=_ONE_DOCUMENT)))
        for path, make in pages:
            empty = await _view(tab, wagtail_shop.url(path), normalise)
            assert "upload one now" in empty.observation.tree.casefold(), empty.observation.tree
            wagtail_shop.query(make)
            one = await _view(tab, wagtail_shop.url(path), normalise)
            difference = PageSignature.of(empty).difference(one)
            assert difference is None, (path, difference, one.observation.tree)
            # the search field gone beside the first record is still a change
            await tab.page.evaluate("document.querySelector('input[name=q]').remove()")
            difference = PageSignature.of(empty).difference(PageView.of(await tab.observe(), normalise))
            assert difference is not None and difference.kind == "site" and "lacks" in difference.message, difference
    finally:
        wagtail_shop.query(_IMAGES.format(action=_NO_IMAGES))
        wagtail_shop.query(_DOCUMENT.format(action=_NO_DOCUMENTS))
        await tab.close()
