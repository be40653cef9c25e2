"""How one line of the element tree writes a run of page text, and how a reader gets it back.

A text line is the words themselves at their depth (docs/internals.md §2): every other line starts
with ``- ``, so a line without it is text. Words that could be misread are quoted as an element's
name is (a leading ``- `` or quote, space at either end, a line break, a backslash). Before issue 29
a text line read ``- text: "..."``; `marked_line` writes a line back that way for readers that parse
that form, so one reader serves both.
"""

from __future__ import annotations

import re

__all__ = ["quote", "text_line", "marked_line", "marked_tree", "text_of", "text_lines"]

_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def quote(text: str) -> str:
    if '"' in text or "\\" in text:
        text = text.replace("\\", "\\\\").replace('"', '\\"')
    if "\n" in text:  # rich text's lines (observe.js writes them markdown-like): one tree line still
        text = text.replace("\n", "\\n")
    return f'"{text}"'


def text_line(text: str) -> str:
    """A run of text as a tree line's body (without its indentation)."""
    if not text or text.startswith(("- ", '"')) or text[0].isspace() or text[-1].isspace() or "\n" in text \
            or "\\" in text:
        return quote(text)
    return text


def marked_line(line: str) -> str:
    """A text line as ``- text: "..."`` (its indentation kept); any other line as it is."""
    body = line.lstrip(" ")
    if not body or body.startswith("- "):
        return line
    quoted = body if body.startswith('"') else quote(body)
    return f"{line[:len(line) - len(body)]}- text: {quoted}"


def marked_tree(tree: str) -> str:
    """A whole tree with its text lines written as ``- text: "..."``."""
    return "\n".join(marked_line(line) for line in tree.split("\n"))


def text_of(line: str) -> str | None:
    """The words of a text line (either form; quotes and escapes undone), else None."""
    body = marked_line(line).lstrip(" ")
    if not body.startswith('- text: "') or not body.endswith('"'):
        return None
    inner = body[len('- text: "'):-1]
    # One pass, as `quote` escaped: a backslash the page showed before an "n" stays a backslash and an "n".
    return _ESCAPED.sub(lambda match: "\n" if match[1] == "n" else match[1], inner) if "\\" in inner else inner


def text_lines(tree: str) -> list[str]:
    """The words of every text line of a tree, in order."""
    return [text for text in map(text_of, tree.split("\n")) if text is not None]
