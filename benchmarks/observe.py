"""How fast is an observation, and how big is the tree the model reads?

For a few test pages and a generated large page (~10,000 elements, ~2,000 interactive, with a table
of inputs), this measures in one run, interleaved so machine noise hits both alike:

- observe(): median and p10/p90 wall time (the first, cold observation of a fresh page separately),
- the tree: characters, estimated tokens (characters / 4, a rough rule of thumb, not a tokenizer),
  number of interactive ids,
- screenshot(marks=True, jpeg): median time,
- page.content() on the same page as the baseline.

Every page is observed with the default BrowserConfig (tree budget DEFAULT_TREE_BUDGET_CHARS); the
large page also with no budget (the whole tree, what every step paid before the budget), interleaved
with the budgeted observations, and once more scrolled to its middle.

Targets: large-page observe within 3x of page.content() and under 150 ms. Prints a table, then one
line of JSON. Run: .venv/bin/python benchmarks/observe.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from webtask_core.browser import Browser, BrowserConfig, BrowserTab, Observation
from webtask_core.browser.models import DEFAULT_TREE_BUDGET_CHARS

TEST_PAGES = Path(__file__).resolve().parent.parent / "tests" / "core" / "browser" / "pages"
BUNDLED = ("form.html", "clickables.html", "long.html", "frames.html")

# Class lists like a utility-CSS site: real pages carry this much markup per element.
ROW = "flex items-center justify-between gap-2 px-4 py-2 border-b border-gray-200"
CELL = "px-3 py-2 text-sm text-gray-700 whitespace-nowrap"
FIELD = "block w-full rounded-md border-gray-300 shadow-sm focus:border-indigo-500 sm:text-sm"
BUTTON = "inline-flex items-center rounded-md bg-indigo-600 px-3 py-2 text-sm font-semibold text-white"
ICON = '<svg class="h-4 w-4" viewBox="0 0 20 20" aria-hidden="true"><path d="M10 3a7 7 0 100 14 7 7 0 000-14z"/></svg>'


def large_page(rows: int = 200, cards: int = 165) -> str:
    """~10,000 elements, ~2,000 interactive: nav, filters, a table of inputs, product cards, footer."""
    out = ['<!doctype html><html><head><title>Seller dashboard</title><style>',
           ".fav{cursor:pointer}.card{border:1px solid #ddd;margin:4px;padding:6px}",
           "</style></head><body>"]
    out.append(f'<header class="{ROW}"><nav aria-label="Main"><ul class="flex gap-4">')
    out += [f'<li class="text-sm"><a class="hover:underline" href="/category/{i}">Category {i}</a></li>' for i in range(40)]
    out.append(f'</ul></nav><form role="search"><input class="{FIELD}" name="q" placeholder="Search listings">'
               f'<button class="{BUTTON}" type="submit">{ICON}<span class="sr-only">Search</span></button></form></header>')
    out.append('<div class="flex"><aside class="w-64 p-4"><h2 class="text-lg">Filters</h2>')
    out += [f'<div class="flex items-center gap-2"><input id="f{i}" type="checkbox" class="h-4 w-4" name="filter">'
            f'<label for="f{i}" class="text-sm">Filter option {i}</label></div>' for i in range(30)]
    out.append('</aside><main class="flex-1 p-4"><h1 class="text-2xl">Inventory</h1><table class="min-w-full"><thead><tr>')
    out += [f'<th class="{CELL}">{name}</th>' for name in ("SKU", "Title", "Qty", "Price", "Condition", "Live", "")]
    out.append("</tr></thead><tbody>")
    for r in range(rows):
        out.append(
            f'<tr class="hover:bg-gray-50" data-row="{r}"><td class="{CELL}"><div class="flex items-center">'
            f'<span class="font-mono">SKU-{r:05d}</span><span class="ml-2 rounded px-1 text-xs">in stock</span></div></td>'
            f'<td class="{CELL}"><input class="{FIELD}" name="title-{r}" value="Vintage item number {r}"></td>'
            f'<td class="{CELL}"><input class="{FIELD}" type="number" name="qty-{r}" value="{r % 7}"></td>'
            f'<td class="{CELL}"><div class="relative"><span class="absolute left-0 pl-2">$</span>'
            f'<input class="{FIELD}" name="price-{r}" placeholder="0.00"></div></td>'
            f'<td class="{CELL}"><select class="{FIELD}" name="cond-{r}"><option>New</option><option>Like new</option>'
            f"<option>Good</option><option>Fair</option></select></td>"
            f'<td class="{CELL}"><div class="flex justify-center">'
            f'<input type="checkbox" class="h-4 w-4" name="live-{r}"></div></td>'
            f'<td class="{CELL}"><button class="{BUTTON}" type="button">Save</button></td></tr>'
        )
    out.append('</tbody></table><section class="grid grid-cols-4 gap-4">')
    for c in range(cards):
        out.append(
            f'<div class="card rounded-lg shadow" data-id="{c}"><div class="aspect-square overflow-hidden">'
            f'<img src="data:," alt="Photo of listing {c}" width="80" height="80"></div>'
            f'<div class="p-2"><h3 class="text-sm font-medium"><a href="/listing/{c}">Listing {c}: hand-made leather bag</a></h3>'
            f'<p class="text-xs text-gray-500">Gently used, <b>ships</b> in <i>two</i> days. Seller rating 4.{c % 10}.</p>'
            f'<div class="flex justify-between"><span class="price">${c}.99</span>'
            f'<span class="text-xs">Free shipping</span></div>'
            f'<ul class="flex gap-1 text-xs"><li><span>Size M</span></li><li><span>Brown</span></li>'
            f'<li><span>Leather</span></li></ul>'
            f'<div class="flex items-center"><div class="flex"><span>★</span><span>★</span><span>★</span></div>'
            f'<span class="text-xs text-gray-400">seller{c}</span></div>'
            f'<div class="flex gap-2"><button class="{BUTTON}" type="button" title="Share">{ICON}</button>'
            f'<button class="{BUTTON}" type="button">Add to cart</button><span class="fav">Save</span></div></div></div>'
        )
    out.append('</section></main></div><footer class="grid grid-cols-4 gap-4 p-8">')
    for col in range(4):
        out.append(f'<div><h4 class="font-semibold">Column {col}</h4><ul>')
        out += [f'<li><a class="text-sm" href="/help/{col}/{i}">Help topic {i}</a></li>' for i in range(15)]
        out.append("</ul></div>")
    out.append("</footer></body></html>")
    return "".join(out)


def serve(pages: dict[str, str], other_origin: list[str]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def do_GET(self) -> None:  # noqa: N802
            name = self.path.split("?")[0].lstrip("/")
            if name in pages:
                body = pages[name]
            elif (TEST_PAGES / name).is_file():
                body = (TEST_PAGES / name).read_text(encoding="utf-8")
            else:
                self.send_error(404)
                return
            data = body.replace("{{OTHER_ORIGIN}}", other_origin[0]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await action()
    return (time.perf_counter() - started) * 1000


def spread(samples: list[float]) -> dict[str, float]:
    deciles = statistics.quantiles(samples, n=10, method="inclusive")
    return {"median": round(statistics.median(samples), 1), "p10": round(deciles[0], 1), "p90": round(deciles[-1], 1)}


def tree_figures(observation: Observation) -> dict[str, int]:
    return {"ids": len(observation.elements), "tree_chars": len(observation.tree), "tree_tokens_est": len(observation.tree) // 4}


async def measure(
    session: BrowserTab, url: str, runs: int, shots: int, whole: BrowserTab | None = None
) -> dict[str, object]:
    """Figures for one page; with `whole` (a session without a tree budget) its observations too."""
    await session.navigate(url)
    page = session.page
    assert page is not None
    cold = await timed(session.observe)
    if whole is not None:
        await whole.navigate(url)
        await whole.observe()
    observe_ms, content_ms, whole_ms = [], [], []
    for _ in range(runs):  # interleaved: all see the same machine noise
        observe_ms.append(await timed(session.observe))
        content_ms.append(await timed(page.content))
        if whole is not None:
            whole_ms.append(await timed(whole.observe))
    observation = await session.observe()
    screenshot_ms = [await timed(lambda: session.screenshot(marks=True, format="jpeg", quality=70)) for _ in range(shots)]
    elements = await page.evaluate("document.getElementsByTagName('*').length")
    observe, content = spread(observe_ms), spread(content_ms)
    figures: dict[str, object] = {
        "elements": elements,
        **tree_figures(observation),
        "html_chars": len(await page.content()),
        "observe_cold_ms": round(cold, 1),
        "observe_ms": observe,
        "content_ms": content,
        "observe_over_content": round(observe["median"] / content["median"], 2),
        "screenshot_ms": spread(screenshot_ms) if shots >= 2 else {"median": round(screenshot_ms[0], 1)},
    }
    if whole is not None:
        figures["no_budget"] = {**tree_figures(await whole.observe()), "observe_ms": spread(whole_ms)}
        await page.evaluate("window.scrollTo(0, (document.scrollingElement.scrollHeight - innerHeight) / 2)")
        middle = await session.observe()
        figures["middle"] = {**tree_figures(middle), "scroll": middle.scroll}
    return figures


async def main(runs: int) -> dict[str, object]:
    other_origin = [""]
    server = serve({"large.html": large_page()}, other_origin)
    other = serve({}, other_origin)
    other_origin[0] = f"http://localhost:{other.server_address[1]}"
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    browser = await Browser.launch()
    unbudgeted = await Browser.launch(BrowserConfig(tree_budget_chars=None))
    results: dict[str, object] = {}
    try:
        session, whole = await browser.new_tab(), await unbudgeted.new_tab()
        for name in (*BUNDLED, "large.html"):
            large = name == "large.html"
            results[name] = await measure(
                session, base + name, runs * 2 if large else runs, 10 if large else 3, whole if large else None
            )
        await session.close()
        await whole.close()
    finally:
        await browser.close()
        await unbudgeted.close()
        server.shutdown()
        other.shutdown()
    return results


def _span(figures: dict[str, float]) -> str:
    return f"{figures['median']:.1f} [{figures['p10']:.1f}-{figures['p90']:.1f}]"


def report(results: dict[str, dict]) -> None:
    header = (f"{'page':<16}{'elements':>9}{'ids':>6}{'tree chars':>11}{'~tokens':>9}  {'observe ms med [p10-p90]':<26}"
              f"{'cold':>7}  {'content() ms med [p10-p90]':<28}{'ratio':>6}{'shot ms':>9}")
    print(header)
    print("-" * len(header))
    for name, r in results.items():
        print(f"{name:<16}{r['elements']:>9}{r['ids']:>6}{r['tree_chars']:>11}{r['tree_tokens_est']:>9}  "
              f"{_span(r['observe_ms']):<26}{r['observe_cold_ms']:>7.1f}  {_span(r['content_ms']):<28}"
              f"{r['observe_over_content']:>6.2f}{r['screenshot_ms']['median']:>9.1f}")
    large = results["large.html"]
    observe_ms, ratio = large["observe_ms"]["median"], large["observe_over_content"]
    whole, middle = large["no_budget"], large["middle"]
    print()
    print(f"large page, tree budget {DEFAULT_TREE_BUDGET_CHARS} (default): {large['tree_chars']} chars "
          f"(~{large['tree_tokens_est']} tokens), {large['ids']} ids, observe {_span(large['observe_ms'])} ms; "
          f"scrolled to the middle: {middle['tree_chars']} chars (~{middle['tree_tokens_est']} tokens), {middle['ids']} ids")
    print(f"large page, no budget (whole tree): {whole['tree_chars']} chars (~{whole['tree_tokens_est']} tokens), "
          f"{whole['ids']} ids, observe {_span(whole['observe_ms'])} ms")
    print(f"  scroll text at the middle: {middle['scroll']}")
    print("tokens are estimated as characters / 4; 'cold' is the first observation of the freshly loaded page; "
          "'ratio' is observe median / page.content() median.")
    print(f"large page: observe {observe_ms} ms (target < 150 ms: {'met' if observe_ms < 150 else 'MISSED'}), "
          f"{ratio}x page.content() (target <= 3x: {'met' if ratio <= 3 else 'MISSED'})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="observations per page (the large page gets twice as many)")
    arguments = parser.parse_args()
    started = time.perf_counter()
    figures = asyncio.run(main(arguments.runs))
    report(figures)
    print(json.dumps({"benchmark": "observe", "seconds": round(time.perf_counter() - started, 1), "pages": figures}))
