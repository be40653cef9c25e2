"""One read-back: open the listing's own page in the run's browser context, read it, judge it.

With templates recorded beside the replay script (:mod:`~webtask_core.readback.templates`) the page
is checked in code, with no model call; without them, or when the page no longer fits them, one
structured-output call reads it (:mod:`~webtask_core.readback.reader`) and code compares. A reading
by the model that found everything as asked records the templates for the next runs.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from webtask_core.errors import ActionError
from webtask_core.llm.types import Usage
from webtask_core.readback.compare import compare_field, compare_pictures
from webtask_core.readback.locate import links_from_final_page, listing_links, names_listing, reported_url
from webtask_core.readback.page import page_lines
from webtask_core.readback.reader import ReadError, read_with_model
from webtask_core.readback.result import FieldCheck, ReadbackResult, ReadMethod
from webtask_core.readback.spec import ReadBack
from webtask_core.readback.templates import Inconclusive, check_templates, record_templates

if TYPE_CHECKING:
    from webtask_core.browser import BrowserTab
    from webtask_core.browser.models import Observation
    from webtask_core.llm.types import LLM
    from webtask_core.readback.store import TemplateStore

__all__ = ["read_back"]

logger = logging.getLogger(__name__)

_MODEL_SCREENSHOT_SCALE = 0.6  # as the worker sends pages to the model
_PICTURE_SCALE = 0.5  # the picture of a page that did not pass, for the result and its alert
_HTTP_ERROR = re.compile(r"\(HTTP ([45]\d\d)\)")  # how BrowserTab.navigate reports an error answer


class _NotFound(Exception):
    """The listing's page could not be found or opened."""


async def _open_listing(tab: BrowserTab, spec: ReadBack, output: Any, feedback: str, final_url: str,
                        final_tree: str) -> str:
    """Opens the listing's own page; returns how it was found."""
    url = reported_url(spec, output, feedback)
    how = "the URL the run reported"
    if url is None and final_url.startswith(("http://", "https://")):
        links = links_from_final_page(spec, final_tree, final_url)
        if len(links) == 1:
            url, how = links[0], "the link to it on the page the run ended on"
        elif not links and names_listing(spec, final_tree):
            url, how = final_url, "the page the run ended on"
    if url is None:
        search = spec.search_for()
        if search is None:
            raise _NotFound("the run reported no listing URL, its last page does not name the listing, "
                            "and no search_url is given to look it up")
        await _go(tab, search)
        found = listing_links(spec, (await tab.observe(stamp=False)).tree, tab.url)
        if len(found) != 1:
            raise _NotFound(f"the search at {search} finds {len(found) or 'no'} listing link(s) for it")
        url, how = found[0], f"the search at {search}"
    await _go(tab, url)
    return how


async def _go(tab: BrowserTab, url: str) -> None:
    try:
        message = await tab.navigate(url)
    except ActionError as error:  # blocked, not an http(s) URL, did not load in time
        raise _NotFound(f"cannot open {url}: {error}") from None
    answered = _HTTP_ERROR.search(message)
    if answered:  # a "not found" page shows nothing of the listing, whatever its heading says
        raise _NotFound(f"{url} answered HTTP {answered.group(1)}")


async def read_back(
    tab: BrowserTab,
    llm: LLM,
    spec: ReadBack,
    *,
    output: Any = None,
    feedback: str = "",
    final_url: str = "",
    final_tree: str = "",
    templates: TemplateStore | None = None,
    key: str | None = None,
    scrub: Callable[[str], str] = str,
    source: str = "",
) -> ReadbackResult:
    """Read the listing ``spec`` describes back from the site, in ``tab``'s browser context.

    ``output`` / ``feedback``: what the run reported (a URL field, a URL named); ``final_url`` / ``final_tree``: the page it
    ended on. ``templates`` / ``key``: where the page's templates are kept (a replay script's key).
    A TransientError (the browser or the model API failing) propagates: the caller may try again.
    """
    started = time.perf_counter()
    try:
        how = await _open_listing(tab, spec, output, feedback, final_url, final_tree)
    except _NotFound as why:
        result = ReadbackResult(status="unread", reason=f"the listing's page was not found: {why}", url=tab.url)
        return await _finish(result, tab, started)
    observation = await tab.observe(stamp=False)
    lines = page_lines(observation.tree)
    stored = await asyncio.to_thread(templates.load, key) if templates is not None and key else None
    if stored is not None:
        try:
            checks = check_templates(stored, lines, spec)
            result = _judged(checks, "templates", observation)
            result.templates = "checked"
            return await _finish(result, tab, started)
        except Inconclusive as why:
            logger.info("read-back of %s: the page no longer fits its templates (%s); the model reads it",
                        observation.url, why)
    shot = await tab.screenshot(marks=False, format="jpeg", quality=70, scale=_MODEL_SCREENSHOT_SCALE)
    try:
        reading, usage = await read_with_model(llm, spec, observation, shot, scrub)
    except ReadError as error:
        result = ReadbackResult(status="unread", method="model", url=observation.url, model_calls=1,
                                usage=error.usage, reason=str(error))
        return await _finish(result, tab, started)
    checks = [compare_field(name, value, reading.fields[name].shown, reading.fields[name].others, spec.asked_besides(name))
              for name, value in spec.expected.items()]
    if spec.picture_field:
        checks.append(compare_pictures(spec.picture_field, spec.fields[spec.picture_field], reading.pictures))
    result = _judged(checks, "model", observation, usage=usage)
    if result.status == "passed" and templates is not None and key:
        try:
            kept = record_templates(lines, spec, reading.fields, checks, reading.pictures, key=key, source=source)
        except Inconclusive as why:
            logger.info("read-back of %s: no templates kept (%s); the next runs read it with the model",
                        observation.url, why)
            result.templates = "unusable"
        else:
            # A page may show a secret (an echoed value): the stored lines hold its placeholder.
            kept.lines = [line.model_copy(update={"text": scrub(line.text)}) for line in kept.lines]
            await asyncio.to_thread(templates.save, kept)
            result.templates = "recorded"
    logger.debug("read-back of %s (found through %s): %s", observation.url, how, result.summary())
    return await _finish(result, tab, started)


def _judged(checks: list[FieldCheck], method: ReadMethod, observation: Observation, *,
            usage: Usage | None = None) -> ReadbackResult:
    """The verdict on what was read: a mismatch when a field differs; unread when none is shown."""
    shown = any(check.verdict != "not_shown" for check in checks)
    mismatch = any(check.verdict == "mismatch" for check in checks)
    return ReadbackResult(
        status="mismatch" if mismatch else "passed" if shown else "unread", method=method, url=observation.url,
        fields=checks, reason="" if shown else f"the page at {observation.url} shows none of the listing's fields",
        model_calls=1 if method == "model" else 0, usage=usage or Usage())


async def _finish(result: ReadbackResult, tab: BrowserTab, started: float) -> ReadbackResult:
    """The result with its time, and with a picture of the page when it did not pass."""
    if result.status != "passed":
        try:
            shot = await tab.screenshot(marks=False, format="jpeg", quality=60, scale=_PICTURE_SCALE)
            result.screenshot = base64.b64encode(shot).decode("ascii")
        except ActionError as error:
            logger.warning("no picture of the page the read-back saw: %s", error)
    result.duration_ms = round((time.perf_counter() - started) * 1000.0, 1)
    return result
