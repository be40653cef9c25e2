"""The markdown-like notation the tree shows an editable region's value in, turned into the HTML an
editor takes from a paste, and into plain text.

The notation is the tree's own (observe_names.js ``markdown``), not Markdown: ``__x__`` is underline
there, not bold. Lines are joined by newlines; a line is a paragraph unless it starts with ``# ``
(heading, one to six), ``> `` (quote), ``- `` (bullet item) or ``1. `` (numbered item), list items
nested by two spaces of indent. Inline: ``**bold**``, ``*italic*``, ``__underline__``,
``~~struck~~``, `` `code` ``, ``[text](href)``.
"""

from __future__ import annotations

import html
import re

__all__ = ["to_html", "to_plain", "same_text"]

_HEADING = re.compile(r"^(#{1,6}) (.*)$")
_ITEM = re.compile(r"^( *)(- |\d+\. )(.*)$")
_CODE = re.compile(r"`([^`]+)`")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
_INLINE = (
    (re.compile(r"\*\*(.+?)\*\*"), "strong"),
    (re.compile(r"__(.+?)__"), "u"),
    (re.compile(r"~~(.+?)~~"), "s"),
    (re.compile(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?![*\w])"), "em"),
)


def _inline(text: str) -> str:
    codes: list[str] = []

    def keep(match: re.Match[str]) -> str:
        codes.append(f"<code>{html.escape(match.group(1))}</code>")
        return f"\x00{len(codes) - 1}\x00"

    out = html.escape(_CODE.sub(keep, text), quote=False)
    out = _LINK.sub(lambda m: f'<a href="{html.escape(html.unescape(m.group(2)))}">{m.group(1)}</a>', out)
    for pattern, tag in _INLINE:
        out = pattern.sub(rf"<{tag}>\1</{tag}>", out)
    return re.sub("\x00(\\d+)\x00", lambda m: codes[int(m.group(1))], out)


def to_html(text: str) -> str:
    """The HTML of a text written in the tree's notation."""
    out: list[str] = []
    lists: list[tuple[int, str]] = []  # open lists: (indent, "ul" | "ol")

    def close_lists(indent: int) -> None:
        while lists and lists[-1][0] >= indent:
            out.append(f"</li></{lists.pop()[1]}>")

    for line in text.replace("\r\n", "\n").split("\n"):
        item = _ITEM.match(line)
        if item:
            indent, kind = len(item.group(1)), "ul" if item.group(2) == "- " else "ol"
            while lists and (lists[-1][0] > indent or (lists[-1][0] == indent and lists[-1][1] != kind)):
                out.append(f"</li></{lists.pop()[1]}>")
            if lists and lists[-1][0] == indent:
                out.append("</li>")
            else:
                out.append(f"<{kind}>")
                lists.append((indent, kind))
            out.append(f"<li>{_inline(item.group(3))}")
            continue
        close_lists(0)
        if not line.strip():
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif line.startswith("> "):
            out.append(f"<blockquote><p>{_inline(line[2:])}</p></blockquote>")
        else:
            out.append(f"<p>{_inline(line)}</p>")
    close_lists(0)
    return "".join(out)


def to_plain(text: str) -> str:
    """The text without its marks (what a paste of plain text would give)."""
    plain = _LINK.sub(lambda m: m.group(1), text)
    for pattern, _ in _INLINE:
        plain = pattern.sub(lambda m: m.group(1), plain)
    return _CODE.sub(lambda m: m.group(1), plain)


def same_text(asked: str, shown: str) -> bool:
    """Whether an editor shows what was asked: the same lines, spacing inside them aside."""
    def lines(text: str) -> list[str]:
        return [" ".join(line.split()) for line in text.split("\n") if line.strip()]

    return lines(asked) == lines(shown)
