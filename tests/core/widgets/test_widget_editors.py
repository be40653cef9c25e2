"""fill on real editors (CKEditor 5, Quill, EasyMDE's CodeMirror 5, TinyMCE) takes the tree's
markdown-like text and writes it with the editor's own means; each is judged through the editor's own
API (getData(), root.innerHTML, value(), getContent()) for every call (witness.py), and an editor named
by the label of the field it writes is found by that label."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.async_api import Page
from widget_helpers import Seen, act, call, finish, give_up, run_task, scripted
from witness import Witness

from webtask_core.browser import BrowserTab, Observation
from webtask_core.errors import ActionError
from webtask_core.testing import Reply

BODY = "**Hand-made** boots in *soft* leather.\nSizes:\n- EU 38\n- EU 39\nSee [the guide](https://example.com/guide)."
# What each editor's own model holds for BODY (its API's HTML, attributes it adds aside).
BODY_HTML = ('<p><strong>Hand-made</strong> boots in <(?:em|i)>soft</(?:em|i)> leather.</p><p>Sizes:</p>'
             '<(?:ul|ol)><li>EU 38</li><li>EU 39</li></(?:ul|ol)><p>See <a href="https://example.com/guide">the guide</a>.</p>')
APIS = {"Description": "ckeditor.getData()", "Summary": "quill.root.innerHTML", "Headline (bold only)": "headline.root.innerHTML",
        "Care instructions (markdown)": "easymde.value()"}


def plain_html(html: str) -> str:
    """The editor's HTML without the attributes it adds (list ids, Quill's list markers) and line breaks."""
    html = re.sub(r'<span class="ql-ui"[^>]*></span>', "", html)
    html = re.sub(r'\s(?:data-[\w-]+|rel|target)="[^"]*"', "", html)
    return html.replace("\n", "")


# The HTML each text stands for in an editor's model (what the judge asks of the editor's API).
EXPECTED = {BODY: BODY_HTML, "**Soft** *leather*": "<p><strong>Soft</strong> <em>leather</em></p>", "Plain": "<p>Plain</p>",
            "": "(?:<p>(?:<br>)?</p>)?"}


def holds(api: str, text: str, html: str) -> bool | None:
    if api == "easymde.value()":
        return html == text
    expected = EXPECTED.get(text)
    return None if expected is None else re.fullmatch(expected, plain_html(html)) is not None


async def editor_judge(page: Page, arguments: dict[str, Any]) -> bool | None:
    api = ARGUMENT_APIS.get(arguments["element_id"])
    return None if api is None else holds(api, arguments["text"], await page.evaluate(api))


ARGUMENT_APIS: dict[str, str] = {}  # element id -> the API reading its editor (set once observed)


async def editors(tab: BrowserTab, widget_site) -> Observation:
    await tab.navigate(widget_site.url("editors.html"))
    await tab.page.wait_for_function("window.ckeditor !== undefined")
    observation = await tab.observe()
    ARGUMENT_APIS.clear()
    for element in observation.elements.values():
        if element.text in APIS and element.attributes.get("contenteditable"):
            ARGUMENT_APIS[element.id] = APIS[element.text]
    assert len(ARGUMENT_APIS) == len(APIS), observation.tree
    return observation


async def test_rich_and_markdown_editors_take_formatted_text(browser_session, widget_site):
    await editors(browser_session, widget_site)
    seen = Witness(browser_session, {"fill": editor_judge})
    for element_id, api in ARGUMENT_APIS.items():
        if api == "headline.root.innerHTML":
            continue
        said = await seen.fill(element_id, BODY)
        assert said.startswith(f"filled {element_id} with ") and said.endswith("the editor shows it so")
    seen.check()
    page = browser_session.page
    assert re.fullmatch(BODY_HTML, plain_html(await page.evaluate("ckeditor.getData()")))
    assert re.fullmatch(BODY_HTML, plain_html(await page.evaluate("quill.root.innerHTML")))
    assert await page.evaluate("easymde.value()") == BODY  # a markdown editor takes the text as is
    # The tree shows each in the same notation again.
    tree = (await browser_session.observe()).tree
    assert tree.count('value="**Hand-made** boots in *soft* leather.\\nSizes:\\n- EU 38\\n- EU 39') == 3


async def test_an_editor_that_drops_formatting_is_an_error(browser_session, widget_site):
    await editors(browser_session, widget_site)
    seen = Witness(browser_session, {"fill": editor_judge})
    headline = next(element_id for element_id, api in ARGUMENT_APIS.items() if api == "headline.root.innerHTML")
    with pytest.raises(ActionError, match=rf'wrote into {headline}, but it shows "\*\*Soft\*\* leather" instead of '
                                          r'"\*\*Soft\*\* \*leather\*"'):
        await seen.fill(headline, "**Soft** *leather*")  # this Quill takes bold only
    assert await browser_session.page.evaluate("headline.root.innerHTML") == "<p><strong>Soft</strong> leather</p>"
    seen.check()
    # Emptying an editor is a fill too.
    summary = next(element_id for element_id, api in ARGUMENT_APIS.items() if api == "quill.root.innerHTML")
    await seen.fill(summary, "Plain")
    assert await seen.fill(summary, "") == f'filled {summary} with ""; the editor shows it so'
    assert await browser_session.page.evaluate("quill.getText()") == "\n"
    seen.check()


async def test_tinymce_in_its_iframe_takes_formatted_text(browser_session, widget_site):
    await browser_session.navigate(widget_site.url("description.html"))
    await browser_session.page.wait_for_function("tinymce.activeEditor && tinymce.activeEditor.initialized")
    body = next(e.id for e in (await browser_session.observe()).elements.values() if e.tag == "body")
    said = await browser_session.fill(body, BODY)
    assert said.endswith("the editor shows it so")
    html = await browser_session.page.evaluate("tinymce.activeEditor.getContent()")
    assert re.fullmatch(BODY_HTML, plain_html(html)), html
    assert "data-wt-id" not in html  # no mark of ours saved in the content


@scripted
def description_policy(seen: Seen) -> Reply:
    """One fill per editor, found by the label of its field."""
    wanted = {"Description": BODY, "Care instructions (markdown)": "Wipe with a *damp* cloth."}
    for name, text in wanted.items():
        editor = seen.find(name, contenteditable="")
        if editor is None:
            return give_up(f"no editor named {name}")
        if editor.attributes.get("value") != text.replace("\n", "\\n")[:99] and not any(
                result.tool_name == "fill" and editor.id in result.text for result in seen.results):
            return act(call("fill", element_id=editor.id, text=text))
    return finish("descriptions written")


async def test_an_agent_writes_a_rich_body_in_one_act(browser_session, widget_site):
    await browser_session.navigate(widget_site.url("editors.html"))
    await browser_session.page.wait_for_function("window.ckeditor !== undefined")
    seen = Witness(browser_session, {"fill": lambda page, arguments: _agent_judge(page, arguments)})
    result = await run_task(seen, widget_site.url("editors.html"), "Write the description and the care text.",  # type: ignore[arg-type]
                            description_policy)
    assert result.status.value == "completed", result.feedback
    seen.check()
    page = browser_session.page
    assert re.fullmatch(BODY_HTML, plain_html(await page.evaluate("ckeditor.getData()")))
    assert await page.evaluate("easymde.value()") == "Wipe with a *damp* cloth."


async def _agent_judge(page: Page, arguments: dict[str, Any]) -> bool | None:
    if arguments["text"] == BODY:
        return re.fullmatch(BODY_HTML, plain_html(await page.evaluate("window.ckeditor ? ckeditor.getData() : ''"))) is not None
    return await page.evaluate("window.easymde ? easymde.value() : ''") == arguments["text"]
