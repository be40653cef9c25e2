"""Issue 25's mechanisms without a browser: list items bound and repeated with this run's length, a
composed text bound or declined, each commit of a turn with its own check, a completion built from
this run's page, words that may be the site's own, and a repair that keeps the rest of the script."""

from __future__ import annotations

from webtask_core.browser.models import ElementInfo, Observation
from webtask_core.record import Step, ToolCallRecord
from webtask_core.replay import ReplayScript
from webtask_core.replay.binding import Binding, report_template, template_value
from webtask_core.replay.folding import Normaliser, label_words
from webtask_core.replay.recorder import Recorder
from webtask_core.replay.repair import merge_repair
from webtask_core.replay.repeats import expand_repeats
from webtask_core.replay.signature import PageView
from webtask_core.replay.templates import MissingValue, render, shown_matches

TAGS = {"title": "Brass desk lamp", "tags": ["brass", "lighting", "vintage"], "condition": "New",
        "description": "A heavy brass lamp from the sixties, rewired last year, with a linen shade and a new "
                       "switch; the **base** carries a maker's mark."}


def typed(value, params=TAGS, *label: str):
    binding = Binding(params, label_words(*label), strict=True)
    return template_value(value, binding), binding.problem


def test_a_lists_items_and_the_list_in_one_field_are_bound():
    assert typed("lighting") == ("{{param:tags[1]}}", None)
    assert typed("brass, lighting, vintage") == ("{{param:tags|join:, }}", None)
    assert render("{{param:tags|join:, }}", {"tags": ["oak", "chair"]}) == "oak, chair"
    assert render("{{param:tags[1]}}", {"tags": ["oak", "chair"]}) == "chair"
    try:
        render("{{param:tags[2]}}", {"tags": ["oak", "chair"]})
    except MissingValue as missing:
        assert "item 3 of tags" in str(missing)
    else:
        raise AssertionError("a missing item rendered")
    # one tag among other words: no format repeats it for another list
    assert "holds an item of tags" in typed("vintage style")[1]


def test_a_long_text_is_bound_or_declined_never_a_literal():
    assert typed(TAGS["description"]) == ("{{param:description}}", None)
    # rewritten from the description: half its words are the description's
    shortened = "Heavy piece from the sixties, rewired last year, with a linen shade."
    assert "written from description" in typed(shortened)[1]
    # composed by the model from nothing it was given, and long: the model's to write each time
    made_up = "This lovely item has been in our family for decades and we are sad to let it go to a new home."
    assert "no parameter explains" in typed(made_up)[1]


def test_a_completion_names_this_runs_page_never_the_recordings():
    binding = Binding({"sku": "CRSH-002", "title": "Red shoe"}, set(), strict=False)
    page_url = "http://shop:8000/listings/4?published=1"
    text, problem, _ = report_template("Listed SKU CRSH-002 at http://shop:8000/listings/4.", binding, page_url=page_url)
    assert (text, problem) == ("Listed SKU {{param:sku}} at {{page:path_url}}.", None)
    assert render(text, {"sku": "CRSH-006"}, page_url="http://shop:8000/listings/9?published=1") == (
        "Listed SKU CRSH-006 at http://shop:8000/listings/9.")
    text, problem, _ = report_template("Created listing 4 for CRSH-002.", binding, page_url=page_url)
    assert render(text, {"sku": "X"}, page_url="http://shop:8000/listings/9") == "Created listing 9 for X."
    # a link of the page it ended on (a "View live" link): this run's link, found again
    text, problem, named = report_template("Published at http://shop:8000/p/77/ (live).", binding, page_url=page_url,
                                           links={"http://shop:8000/p/77/": "a-3"})
    assert (text, problem, named) == ("Published at {{link:0}} (live).", None, ["a-3"])
    assert render(text, {}, links=["http://shop:8000/p/91/"]) == "Published at http://shop:8000/p/91/ (live)."
    # made of this run's values: a slug of the title
    text, problem, _ = report_template("Live at http://shop:8000/products/red-shoe/", binding, page_url=page_url)
    assert (text, problem) == ("Live at {{page:origin}}/products/{{param:title|slug}}/", None)
    _, problem, _ = report_template("Listed at http://shop:8000/listings/3 (see there).", binding, page_url=page_url)
    assert problem is not None and "a page of the recorded run" in problem


def test_a_word_the_site_may_own_matches_either_way_in_a_sentence_but_strictly_as_a_value():
    binding = Binding(TAGS, set(), strict=False, shown=True)
    assert template_value("New: Product page", binding) == "{{param:condition|or:New}}: Product page"
    assert template_value("Condition: New", binding) == "Condition: {{param:condition}}"
    used = TAGS | {"condition": "Used"}
    assert shown_matches("{{param:condition|or:New}}: Product page", "New: Product page", used)
    assert shown_matches("Condition: {{param:condition}}", "Condition: Used", used)
    assert not shown_matches("Condition: {{param:condition}}", "Condition: New", used)


def obs(url: str, tree: str, *elements: ElementInfo) -> Observation:
    return Observation(url=url, title="Shop", tabs=[], tree=tree.strip("\n"), scroll="",
                       elements={element.id: element for element in elements})


TAG_INPUT = ElementInfo(id="span-0", tag="span", role="textbox", text="Tags input field",
                        attributes={"contenteditable": "True", "placeholder": "Add tags"})
TAG_FORM = """
- h1 "New listing"
- form
  - text: "Tags"
  - span-0 (role="textbox" placeholder="Add tags" contenteditable) "Tags input field"
  - button-0 "Save"
"""
SAVE = ElementInfo(id="button-0", tag="button", role="button", text="Save", attributes={"_form": "0", "_submit": "post"})


def call(number: int, name: str, **arguments) -> ToolCallRecord:
    return ToolCallRecord(id=f"c{number}", name=name, input=arguments, ok=True, message="done")


def test_tags_typed_one_by_one_repeat_over_this_runs_list():
    recorder = Recorder(TAGS)
    page = obs("http://shop/new", TAG_FORM, TAG_INPUT, SAVE)
    # one tag in a turn of its own, then the two others in one turn (type, Enter, type, Enter)
    recorder.record(Step(index=1, url=page.url, title="", tool_calls=[
        call(1, "fill", element_id="span-0", text="brass"), call(2, "press_key", key="Enter")]), page)
    recorder.record(Step(index=2, url=page.url, title="", tool_calls=[
        call(3, "fill", element_id="span-0", text="lighting"), call(4, "press_key", key="Enter"),
        call(5, "fill", element_id="span-0", text="vintage"), call(6, "press_key", key="Enter")]), page)
    recorder.record(Step(index=3, url=page.url, title="", tool_calls=[call(7, "click", element_id="button-0")]), page)
    script = recorder.script("k")
    assert [step.needs_model for step in script.steps] == [None, None]
    first = script.steps[0]
    assert [(action.tool, action.input.get("text"), action.each, action.commit) for action in first.actions] == [
        ("fill", "{{param:tags[#]}}", "tags", False), ("press_key", None, "tags", False)]
    run = expand_repeats(first.actions, {"tags": ["oak", "chair"]})
    # Enter is pressed on the field typed into (a calendar that took the focus back gets no key)
    assert [render(action.input, {"tags": ["oak", "chair"]}, element_id="span-3") for action in run] == [
        {"element_id": "span-3", "text": "oak"}, {"element_id": "span-3", "key": "Enter"},
        {"element_id": "span-3", "text": "chair"}, {"element_id": "span-3", "key": "Enter"}]
    assert expand_repeats(first.actions, {"tags": []}) == []

    # only some of the tags typed that way: no repeat can type another list's; replayed only for a
    # list of the recording's length (three), the model's for any other
    partial = Recorder(TAGS)
    partial.record(Step(index=1, url=page.url, title="", tool_calls=[
        call(1, "fill", element_id="span-0", text="brass"), call(2, "press_key", key="Enter")]), page)
    (step,) = partial.script("k").steps
    assert step.lengths == {"tags": 3} and step.actions[0].input["text"] == "{{param:tags[0]}}"


def test_two_commits_in_one_turn_are_two_steps_each_with_its_own_check():
    form = """
- form
  - input-0 (type="text" name="note") "Note"
  - button-0 "Post"
"""
    note = ElementInfo(id="input-0", tag="input", type="text", role="textbox", name="note", text="Note",
                       attributes={"_form": "0"})
    params = {"first": "Arrived today", "second": "Shipped back"}
    recorder = Recorder(params)
    before_first = obs("http://shop/notes", form.replace('"Note"', '"Note"'), note.model_copy(
        update={"attributes": {"_form": "0", "value": "Arrived today"}}))
    before_second = obs("http://shop/notes", form, note.model_copy(
        update={"attributes": {"_form": "0", "value": "Shipped back"}}))
    recorder._captures = {"c2": before_first, "c4": before_second}
    page = obs("http://shop/notes", form, note)
    recorder.record(Step(index=1, url=page.url, title="", tool_calls=[
        call(1, "fill", element_id="input-0", text="Arrived today"), call(2, "press_key", key="Enter"),
        call(3, "fill", element_id="input-0", text="Shipped back"), call(4, "press_key", key="Enter")]), page)
    steps = recorder.script("k").steps
    assert [[action.tool for action in step.actions] for step in steps] == [["fill"], ["press_key", "fill"],
                                                                            ["press_key"]]
    assert steps[0].commit is None
    values = [[control.value for control in step.commit.controls] for step in steps[1:]]
    assert values == [["{{param:first}}"], ["{{param:second}}"]]


def test_a_repair_keeps_the_rest_of_the_script_and_never_this_items_unbound_values():
    page = obs("http://shop/new", TAG_FORM, TAG_INPUT, SAVE)
    recorder = Recorder({"title": "Lamp"})
    recorder.record(Step(index=1, url=page.url, title="", tool_calls=[call(1, "fill", element_id="span-0", text="Lamp")]),
                    page)
    recorder.record(Step(index=2, url=page.url, title="", tool_calls=[call(2, "click", element_id="button-0")]), page)
    old = ReplayScript(key="k", steps=recorder.script("k").steps)
    # this run replayed step 1, the model did step 2 its own way (and typed a word of the title)
    run = Recorder({"title": "Oak chair"})
    run.record(Step(index=1, url=page.url, title="", tool_calls=[call(1, "fill", element_id="span-0", text="Oak chair")]),
               page, origin=0)
    run.record(Step(index=2, url=page.url, title="", tool_calls=[call(2, "fill", element_id="span-0", text="Chair in oak"),
                                                                 call(3, "click", element_id="button-0")]), page)
    steps, why = merge_repair(old, run.recorded(), {"title": "Oak chair"})
    assert steps is None and "holds a value of this item" in why
    # the model did exactly what the script does: nothing to save
    same = Recorder({"title": "Oak chair"})
    same.record(Step(index=1, url=page.url, title="", tool_calls=[call(1, "fill", element_id="span-0", text="Oak chair")]),
                page, origin=0)
    same.record(Step(index=2, url=page.url, title="", tool_calls=[call(2, "click", element_id="button-0")]), page)
    assert merge_repair(old, same.recorded(), {"title": "Oak chair"}) == (None, "not saved: the model did what the "
                                                                                "script does")
    # the model pressed Enter instead: step 1 kept as the script had it, step 2 the model's
    other = Recorder({"title": "Oak chair"})
    other.record(Step(index=1, url=page.url, title="", tool_calls=[call(1, "fill", element_id="span-0",
                                                                        text="Oak chair")]), page, origin=0)
    other.record(Step(index=2, url=page.url, title="", tool_calls=[call(2, "press_key", element_id="span-0",
                                                                        key="Enter")]), page)
    steps, _ = merge_repair(old, other.recorded(), {"title": "Oak chair"})
    assert steps is not None and steps[0] is old.steps[0] and steps[1].actions[0].tool == "press_key"


def test_keystrokes_that_composed_a_parameter_are_one_fill_of_the_editor():
    params = {"description": "Light **trail** shoe."}
    editor = ElementInfo(id="body-0", tag="body", text="Description", attributes={"contenteditable": "True"})
    tree = '- form\n  - iframe\n    - body-0 (contenteditable) "Description"\n  - button-0 "Save"'
    before = obs("http://shop/new", tree, editor, SAVE)
    after = obs("http://shop/new", tree.replace("(contenteditable)", '(value="Light **trail** shoe." contenteditable)'),
                editor.model_copy(update={"attributes": {"contenteditable": "True",
                                                          "value": "Light **trail** shoe."}}), SAVE)
    keys = [call(1, "click", element_id="body-0"), call(2, "type", text="Light "), call(3, "press_key", key="Control+b"),
            call(4, "type", text="trail"), call(5, "press_key", key="Control+b"), call(6, "type", text=" shoe.")]
    for rich, expected in ((True, [("fill", "{{param:description}}")]), (False, None)):
        recorder = Recorder(params, rich_fill=rich)
        recorder.record(Step(index=1, url=before.url, title="", tool_calls=keys), before)
        recorder.record(Step(index=2, url=after.url, title="", tool_calls=[call(7, "click", element_id="button-0")]),
                        after)
        first = recorder.script("k").steps[0]
        if expected is None:  # a fill that types the marks as text would store them: the model's
            assert first.needs_model is not None
        else:
            assert first.needs_model is None
            assert [(action.tool, action.input["text"]) for action in first.actions] == expected


def test_a_recorded_fixed_word_does_not_tie_the_page_to_this_value():
    recorded = Normaliser(TAGS, identifying=("title",))
    used = Normaliser(TAGS | {"condition": "Used"}, identifying=("title",))
    tree = '- h1 "New: Product page"\n- text: "Welcome to your new shop!"'
    first = PageView.of(obs("http://shop/add", tree), recorded)
    later = PageView.of(obs("http://shop/add", tree), used)
    from webtask_core.replay.signature import PageSignature
    assert PageSignature.of(first).difference(later) is None


def _calendar(days: list[tuple[int, bool]]) -> Observation:
    cells = [ElementInfo(id=f"td-{i}", tag="td", text=str(day), attributes={"outside-month": "True"} if outside else {})
             for i, (day, outside) in enumerate(days)]
    tree = "- table\n  - row\n" + "\n".join(
        f'    - td-{i}{" (outside-month)" if outside else ""} "{day}"' for i, (day, outside) in enumerate(days))
    return obs("http://shop/add", tree, *cells)


def test_a_calendar_day_is_the_one_of_this_runs_date_and_quoted_chips_are_the_list():
    # The day clicked to confirm 2025-03-14 is, for 2023-09-30, the cell "30" of September, never
    # August's "30" shown before it nor another day.
    recorded_page = _calendar([(28, True), (1, False), (14, False), (30, False)])
    recorded = PageView.of(recorded_page, Normaliser({"release_date": "2025-03-14"}))
    day = recorded.fingerprints["td-2"]
    assert day.text == "{release_date.day}"
    later = PageView.of(_calendar([(30, True), (31, True), (14, False), (30, False)]),
                        Normaliser({"release_date": "2023-09-30"}))
    assert later.resolve(day) == ("td-3", "")
    # a calendar that opened before the date was typed still shows another month: not this run's day
    stale = _calendar([(14, False), (30, False)])
    stale = stale.model_copy(update={"tree": '- text: "November"\n' + stale.tree})
    found, why = PageView.of(stale, Normaliser({"release_date": "2023-09-30"})).resolve(day)
    assert found is None and "not the month of this run's release_date (september)" in why, why
    # A multi-word tag shown quoted by its widget ('"summer sale"', tag-it) is a chip like the others.
    from webtask_core.replay.commit import _chips
    chip_tree = """
- form
  - list
    - item
      - text: "outdoor"
      - a-0 "remove tag outdoor"
    - item
      - text: "\\"summer sale\\""
      - a-1 "remove tag \\"summer sale\\""
  - button-0 "Publish"
"""
    params = {"tags": ["outdoor", "summer sale"]}
    page = obs("http://shop/edit", chip_tree, ElementInfo(id="a-0", tag="a", text="remove tag outdoor"),
               ElementInfo(id="a-1", tag="a", text='remove tag "summer sale"'),
               ElementInfo(id="button-0", tag="button", text="Publish"))
    view = PageView.of(page, Normaliser(params))
    shapes = _chips(view, "button-0", params)
    assert shapes["tags"][1] == ["outdoor", "summer sale"]
    assert _chips(view, "button-0", params, {"tags": shapes["tags"][0]})["tags"][1] == ["outdoor", "summer sale"]


def test_what_grows_with_the_users_work_is_content_and_a_changed_line_is_not():
    from webtask_core.replay.signature import PageSignature
    params = {"title": "Silver Tote", "sku": "WT-1"}
    recorded_tree = """
- group
  - h1 "Choose an image"
  - text: "You haven't uploaded any images. Why not"
  - a-0 (href="#tab-upload") "upload one now"
  - a-1 (href="/admin/items/7/") "Add comment"
  - a-2 (href="/admin/items/8/") "Add comment"
  - button-0 "Insert"
"""
    recorded = PageSignature.of(PageView.of(obs("http://shop/edit", recorded_tree,
        ElementInfo(id="a-0", tag="a", text="upload one now", attributes={"href": "#tab-upload"}),
        ElementInfo(id="a-1", tag="button", text="Add comment"), ElementInfo(id="a-2", tag="button", text="Add comment"),
        ElementInfo(id="button-0", tag="button", text="Insert")), Normaliser(params, identifying=("title", "sku"))))
    grown_tree = """
- group
  - h1 "Choose an image"
  - list
    - a-5 (href="/admin/images/chosen/3/") "Red Shoe"
    - a-6 (href="/admin/images/chosen/2/") "Blue Bag"
  - text: "Page 1 of 1"
  - a-1 (href="/admin/items/7/") "Add comment"
  - button-0 "Insert"
"""
    elements = [ElementInfo(id="a-5", tag="a", text="Red Shoe", attributes={"href": "/admin/images/chosen/3/"}),
                ElementInfo(id="a-6", tag="a", text="Blue Bag", attributes={"href": "/admin/images/chosen/2/"}),
                ElementInfo(id="a-1", tag="button", text="Add comment"), ElementInfo(id="button-0", tag="button", text="Insert")]
    grown = PageView.of(obs("http://shop/edit", grown_tree, *elements), Normaliser(params, identifying=("title", "sku")))
    # a chooser's images where it was empty, its paging, one "Add comment" fewer: content
    assert recorded.difference(grown) is None
    # its first image, drawn alone (a list of one is no list): the record took the empty state's place
    one_tree = grown_tree.replace('    - a-6 (href="/admin/images/chosen/2/") "Blue Bag"\n', "")
    one = PageView.of(obs("http://shop/edit", one_tree, elements[0], *elements[2:]),
                      Normaliser(params, identifying=("title", "sku")))
    assert recorded.difference(one) is None
    # a link to an item where the empty state still stands: the site added it
    beside_tree = recorded_tree.replace('  - button-0 "Insert"',
                                        '  - a-5 (href="/admin/images/chosen/3/") "Red Shoe"\n  - button-0 "Insert"')
    beside = PageView.of(obs("http://shop/edit", beside_tree,
                             ElementInfo(id="a-0", tag="a", text="upload one now", attributes={"href": "#tab-upload"}),
                             *elements[:1], *elements[2:]), Normaliser(params, identifying=("title", "sku")))
    assert "has 1 control(s) the recording did not (a red shoe -> /admin/images/chosen/*)" in str(recorded.difference(beside))
    # a search's count of its records is the list's; a count of errors is not
    from webtask_core.replay.growth import is_paging
    assert is_paging("there is # match") and is_paging("there are # matche") and not is_paging("there are # error")
    # the button that acts gone, or a warning line: still a change of the site
    without_insert = PageView.of(obs("http://shop/edit", grown_tree.replace('  - button-0 "Insert"\n', ""),
                                     *elements[:3]), Normaliser(params, identifying=("title", "sku")))
    assert "lacks 1 it had (button insert)" in str(recorded.difference(without_insert))
    warned = PageView.of(obs("http://shop/edit", grown_tree + '  - text: "Uploads are disabled: the quota is full"\n',
                             *elements), Normaliser(params, identifying=("title", "sku")))
    assert "says what it did not" in str(recorded.difference(warned))
    # a two-list chooser: this run's categories moved between "Available" and "Chosen" (the same
    # options in all); an option more is a change
    from webtask_core.replay.growth import options_moved
    moved = options_moved(["select categories_old options shoes | bags", "select categories options sale"],
                          ["select categories options shoes", "select categories_old options bags | sale"])
    assert moved == ([], [])
    more = options_moved(["select categories options sale | guns"], ["select categories options sale"])
    assert more == (["select categories options sale | guns"], ["select categories options sale"])
    # the chooser's pair moved while another select really changed: the pair drops, the other stays
    pair_and_other = options_moved(
        ["select categories_old options shoes | bags", "select categories options sale", "select image options - | new"],
        ["select categories options shoes", "select categories_old options bags | sale", "select image options - | old"])
    assert pair_and_other == (["select image options - | new"], ["select image options - | old"])


def test_a_select_option_this_run_typed_is_the_items_and_a_chosen_one_the_sites():
    # Cartridge's variation image select lists the caption typed for this product's photo; the
    # condition select offers the site's fixed words, one of which this run chose.
    recorded = Normaliser({"caption": "Red shoe, side view", "condition": "New", "title": "Red Trail Shoe"},
                          identifying=("title",))
    replayed = Normaliser({"caption": "Pair of flats", "condition": "Used", "title": "Red Ballet Flat"},
                          identifying=("title",))
    for normalise in (recorded, replayed):
        normalise.typed = {"caption"}
    assert recorded.options("--------- | Red shoe, side view") == replayed.options("--------- | Pair of flats") \
        == "--------- | {caption}"
    conditions = "New | Used | Refurbished"
    assert recorded.options(conditions) == replayed.options(conditions) == "new | used | refurbished"
    # Nothing typed yet (a page before the caption's field): the option is the site's text as offered.
    assert Normaliser({"caption": "Pair of flats"}, identifying=()).options("Pair of flats") == "pair of flats"


def test_a_page_recorded_after_it_saved_itself_is_the_same_page_read_before_it_has():
    """Wagtail's editor autosaves 0.5 s after the last change: the recording (slower) read a page that had
    saved itself ("Saved", the saved page's history link, its actions menu), a replay reads it a moment
    before. On the same document that is the page earlier, not a change of the site; a control that
    submits gone, or a page that does show its save, still is."""
    from webtask_core.replay.signature import PageSignature
    params = {"title": "Silver Tote", "sku": "WT-1"}
    normalise = Normaliser(params, identifying=("title", "sku"))
    saved_tree = """
- group
  - a-0 (href="/admin/pages/4/history/") "History"
  - button-0 (aria-expanded="false") "Actions"
  - text: "Saved"
- form
  - input-0 (name="title" value="Silver Tote") "Title"
  - button-1 (name="action-publish") "Publish"
"""
    saved = [ElementInfo(id="a-0", tag="a", role="link", text="History", attributes={"href": "/admin/pages/4/history/"}),
             ElementInfo(id="button-0", tag="button", type="button", text="Actions"),
             ElementInfo(id="input-0", tag="input", type="text", name="title", text="Title",
                         attributes={"value": "Silver Tote"}),
             ElementInfo(id="button-1", tag="button", type="button", name="action-publish", text="Publish")]
    recorded = PageSignature.of(PageView.of(obs("http://shop/admin/pages/4/edit/", saved_tree, *saved), normalise))
    assert recorded.saved
    unsaved_tree = "\n".join(line for line in saved_tree.splitlines() if "a-0" not in line and "button-0" not in line
                             and "Saved" not in line)
    unsaved = PageView.of(obs("http://shop/admin/pages/add/", unsaved_tree, *saved[2:]), normalise)
    assert recorded.difference(unsaved, same_document=True) is None
    # after a page load it is another page; a submit gone is a change of the site whatever the save
    assert recorded.difference(unsaved) is not None
    no_publish = PageView.of(obs("http://shop/admin/pages/add/", unsaved_tree.replace(
        '  - button-1 (name="action-publish") "Publish"', ""), *saved[2:3]), normalise)
    assert "lacks" in str(recorded.difference(no_publish, same_document=True))
    # while it saves ("Saving…") the saved page's links are still to come; once it says "Saved", not
    saving = PageView.of(obs("http://shop/admin/pages/add/", unsaved_tree + '\n- text: "Saving…"', *saved[2:]), normalise)
    assert recorded.difference(saving, same_document=True) is None
    said_saved = PageView.of(obs("http://shop/admin/pages/add/", unsaved_tree + '\n- text: "Saved"', *saved[2:]), normalise)
    assert "lacks 2 it had" in str(recorded.difference(said_saved, same_document=True))
