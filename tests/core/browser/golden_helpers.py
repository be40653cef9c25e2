"""Golden trees: the exact tree text a page gives, kept in tests/core/browser/golden/NAME.txt."""

from __future__ import annotations

import os
import re
from pathlib import Path

from webtask_core.browser import Observation

GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("WEBTASK_UPDATE_GOLDEN") == "1"  # WEBTASK_UPDATE_GOLDEN=1 pytest ... rewrites them
INTERACTIVE_LINE = re.compile(r"^\s*- ([a-z][a-z0-9]*-\d+)\b")


def assert_golden(name: str, observation: Observation) -> None:
    path = GOLDEN / f"{name}.txt"
    text = observation.tree + "\n"
    if UPDATE_GOLDEN:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with WEBTASK_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(encoding="utf-8")


def block(tree: str, first: str) -> list[str]:
    """The line of `tree` that starts (after its indentation) with `first`, and every line under it."""
    lines = tree.splitlines()
    for index, line in enumerate(lines):
        if line.lstrip().startswith(first):
            depth = len(line) - len(line.lstrip())
            end = index + 1
            while end < len(lines) and len(lines[end]) - len(lines[end].lstrip()) > depth:
                end += 1
            return lines[index:end]
    raise AssertionError(f"no line starts with {first!r} in:\n{tree}")


def ids_in(lines: list[str]) -> list[str]:
    return [match.group(1) for line in lines if (match := INTERACTIVE_LINE.match(line))]


def parent_block(tree: str, line_text: str) -> list[str]:
    """The block (see `block`) of the nearest line above the one reading `line_text` that is less
    indented than it: the container it sits in."""
    lines = tree.splitlines()
    at = next(index for index, line in enumerate(lines) if line.strip() == line_text)
    depth = len(lines[at]) - len(lines[at].lstrip())
    for index in range(at - 1, -1, -1):
        if len(lines[index]) - len(lines[index].lstrip()) < depth:
            return block("\n".join(lines[index:]), lines[index].strip())
    raise AssertionError(f"{line_text!r} is at the top level")
