"""How much page text does the model read, ours against browser-use's, at equal recall?

Pages from packages installed from the registries, not written for our code: long documentation
pages (pydoc's HTML for standard-library modules, as `python -m pydoc -w` writes them) and the
forms of MiniWoB++ (the `miniwob` package from PyPI, its tasks started as its own START button
does). One Chromium: ours observes each page in its tab (the default BrowserConfig: tree budget
and region as shipped); browser-use 0.13 (`pip install browser-use` into `.venv/bu`, see
scripts/bench-browser-use.sh) connects to the same Chromium over CDP and serializes the same page
in a tab of its own at our viewport, 1280x800 (DomService defaults: 1000 px beyond the viewport, paint-order filtering; the
text is `llm_representation()`, what its agent sends).

Ours is measured twice: with the default BrowserConfig (a tree that fits the budget is the whole
page, so a page a little under the budget shows far more than browser-use's region), and trimmed
to browser-use's region (1.25 viewports above and below, whatever the tree's length): `ratio` is
that one, the same region against the same region. The region's characters are split by kind
(indentation, text lines and their marks, ids, hrefs, attributes, link and control words,
structure lines, summary and scroll marks) per page group.

Recall: before either reads a page, every visible control within 1000 px of the viewport (browser-
use's region: links, buttons, inputs, selects, textareas, role=button/link/checkbox/tab, onclick) is
tagged; ours counts a tagged control whose element, or whose <label>, got an id; browser-use's, one
its selector map indexes. Tokens are estimated as characters / 4 (no tokenizer), for both alike.
With --base DIR (a checkout of another commit, e.g. `git worktree add /tmp/base main`), that
checkout's webtask_core observes the same pages in the same run (its own Chromium), as the baseline,
both ways, its region's kinds too.
Prints a table, then one line of JSON. Run: .venv/bin/python benchmarks/page_text.py [--base DIR]
Target (issue 29): ours <= 60 % of browser-use's characters on every page group, recall 100 %.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pydoc
import re
import socket
import statistics
import subprocess
import sys
import time
from importlib import import_module
from pathlib import Path
from typing import Any

from observe import serve

from webtask_core.browser import Browser, BrowserConfig, tree
from webtask_core.browser.scripts import MARK_ATTRIBUTE
from webtask_core.browser.tree import MARGINS

ROOT = Path(__file__).resolve().parent.parent
BU_PYTHON = ROOT / ".venv" / "bu" / "bin" / "python"
MINIWOB = ROOT / ".venv" / "miniwob-data" / "miniwob" / "html"
PYDOC_MODULES = ("os", "argparse", "collections", "email.message", "http.client", "tarfile")
MINIWOB_TASKS = ("login-user", "book-flight", "social-media", "email-inbox", "search-engine", "form-sequence-2",
                 "click-checkboxes-large", "use-autocomplete", "enter-date", "choose-list")
START_EPISODE = "Math.seedrandom('issue-29'); core.EPISODE_MAX_TIME = 1e9; core.startEpisodeReal();"  # one episode for both

NEED_JS = """() => {
  const query = 'a[href], button, input:not([type=hidden]), select, textarea, [role=button], [role=link], '
    + '[role=checkbox], [role=tab], [onclick]';
  let n = 0;
  for (const el of document.querySelectorAll(query)) {
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (!box.width || !box.height || style.visibility === 'hidden' || style.display === 'none') continue;
    if (box.bottom < -1000 || box.top > innerHeight + 1000) continue;
    el.setAttribute('data-need', String(++n));
  }
  return n;
}"""
FOUND_JS = """(mark) => [...document.querySelectorAll('[data-need]')].filter(
  (el) => el.hasAttribute(mark) || [...(el.labels || [])].some((label) => label.hasAttribute(mark))).length"""


_ID = re.compile(r"- ([a-z][a-z0-9]*-\d+)")
_HREF = re.compile(r' ?href="(?:[^"\\]|\\.)*"')
_ATTRIBUTES = re.compile(r' \((?:[^"()]|"(?:[^"\\]|\\.)*")*\)')


def kinds(text: str) -> dict[str, int]:
    """A tree's characters by what they are: indentation, line breaks, text lines (their words, and
    their `- text: "…"` or quotes), element lines (ids, hrefs, other attributes, the words of links and
    of other controls, each line's `- `), structure lines (`- group`, `- h2 "…"`), summary and scroll
    marks."""
    out = dict.fromkeys(("indent", "newlines", "text", "text_marks", "ids", "dashes", "hrefs", "attributes",
                         "link_words", "control_words", "structure", "marks"), 0)
    for line in text.split("\n"):
        body = line.lstrip(" ")
        out["indent"] += len(line) - len(body)
        out["newlines"] += 1
        element = _ID.match(body)
        if element:
            out["ids"] += len(element.group(1))
            out["dashes"] += 2
            rest = body[element.end():]
            href = _HREF.search(rest)
            if href:
                out["hrefs"] += len(href.group(0))
                rest = rest.replace(href.group(0), "", 1)
            shown = _ATTRIBUTES.match(rest)
            if shown:
                out["attributes"] += len(shown.group(0)) if shown.group(0) != " ()" else 3
                rest = rest[shown.end():]
            out["link_words" if element.group(1).startswith("a-") else "control_words"] += len(rest)
        elif body.startswith("- text: "):
            out["text_marks"] += 10
            out["text"] += len(body) - 10
        elif body.startswith(("- …", "- (")):
            out["marks"] += len(body)
        elif body.startswith("- "):
            out["structure"] += len(body)
        else:
            quoted = body.startswith('"')
            out["text_marks"] += 2 if quoted else 0
            out["text"] += len(body) - (2 if quoted else 0)
    out["newlines"] -= 1
    return out


def pydoc_pages() -> dict[str, str]:
    return {f"pydoc-{name}.html": pydoc.html.page(pydoc.describe(import_module(name)),
                                                   pydoc.html.document(import_module(name), name))
            for name in PYDOC_MODULES}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def miniwob_server() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(MINIWOB_PORT)],
                            cwd=MINIWOB, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


MINIWOB_PORT = free_port()


async def ours(browser: Browser, pages: list[tuple[str, str, str]], region: bool = False) -> dict[str, dict[str, object]]:
    """Each page's tree as the default BrowserConfig gives it; with `region`, trimmed to browser-use's
    region (1.25 viewports, 1,000 px, above and below the screen) whatever its length: the default
    keeps a tree that fits the budget whole, so a page can show more than browser-use's region."""
    if region:
        tree.MARGINS = (1.25,)  # the one rung, kept even over the budget (1,000 characters: always trimmed)
    tab = await browser.new_tab()
    out: dict[str, dict[str, object]] = {}
    for name, url, prepare in pages:
        await tab.navigate(url)
        page = tab.page
        assert page is not None
        if prepare:
            await page.evaluate(f"() => {{ {prepare} }}")
        needed = await page.evaluate(NEED_JS)
        await asyncio.sleep(0.3)
        observation = await tab.observe()
        found = await page.evaluate(FOUND_JS, MARK_ATTRIBUTE)
        out[name] = {"chars": len(observation.tree), "needed": needed, "found": found, "text": observation.tree}
    await tab.close()
    tree.MARGINS = MARGINS
    return out


def browser_use(cdp_url: str, pages: list[tuple[str, str, str]]) -> dict[str, dict[str, object]]:
    request = json.dumps({"cdp_url": cdp_url, "pages": pages, "need_js": NEED_JS,
                          "viewport": list(BrowserConfig().viewport)})
    done = subprocess.run([str(BU_PYTHON), str(Path(__file__).with_name("browser_use_text.py"))], input=request,
                          capture_output=True, text=True, timeout=600, check=False)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if len(rows) != len(pages):
        raise RuntimeError(f"browser-use answered {len(rows)} of {len(pages)} pages:\n{done.stderr[-3000:]}")
    for row in rows:  # the tag is ours, not browser-use's: not counted if it shows it
        row["chars"] = len(re.sub(r" ?data-need=\S+", "", row["text"]))
    return {row["name"]: row for row in rows}


def base_chars(base: Path, pages: list[tuple[str, str, str]]) -> dict[str, dict[str, Any]]:
    """Characters of each page's tree as another checkout's webtask_core writes it (a process of its own)."""
    done = subprocess.run([sys.executable, __file__, "--ours-only"], input=json.dumps(pages), capture_output=True,
                          text=True, timeout=600, check=False, cwd=Path(__file__).parent,
                          env={**os.environ, "PYTHONPATH": str(base.resolve())})
    if done.returncode:
        raise RuntimeError(f"the base checkout's observation failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.splitlines()[-1]))


async def ours_only(pages: list[tuple[str, str, str]]) -> dict[str, dict[str, object]]:
    """The --base side: both trees of each page (default, browser-use's region) and the region's kinds."""
    browser = await Browser.launch()
    trimmed = await Browser.launch(BrowserConfig(tree_budget_chars=1_000))
    try:
        default, region = await ours(browser, pages), await ours(trimmed, pages, region=True)
    finally:
        await browser.close()
        await trimmed.close()
    return {name: {"chars": default[name]["chars"], "region_chars": region[name]["chars"],
                   "kinds": kinds(str(region[name]["text"]))} for name in default}


async def main(dump: Path | None, checkout: Path | None = None) -> dict[str, object]:
    if not BU_PYTHON.exists() or not MINIWOB.exists():
        raise SystemExit("browser-use or MiniWoB++ missing: run scripts/bench-browser-use.sh first")
    docs = pydoc_pages()
    server = serve(docs, [""])
    web = miniwob_server()
    port = free_port()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    pages = [(name.removesuffix(".html"), base + name, "") for name in docs]
    pages += [(f"miniwob-{task}", f"http://127.0.0.1:{MINIWOB_PORT}/miniwob/{task}.html", START_EPISODE)
              for task in MINIWOB_TASKS]
    browser = await Browser.launch(BrowserConfig(extra_args=(f"--remote-debugging-port={port}",)))
    trimmed = await Browser.launch(BrowserConfig(tree_budget_chars=1_000))
    try:
        time.sleep(0.5)
        mine = await ours(browser, pages)
        same = await ours(trimmed, pages, region=True)
        theirs = await asyncio.to_thread(browser_use, f"http://127.0.0.1:{port}", pages)
        before = await asyncio.to_thread(base_chars, checkout, pages) if checkout else {}
    finally:
        await browser.close()
        await trimmed.close()
        server.shutdown()
        web.terminate()
        web.wait()
    results: dict[str, object] = {}
    for name, _url, _prepare in pages:
        a, b, r = mine[name], theirs[name], same[name]
        results[name] = {
            "ours_chars": a["chars"], "ours_tokens_est": int(a["chars"]) // 4, "ours_recall": f"{a['found']}/{a['needed']}",
            "bu_chars": b["chars"], "bu_tokens_est": int(b["chars"]) // 4, "bu_recall": f"{b['found']}/{b['needed']}",
            "default_ratio": round(int(a["chars"]) / max(1, int(b["chars"])), 2),
            "region_chars": r["chars"], "region_recall": f"{r['found']}/{r['needed']}",
            "ratio": round(int(r["chars"]) / max(1, int(b["chars"])), 2),
            **({"base_chars": before[name]["chars"], "base_region_chars": before[name]["region_chars"],
                "base_ratio": round(before[name]["region_chars"] / max(1, int(b["chars"])), 2)} if before else {}),
            "ours_found": a["found"], "needed": a["needed"], "kinds": kinds(str(r["text"])),
            **({"base_kinds": before[name]["kinds"]} if before else {}),
        }
        if dump:
            dump.mkdir(parents=True, exist_ok=True)
            (dump / f"{name}.ours.txt").write_text(str(a["text"]), encoding="utf-8")
            (dump / f"{name}.region.txt").write_text(str(r["text"]), encoding="utf-8")
            (dump / f"{name}.bu.txt").write_text(str(b["text"]), encoding="utf-8")
    return results


def report(results: dict[str, dict]) -> dict[str, object]:
    """Per page: the default tree, the tree at browser-use's region ('region', what 'ratio' compares),
    browser-use's; then per page group the totals and the region's characters by kind."""
    print(f"{'page':<32}{'default':>8}{'ratio':>6}{'region':>8}{'~tok':>6}{'recall':>8}{'bu chars':>9}{'~tok':>6}"
          f"{'recall':>8}{'ratio':>6}{'base':>7}{'ratio':>6}")
    for name, r in results.items():
        print(f"{name:<32}{r['ours_chars']:>8}{r['default_ratio']:>6.2f}{r['region_chars']:>8}{r['region_chars'] // 4:>6}"
              f"{r['region_recall']:>8}{r['bu_chars']:>9}{r['bu_tokens_est']:>6}{r['bu_recall']:>8}{r['ratio']:>6.2f}"
              f"{r.get('base_region_chars', ''):>7}{r.get('base_ratio', ''):>6}")
    summary: dict[str, object] = {}
    for group in ("pydoc", "miniwob"):
        rows = [r for name, r in results.items() if name.startswith(group)]
        ratios = [r["ratio"] for r in rows]
        bu = sum(r["bu_chars"] for r in rows)
        by_kind = {key: sum(r["kinds"][key] for r in rows) for key in rows[0]["kinds"]}
        region = sum(r["region_chars"] for r in rows)
        summary[group] = {"ratio_median": round(statistics.median(ratios), 2), "ratio_max": max(ratios),
                          "ratio_total": round(region / bu, 2), "region_chars": region, "bu_chars": bu,
                          "region_tokens_est": region // 4, "bu_tokens_est": bu // 4,
                          "default_ratio_total": round(sum(r["ours_chars"] for r in rows) / bu, 2),
                          "ours_recall_full": all(r["ours_found"] == r["needed"] for r in rows),
                          "region_recall_full": all(r["region_recall"] == f"{r['needed']}/{r['needed']}" for r in rows),
                          "kinds": by_kind}
        if all("base_chars" in r for r in rows):
            base_region = sum(r["base_region_chars"] for r in rows)
            summary[group]["base_region_chars"] = base_region
            summary[group]["base_region_tokens_est"] = base_region // 4
            summary[group]["base_ratio_total"] = round(base_region / bu, 2)
            summary[group]["base_default_ratio_total"] = round(sum(r["base_chars"] for r in rows) / bu, 2)
            summary[group]["base_kinds"] = {key: sum(r["base_kinds"][key] for r in rows) for key in rows[0]["kinds"]}
        print(f"{group}: characters by kind at browser-use's region (of {sum(by_kind.values())}; bu {bu}):", end="")
        for key, value in by_kind.items():
            before = summary[group].get("base_kinds", {}).get(key)  # type: ignore[attr-defined]
            print(f" {key} {value}" + (f" (base {before})" if before is not None else ""), end=";")
        print()
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path, help="write each page's two texts into this folder")
    parser.add_argument("--base", type=Path, help="a checkout of the commit to compare with (its webtask_core)")
    parser.add_argument("--ours-only", action="store_true", help=argparse.SUPPRESS)  # the --base side
    arguments = parser.parse_args()
    if arguments.ours_only:
        print(json.dumps(asyncio.run(ours_only([tuple(page) for page in json.load(sys.stdin)]))))
        raise SystemExit(0)
    started = time.perf_counter()
    figures = asyncio.run(main(arguments.dump, arguments.base))
    summary = report(figures)
    pages = {name: {key: value for key, value in row.items() if not key.endswith("kinds")} for name, row in figures.items()}
    print(json.dumps({"benchmark": "page_text", "seconds": round(time.perf_counter() - started, 1),
                      "summary": summary, "pages": pages}))
