"""How much page text does the model read, ours against browser-use's, at equal recall?

Pages from packages installed from the registries, not written for our code: long documentation
pages (pydoc's HTML for standard-library modules, as `python -m pydoc -w` writes them) and the
forms of MiniWoB++ (the `miniwob` package from PyPI, its tasks started as its own START button
does). One Chromium: ours observes each page in its tab (the default BrowserConfig: tree budget
and region as shipped); browser-use 0.13 (`pip install browser-use` into `.venv/bu`, see
scripts/bench-browser-use.sh) connects to the same Chromium over CDP and serializes the same page
in a tab of its own at our viewport, 1280x800 (DomService defaults: 1000 px beyond the viewport, paint-order filtering; the
text is `llm_representation()`, what its agent sends).

Recall: before either reads a page, every visible control within 1000 px of the viewport (browser-
use's region: links, buttons, inputs, selects, textareas, role=button/link/checkbox/tab, onclick) is
tagged; ours counts a tagged control whose element, or whose <label>, got an id; browser-use's, one
its selector map indexes. Tokens are estimated as characters / 4 (no tokenizer), for both alike.
With --base DIR (a checkout of another commit, e.g. `git worktree add /tmp/base main`), that
checkout's webtask_core observes the same pages in the same run (its own Chromium), as the baseline.
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

from observe import serve

from webtask_core.browser import Browser, BrowserConfig
from webtask_core.browser.scripts import MARK_ATTRIBUTE

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


async def ours(browser: Browser, pages: list[tuple[str, str, str]]) -> dict[str, dict[str, object]]:
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


def base_chars(base: Path, pages: list[tuple[str, str, str]]) -> dict[str, int]:
    """Characters of each page's tree as another checkout's webtask_core writes it (a process of its own)."""
    done = subprocess.run([sys.executable, __file__, "--ours-only"], input=json.dumps(pages), capture_output=True,
                          text=True, timeout=600, check=False, cwd=Path(__file__).parent,
                          env={**os.environ, "PYTHONPATH": str(base.resolve())})
    if done.returncode:
        raise RuntimeError(f"the base checkout's observation failed:\n{done.stderr[-3000:]}")
    return {name: int(row["chars"]) for name, row in json.loads(done.stdout.splitlines()[-1]).items()}


async def ours_only(pages: list[tuple[str, str, str]]) -> dict[str, dict[str, object]]:
    browser = await Browser.launch()
    try:
        return await ours(browser, pages)
    finally:
        await browser.close()


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
    try:
        time.sleep(0.5)
        mine = await ours(browser, pages)
        theirs = await asyncio.to_thread(browser_use, f"http://127.0.0.1:{port}", pages)
        before = await asyncio.to_thread(base_chars, checkout, pages) if checkout else {}
    finally:
        await browser.close()
        server.shutdown()
        web.terminate()
        web.wait()
    results: dict[str, object] = {}
    for name, _url, _prepare in pages:
        a, b = mine[name], theirs[name]
        results[name] = {
            "ours_chars": a["chars"], "ours_tokens_est": int(a["chars"]) // 4, "ours_recall": f"{a['found']}/{a['needed']}",
            "bu_chars": b["chars"], "bu_tokens_est": int(b["chars"]) // 4, "bu_recall": f"{b['found']}/{b['needed']}",
            "ratio": round(int(a["chars"]) / max(1, int(b["chars"])), 2),
            **({"base_chars": before[name], "base_ratio": round(before[name] / max(1, int(b["chars"])), 2)}
               if before else {}),
            "ours_found": a["found"], "needed": a["needed"],
        }
        if dump:
            dump.mkdir(parents=True, exist_ok=True)
            (dump / f"{name}.ours.txt").write_text(str(a["text"]), encoding="utf-8")
            (dump / f"{name}.bu.txt").write_text(str(b["text"]), encoding="utf-8")
    return results


def report(results: dict[str, dict]) -> dict[str, object]:
    print(f"{'page':<34}{'ours chars':>11}{'~tok':>7}{'recall':>9}{'bu chars':>10}{'~tok':>7}{'recall':>9}{'ratio':>7}"
          f"{'base chars':>11}{'ratio':>7}")
    for name, r in results.items():
        print(f"{name:<34}{r['ours_chars']:>11}{r['ours_tokens_est']:>7}{r['ours_recall']:>9}{r['bu_chars']:>10}"
              f"{r['bu_tokens_est']:>7}{r['bu_recall']:>9}{r['ratio']:>7.2f}{r.get('base_chars', ''):>11}"
              f"{r.get('base_ratio', ''):>7}")
    summary: dict[str, object] = {}
    for group in ("pydoc", "miniwob"):
        rows = [r for name, r in results.items() if name.startswith(group)]
        ratios = [r["ratio"] for r in rows]
        summary[group] = {"ratio_median": round(statistics.median(ratios), 2), "ratio_max": max(ratios),
                          "ratio_total": round(sum(r["ours_chars"] for r in rows) / sum(r["bu_chars"] for r in rows), 2),
                          "ours_recall_full": all(r["ours_found"] == r["needed"] for r in rows)}
        if all("base_chars" in r for r in rows):
            summary[group]["base_ratio_total"] = round(sum(r["base_chars"] for r in rows) / sum(r["bu_chars"] for r in rows), 2)
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
    print(json.dumps({"benchmark": "page_text", "seconds": round(time.perf_counter() - started, 1),
                      "summary": summary, "pages": figures}))
