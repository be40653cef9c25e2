"""browser-use's page text for the pages page_text.py names: run by page_text.py in the venv that has
browser-use (`.venv/bu`, see page_text.py), against the Chromium page_text.py launched (its CDP url).

Reads JSON from stdin: {"cdp_url": ..., "pages": [[name, url, prepare_js], ...], "need_js": ...,
"viewport": [width, height]}; for each page it opens the url in a tab of its own at that viewport,
runs the page's preparation and the script that tags the controls a task needs (data-need="N"),
takes browser-use's serialized DOM (DomService with its defaults: viewport threshold 1000 px,
paint-order filtering) and its text as the agent sends it to the model (`llm_representation()`
with the default attributes). Prints one JSON line per page: {name, chars, needed, found,
viewport, text}, where found counts the tagged controls browser-use gave an index.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys

from browser_use.browser.session import BrowserSession
from browser_use.dom.service import DomService


async def main(request: dict) -> None:
    session = BrowserSession(cdp_url=request["cdp_url"])
    await session.start()
    try:
        for name, url, prepare in request["pages"]:
            await session.navigate_to(url, new_tab=True)
            await asyncio.sleep(0.5)
            page = await session.must_get_current_page()
            await page.set_viewport_size(*request["viewport"])  # ours: the same screen, the same region
            if prepare:
                await page.evaluate(f"() => {{ {prepare} }}")
            needed = int(await page.evaluate(request["need_js"]))
            viewport = await page.evaluate("() => [innerWidth, innerHeight]")
            await asyncio.sleep(0.3)
            state, _, _ = await DomService(session).get_serialized_dom_tree()
            text = state.llm_representation()
            found = set()
            for node in state.selector_map.values():
                mark = (node.attributes or {}).get("data-need")
                if mark:
                    found.add(mark)
            print(json.dumps({"name": name, "chars": len(text), "needed": needed, "found": len(found), "viewport": viewport,
                              "text": text}), flush=True)
    finally:
        await session.kill()


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    asyncio.run(main(json.load(sys.stdin)))
