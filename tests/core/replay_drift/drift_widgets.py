"""The drift site's widget form (issue 25): the listing form with what real admin editors have — a
condition chosen by radio buttons, tags in a Tagify token field (typed one at a time, each ended with
Enter), an "Available from" date with a Pikaday calendar that opens on focus and fades in, and the
description in a TinyMCE editor — all from the npm registry (tests/core/widgets/node_modules), in both
markup styles. Around it, what grows with the seller's own work or only reports saving: a "Your most
recent edits" panel, the item's own row in "Your listings" after publishing (its link holds the
title's slug), an autosave status in the form.

The server reads each widget as the site means it: Tagify's JSON value as the tags, TinyMCE's HTML as
the description's lines, the chosen radio's label as the condition.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drift_site import Variant

__all__ = ["WIDGET_MEANINGS", "CONDITIONS", "widget_head", "widget_rows", "read_widgets", "widget_shown", "slug",
           "teaser_row", "late_sidebar", "description_lines", "recent_edits", "own_rows", "WIDGETS"]

WIDGETS = Path(__file__).resolve().parent.parent / "widgets"  # the npm libraries (scripts/setup.sh --dev)
WIDGET_MEANINGS = ("condition", "tags", "available")
WIDGET_LABELS = {"condition": "Condition", "tags": "Tags", "available": "Available from"}
CONDITIONS = (("new", "New"), ("used", "Used"), ("refurbished", "Refurbished"))
_NAMES = {"label": {"condition": "condition", "tags": "tags", "available": "available"},
          "span": {"condition": "field12", "tags": "field13", "available": "field14"}}

_HEAD = """<link rel="stylesheet" href="/node_modules/@yaireo/tagify/dist/tagify.css">
<link rel="stylesheet" href="/node_modules/pikaday/css/pikaday.css">
<script src="/node_modules/@yaireo/tagify/dist/tagify.js"></script>
<script src="/node_modules/pikaday/pikaday.js"></script>
<script src="/node_modules/tinymce/tinymce.min.js"></script>
<style>.pika-single:not(.is-hidden){animation:fade-in .25s ease-out}@keyframes fade-in{from{opacity:0}to{opacity:1}}
.radios label,.radios span{width:auto;margin-right:10px}</style>"""

_SCRIPT = """<script>
  const iso = (date) => date.getFullYear() + '-' + String(date.getMonth() + 1).padStart(2, '0') + '-'
    + String(date.getDate()).padStart(2, '0');
  new Tagify(document.querySelector('[name={tags}]'));
  if ({picker}) new Pikaday({{field: document.querySelector('[name={available}]'), toString: iso, ariaLabel: 'Available from',
    parse: (text) => {{ const d = new Date(text + 'T00:00:00'); return isNaN(d) ? null : d; }}}});
  const startEditor = () => tinymce.init({{selector: 'textarea[name={description}]', license_key: 'gpl',
    menubar: false, statusbar: false, promotion: false, plugins: 'lists', toolbar: 'bold italic | bullist numlist',
    height: 200}});
  if ({editor_delay}) setTimeout(startEditor, {editor_delay}); else startEditor();  // built late (Variant.editor_delay_ms)
</script>"""

_AUTOSAVE = """<p role="status" id="autosave"></p><script>
  const shown = document.getElementById('autosave');
  let timer = null;
  const saving = () => { shown.textContent = 'Saving…'; clearTimeout(timer);
    timer = setTimeout(() => { shown.textContent = 'Saved ' + new Date().toLocaleTimeString(); }, 300); };
  document.addEventListener('input', saving, true); document.addEventListener('change', saving, true);
</script>"""
# Once saved, the heading names what was saved: the listing's title, or another text.
_AUTOSAVE_HEADING = """<script>
  new MutationObserver(() => { if (!shown.textContent.startsWith('Saved')) return;
    const heading = HEADING; if (heading) document.querySelector('h1').textContent = heading;
  }).observe(shown, {childList: true});
</script>"""
# A tag the site knows (earlier listings saved it), offered under the field: a click adds it.
_SUGGESTION_SCRIPT = """<script>
  document.querySelectorAll('a.suggested-tag').forEach((link) => link.addEventListener('click', (event) => {
    event.preventDefault(); document.querySelector('[name={tags}]').__tagify.addTags([link.dataset.tag]); }));
</script>"""


def widget_head(variant: Variant) -> str:
    return _HEAD if variant.widgets else ""


def _name(variant: Variant, meaning: str) -> str:
    return _NAMES[variant.style][meaning]


def _caption(variant: Variant, meaning: str, ident: str) -> str:
    label = html.escape(WIDGET_LABELS[meaning])
    return f"<label for='{ident}'>{label}</label>" if variant.style == "label" else f"<span class='caption'>{label}</span>"


def widget_rows(variant: Variant, values: dict[str, str], description_name: str) -> str:
    """The widgets' rows inside the form, and the script that starts them."""
    if not variant.widgets:
        return ""
    name = _name(variant, "condition")
    radios = []
    for key, text in ((key, variant.condition_labels.get(key, text)) for key, text in CONDITIONS):
        checked = " checked" if (values.get(name) if values else variant.condition_default) == key else ""
        if variant.style == "label":
            radios.append(f"<input type='radio' id='c-{key}' name='{name}' value='{key}'{checked}>"
                          f"<label for='c-{key}'>{text}</label>")
        else:
            radios.append(f"<input type='radio' name='{name}' value='{key}'{checked}><span>{text}</span>")
    condition = (f"<fieldset class='row radios'><legend>Condition</legend>{''.join(radios)}</fieldset>"
                 if variant.style == "label" else
                 f"<div class='row radios'><span class='caption'>Condition</span>{''.join(radios)}</div>")
    rows = [condition]
    for meaning in ("tags", "available"):
        field_name = _name(variant, meaning)
        ident = f"w-{field_name}"
        attribute = f"id='{ident}' name='{field_name}'" if variant.style == "label" else f"name='{field_name}'"
        value = html.escape(values.get(field_name, "") or (json.dumps([{"value": tag} for tag in variant.preset_tags])
                                                           if meaning == "tags" and variant.preset_tags else ""))
        aria = " aria-label='Available from'" if meaning == "available" else ""  # named alike with or without a picker
        suggested = "".join(f" <a href='#' class='suggested-tag' data-tag='{html.escape(tag)}'>+{html.escape(tag)}</a>"
                            for tag in variant.tag_suggestions) if meaning == "tags" else ""
        rows.append(f"<div class='row'>{_caption(variant, meaning, ident)}<input type='text' {attribute}{aria} "
                    f"autocomplete='off' value='{value}'>{suggested}</div>")
    script = _SCRIPT.format(tags=_name(variant, "tags"), available=_name(variant, "available"),
                            description=description_name, picker="true" if variant.picker else "false",
                            editor_delay=variant.editor_delay_ms)
    if variant.tag_suggestions:
        script += _SUGGESTION_SCRIPT.replace("{tags}", _name(variant, "tags"))
    if variant.autosave:
        script = _AUTOSAVE + script
        if variant.autosave_heading:
            heading = (f"document.querySelector('[name={variant.name_of('title')}]').value"
                       if variant.autosave_heading == "title" else json.dumps(variant.autosave_heading))
            script += _AUTOSAVE_HEADING.replace("HEADING", heading)
    return "".join(rows) + script


def read_widgets(variant: Variant, form: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The widgets' values as the site means them, and what is missing."""
    if not variant.widgets:
        return {}, []
    values: dict[str, Any] = {}
    problems = []
    chosen = (dict(CONDITIONS) | variant.condition_labels).get(form.get(_name(variant, "condition"), ""))
    if chosen is None:
        problems.append("choose a condition")
    values["condition"] = chosen
    raw = form.get(_name(variant, "tags"), "")
    try:
        values["tags"] = [str(item["value"]) for item in json.loads(raw)] if raw.strip() else []
    except (ValueError, TypeError, KeyError):
        values["tags"] = [tag.strip() for tag in raw.split(",") if tag.strip()]
    values["available"] = form.get(_name(variant, "available"), "").strip()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", values["available"]):
        problems.append("Available from must be a date")
    return values, problems


def description_lines(raw: str) -> str:
    """TinyMCE's HTML (``<p>a</p><p><strong>b</strong></p>``) as the description's lines, markdown-like."""
    text = re.sub(r"</p>\s*<p[^>]*>|<br\s*/?>", "\n", raw)
    text = re.sub(r"</?strong>|</?b>", "**", text)
    text = re.sub(r"</?em>|</?i>", "*", text)
    return html.unescape(re.sub(r"<[^>]+>", "", text)).replace("\xa0", " ").strip()


def widget_shown(values: dict[str, Any]) -> list[tuple[str, str]]:
    """The confirm page's rows for the widgets."""
    if "condition" not in values:
        return []
    return [("Condition", str(values["condition"])), ("Tags", ", ".join(values["tags"])),
            ("Available from", values["available"])]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")


def recent_edits(variant: Variant, listings: dict[int, dict[str, Any]]) -> str:
    """A panel of the seller's recent edits (what grows with their own work), outside the form."""
    if not variant.recent_edits:
        return ""
    items = "".join(f"<li><a href='/listings/{key}'>{html.escape(item['title'])}</a> <span>edited today</span></li>"
                    for key, item in list(listings.items())[-3:])
    return f"<section><h2>Your most recent edits</h2><ul>{items}</ul></section>"


def own_rows(variant: Variant, listings: dict[int, dict[str, Any]]) -> str:
    """Every listing of the seller, the new one included, each linking to its title's slug."""
    if not variant.widgets:
        return ""
    items = "".join(f"<li><a href='/listings/by-title/{slug(item['title'])}'>{html.escape(item['title'])}</a></li>"
                    for item in listings.values())
    return f"<h2>Your listings</h2><ul>{items}</ul>"


def teaser_row(variant: Variant, values: dict[str, Any]) -> str:
    """The confirm form's "Teaser" select (Variant.teaser): "No teaser", the description's first line
    (this item's own words, typed on the form) and the variant's extra fixed option."""
    if not variant.teaser:
        return ""
    lines = str(values["description"]).splitlines()
    options = ["No teaser", *lines[:1], *([variant.teaser_extra] if variant.teaser_extra else [])]
    select = (f"<select id='teaser' name='{'teaser' if variant.style == 'label' else 'field20'}'>"
              + "".join(f"<option>{html.escape(option)}</option>" for option in options) + "</select>")
    caption = "<label for='teaser'>Teaser</label>" if variant.style == "label" else "<span class='caption'>Teaser</span>"
    return f"<div class='row'>{caption}{select}</div>"


def late_sidebar(variant: Variant) -> str:
    """A sidebar the page's script draws 0.7 s after the load (Variant.late_sidebar), as an admin's
    menu app does: a look right after the load does not see it yet."""
    if not variant.late_sidebar:
        return ""
    links = "".join(f"<li><a href='/{word.lower()}'>{word}</a></li>" for word in ("Account", "Help", "Settings"))
    return ("<script>setTimeout(() => { const nav = document.createElement('nav'); "
            "nav.setAttribute('aria-label', 'Account menu'); "
            f"nav.innerHTML = \"<ul>{links}</ul><button type='button'>Collapse menu</button>\"; "
            "document.body.prepend(nav); }, 700);</script>")
