"""A policy run written out as text (page URL, tree, reply) with the run's variable parts masked,
to compare against a golden file: the pages the model sees and what it answers, step by step."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from policy_loop import TinyLoop

from webtask_core.testing.request_view import latest_page, latest_url

GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("WEBTASK_UPDATE_GOLDEN") == "1"  # WEBTASK_UPDATE_GOLDEN=1 pytest ... rewrites them
_DRAFT_ID = re.compile(r"/listings/drafts/[0-9a-f]{16}")
_WHEN = re.compile(r"[A-Z][a-z]{2} \d{2}, \d{4} \d{2}:\d{2} UTC")


def mask(text: str, base_url: str) -> str:
    text = text.replace(base_url, "http://SITE")
    text = _DRAFT_ID.sub("/listings/drafts/DRAFT", text)
    return _WHEN.sub("DATE", text)


def transcript(loop: TinyLoop, base_url: str) -> str:
    lines = []
    for step, (request, reply) in enumerate(zip(loop.requests, loop.replies, strict=True), start=1):
        lines += [f"## step {step}: {latest_url(request)}", latest_page(request), f"> {reply.text}"]
        lines += [f"> {use.name} {json.dumps(use.input, ensure_ascii=False, sort_keys=True)}"
                  for use in reply.tool_uses]
        lines.append("")
    return mask("\n".join(lines), base_url)


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE_GOLDEN:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with WEBTASK_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(encoding="utf-8")
