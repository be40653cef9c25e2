"""How a link's href shows in the tree (links.py, docs/internals.md §2): hand-made items, no browser."""

from __future__ import annotations

from webtask_core.browser.tree import FrameItems, stitch_tree


def link(href: str, text: str = "") -> list:
    return ["a", ["href", href], text, None]


def lines(page_url: str, *links: list, frames: dict[str, FrameItems] | None = None) -> list[str]:
    tree = stitch_tree({"": FrameItems(key="", items=list(links)), **(frames or {})}, page_url=page_url)
    return tree.text.splitlines()


def test_same_site_urls_show_their_path():
    shown = lines("http://docs.test/library/tarfile.html",
                  link("http://docs.test/library/os.html", "Operating system interfaces"),
                  link("http://docs.test/reference/import.html", "The import system"),
                  link("https://elsewhere.test/os.html", "os"))
    assert shown == ['- a-0 (href="/library/os.html") "Operating system interfaces"',
                     '- a-1 (href="/reference/import.html") "The import system"',
                     '- a-2 (href="https://elsewhere.test/os.html") "os"']  # another site: said in full


def test_an_href_whose_words_the_text_holds_is_left_out_and_the_element_keeps_it():
    tree = stitch_tree({"": FrameItems(key="", items=[
        link("builtins.html#object", "builtins.object"),
        link("tarfile.html#TarError", "TarError"),  # "tarfile" is the page's own name
        link("builtins.html#Exception", "Exception"),  # "builtins" is not in the text: the page says where
        link("/listings/12", "Vintage boots"),
        link("/listings/13"),  # no text: the href is all the model knows
    ])}, page_url="http://docs.test/tarfile.html")
    assert tree.text.splitlines() == ['- a-0 "builtins.object"', '- a-1 "TarError"',
                                      '- a-2 (href="builtins.html") "Exception"',
                                      '- a-3 (href="/listings/12") "Vintage boots"', '- a-4 (href="/listings/13")']
    assert tree.elements["a-0"].attributes["href"] == "builtins.html#object"  # replay and read-back read this


def test_query_parameters_repeated_alike_on_every_link_are_left_out_and_differing_ones_stay():
    shown = lines("http://shop.test/search",
                  link("/search?q=boots&lang=en&page=2", "Next"), link("/search?q=boots&lang=en&page=3", "3"),
                  link("/help?lang=en", "Help"), link("/item/9?ref=mail", "Scarf"))
    # q=boots and lang=en are alike wherever they stand: only the page number tells the two apart.
    assert shown == ['- a-0 (href="/search?page=2") "Next"', '- a-1 (href="/search?page=3") "3"',
                     '- a-2 "Help"',  # ?lang=en went, and the text says the rest
                     '- a-3 (href="/item/9?ref=mail") "Scarf"']  # one link's own parameter stays


def test_an_anchor_the_text_names_goes_and_a_child_frames_links_are_shown_as_they_are():
    frame = FrameItems(key="f1", items=[link("http://docs.test/library/os.html", "os")])
    shown = lines("http://docs.test/library/tarfile.html", link("#usage", "Usage"),
                  link("#TarFile-add", "TarFile.add"), link("#usage", "Read more"), link("#", "Delete"),
                  {"t": "iframe", "x": "Help", "k": "f1"}, frames={"f1": frame})
    # An in-page anchor whose words the text says goes (a table of contents, pydoc's class index);
    # one that says more stays, and so does a bare "#" (a script's link). A frame's links are read
    # against the frame's own address, which the main page's rules do not know.
    assert shown == ['- a-0 "Usage"', '- a-1 "TarFile.add"', '- a-2 (href="#usage") "Read more"',
                     '- a-3 (href="#") "Delete"', '- iframe "Help"',
                     ' - a-4 (href="http://docs.test/library/os.html") "os"']


def test_without_a_page_address_hrefs_are_left_as_the_page_wrote_them():
    assert lines("about:blank", link("/docs/os.html", "Operating system")) == [
        '- a-0 (href="/docs/os.html") "Operating system"']


def test_a_record_id_in_the_path_stays_even_when_the_title_holds_the_same_digits():
    # The marketplace's search result "Lamp 2" at /listings/2 (on /listings): the words rule would
    # find every word of the path in the text, but "2" there is the record's id, and a model asked
    # for the listing's URL needs it (the crash and slow-publish reruns aborted without it).
    shown = lines("http://shop.test/listings?sku=LAMP-2", link("/listings/2", "Lamp 2"),
                  link("/listings/7", "Chair 2007"), link("/listings", "Back to my listings"))
    assert shown == ['- a-0 (href="/listings/2") "Lamp 2"', '- a-1 (href="/listings/7") "Chair 2007"',
                     '- a-2 "Back to my listings"']


def test_an_href_the_text_spells_out_is_left_out():
    # A source link (pydoc's file: link named by its path), a bare URL in a list of references,
    # a path shown as it is: the text is the address. One the text does not spell stays.
    tree = stitch_tree({"": FrameItems(key="", items=[
        link("file:/usr/lib/python3.11/tarfile.py", "/usr/lib/python3.11/tarfile.py"),
        link("https://github.com/pallets/flask/", "https://github.com/pallets/flask"),
        link("/downloads/report.pdf", "/downloads/report.pdf"),
        link("file:/usr/lib/python3.11/os.py", "/usr/lib/python3.11/tarfile.py"),
        link("https://peps.python.org/pep-0585/", "PEP 585"),
    ])}, page_url="http://docs.test/tarfile.html")
    assert tree.text.splitlines() == [
        '- a-0 "/usr/lib/python3.11/tarfile.py"', '- a-1 "https://github.com/pallets/flask"',
        '- a-2 "/downloads/report.pdf"',
        '- a-3 (href="file:/usr/lib/python3.11/os.py") "/usr/lib/python3.11/tarfile.py"',
        '- a-4 (href="https://peps.python.org/pep-0585/") "PEP 585"']
    assert tree.elements["a-0"].attributes["href"] == "file:/usr/lib/python3.11/tarfile.py"


def test_another_pages_anchor_the_text_names_shows_the_page_alone():
    # "Exception" -> builtins.html#Exception: the fragment repeats the text, the page says where it
    # goes. A fragment saying more stays, and so does a record's page.
    shown = lines("http://docs.test/library/tarfile.html",
                  link("builtins.html#Exception", "Exception"),
                  link("http://docs.test/library/os.html#os.walk", "os.walk"),
                  link("http://docs.test/library/os.html#os.walk", "walk"),
                  link("https://other.test/api.html#Session.get", "Session.get"),
                  link("builtins.html#object-methods", "object"),
                  link("/listings/2#reviews", "3 reviews"))
    # (os.html on "os.walk" then goes too: every word of it stands in the text, as before.)
    assert shown == ['- a-0 (href="builtins.html") "Exception"', '- a-1 "os.walk"',
                     '- a-2 (href="/library/os.html#os.walk") "walk"',
                     '- a-3 (href="https://other.test/api.html") "Session.get"',
                     '- a-4 (href="builtins.html#object-methods") "object"',
                     '- a-5 (href="/listings/2") "3 reviews"']
