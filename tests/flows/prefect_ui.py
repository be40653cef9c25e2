"""A person in front of the Prefect UI a real server serves, driven in a real Chromium: answer a
paused run's form, and measure an artifact's table on its page."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from webtask_core.browser.chromium import CHROMIUM_ARGS, find_chromium

UI_TIMEOUT_MS = 90_000  # the UI's first load on a busy machine


@asynccontextmanager
async def ui_page(width: int = 1280, height: int = 900) -> AsyncIterator[Page]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=find_chromium(), args=list(CHROMIUM_ARGS),
                                                   headless=True)
        try:
            page = await browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(UI_TIMEOUT_MS)
            yield page
        finally:
            await browser.close()


@dataclass
class AnsweredForm:
    field_type: str | None  # the answer field's input type ("password": drawn as dots)
    typed: str  # what the field holds once typed (the code)
    shown_text: str  # every word the form shows on screen
    field_text: str  # what the answer field's own box shows as text
    screenshot: Path


async def answer_in_the_ui(page_url: str, answer: str, screenshot: Path) -> AnsweredForm:
    """Open the run's page, its menu's Resume, type ``answer`` in the form's Answer field, take a
    screenshot of the form and press Resume, as a person would."""
    async with ui_page() as page:
        await page.goto(page_url)
        await page.get_by_role("button", name="Open menu").first.click()
        await page.get_by_role("menuitem", name="Resume").click()
        dialog = page.get_by_role("dialog")
        field = dialog.get_by_label("Answer", exact=True)
        await field.fill(answer)
        await dialog.screenshot(path=str(screenshot))
        found = AnsweredForm(field_type=await field.get_attribute("type"), typed=await field.input_value(),
                             shown_text=await dialog.inner_text(),
                             field_text=await field.locator("xpath=ancestor::fieldset[1]").inner_text(),
                             screenshot=screenshot)
        await press_until_closed(dialog, field, answer)
        return found


async def press_until_closed(dialog: Any, field: Any, answer: str, attempts: int = 3) -> None:
    """Press the form's Resume until the dialog closes, as a person would when a busy server's UI
    leaves it open (a CI run at two processes saw it stay open 90 s after one press); the answer
    is typed again if the form lost it. Fails with what the dialog said each time."""
    said = []
    for _ in range(attempts):
        if await field.input_value() != answer:
            await field.fill(answer)
        await dialog.get_by_role("button", name="Resume", exact=True).click()
        try:
            await dialog.wait_for(state="hidden", timeout=UI_TIMEOUT_MS // attempts)
            return
        except PlaywrightTimeoutError:
            said.append(" ".join((await dialog.inner_text()).split()))
    raise AssertionError(f"the Resume dialog stayed open after {attempts} presses; it said: {said}")


async def artifact_table_widths(artifact_url: str, window: int) -> dict[str, Any]:
    """The artifact page's table in a ``window`` px wide window: how wide the page lets it be
    (``room``), where each column ends (``edges``, px from the table's left), its headers, and each
    row's cells (their text, and whether it shows whole)."""
    async with ui_page(width=window) as page:
        await page.goto(artifact_url)
        table = page.locator("table").first
        await table.wait_for()
        await page.wait_for_timeout(1000)  # the UI lays the table out once its fonts are in
        return await table.evaluate("""(table) => {
            const left = table.getBoundingClientRect().left;
            return {
                room: table.parentElement.clientWidth,
                edges: [...table.querySelectorAll('th')].map((cell) => cell.getBoundingClientRect().right - left),
                headers: [...table.querySelectorAll('th')].map((cell) => cell.innerText.trim()),
                cells: [...table.querySelectorAll('tbody tr')].map(
                    (row) => [...row.querySelectorAll('td')].map((cell) => ({
                        text: cell.innerText.trim(), fits: cell.scrollWidth <= cell.clientWidth + 1}))),
            };
        }""")
