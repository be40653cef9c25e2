"""Is this tree's observe.js pass slower than another commit's? Both passes run in the same page,
interleaved (A B, B A, ...), timed inside the page, so a busy machine slows both alike.

For observe.py's pages (the bundled test pages and the generated large page), it prints per page the
median and p10 of each pass in ms, their change in percent, and the size of what each returns (the
same size: the same tree). The target: no page slower than +5 %. p10 is the figure to trust on a
loaded machine (a median moves with whatever else runs). Prints one line of JSON at the end.
Run: .venv/bin/python benchmarks/observe_ab.py [--base main] [--runs 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
from pathlib import Path

from observe import BUNDLED, large_page, serve

from webtask_core.browser import Browser
from webtask_core.browser.scripts import FRAME_ATTRIBUTE, MARK_ATTRIBUTE, load_script

SCRIPTS = "webtask_core/browser/"
_TIMED = """([which, opts]) => {
  const pass = window[Symbol.for('webtask.ab.' + which)];
  const started = performance.now();
  const size = pass(opts).length;
  return [performance.now() - started, size];
}"""
_INSTALL = "([which, source]) => { window[Symbol.for('webtask.ab.' + which)] = eval(source); }"


def base_script(ref: str) -> str:
    """observe.js at `ref`, with its parts included as load_script does."""
    root = Path(__file__).resolve().parent.parent

    def show(name: str) -> str:
        return subprocess.run(["git", "show", f"{ref}:{SCRIPTS}{name}"], cwd=root, check=True, capture_output=True,
                              text=True).stdout

    return re.sub(r"^[ \t]*// @include ([\w.]+)[ \t]*$", lambda match: show(match.group(1)), show("observe.js"),
                  flags=re.MULTILINE)


def _figures(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"median": round(statistics.median(ordered), 2), "p10": round(ordered[len(ordered) // 10], 2)}


async def main(base_ref: str, runs: int) -> dict[str, object]:
    other_origin = [""]
    server = serve({"large.html": large_page()}, other_origin)
    other = serve({}, other_origin)
    other_origin[0] = f"http://localhost:{other.server_address[1]}"
    origin = f"http://127.0.0.1:{server.server_address[1]}/"
    sources = {"base": base_script(base_ref), "new": load_script("observe.js")}
    options = {"mark": MARK_ATTRIBUTE, "frameAttribute": FRAME_ATTRIBUTE, "textMax": 100, "valueMax": 100,
               "positions": True, "stamp": True}
    browser = await Browser.launch()
    results: dict[str, object] = {}
    try:
        tab = await browser.new_tab()
        for name in (*BUNDLED, "large.html"):
            await tab.navigate(origin + name)
            page = tab.page
            assert page is not None
            for which, source in sources.items():
                await page.evaluate(_INSTALL, [which, source])
            times: dict[str, list[float]] = {"base": [], "new": []}
            sizes: dict[str, int] = {}
            for index in range(runs * (3 if name == "large.html" else 10)):
                for which in ("base", "new") if index % 2 else ("new", "base"):
                    elapsed, size = await page.evaluate(_TIMED, [which, options])
                    times[which].append(elapsed)
                    sizes[which] = size
            base, new = _figures(times["base"]), _figures(times["new"])
            results[name] = {
                "base_ms": base, "new_ms": new,
                "median_change_pct": round(100 * (new["median"] / base["median"] - 1), 1),
                "p10_change_pct": round(100 * (new["p10"] / base["p10"] - 1), 1),
                "result_chars": sizes,
            }
            print(f"{name:16} base {base}  new {new}  change median {results[name]['median_change_pct']:+.1f} % "  # type: ignore[index]
                  f"p10 {results[name]['p10_change_pct']:+.1f} %  chars {sizes}", flush=True)  # type: ignore[index]
    finally:
        await browser.close()
        server.shutdown()
        other.shutdown()
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="the commit to compare with (default: main)")
    parser.add_argument("--runs", type=int, default=10, help="passes per page and side, x10 small pages, x3 the large one")
    arguments = parser.parse_args()
    figures = asyncio.run(main(arguments.base, arguments.runs))
    print(json.dumps({"benchmark": "observe_ab", "base": arguments.base, "pages": figures}))
