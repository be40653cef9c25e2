"""Uploading files to any element, as a person would: a file input takes them directly; a drop zone
gets them dropped onto it (a real drop event carrying the files); an element that opens the file
chooser when clicked is clicked, and the chooser answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from webtask_core.browser import actions
from webtask_core.browser.actions import Target
from webtask_core.browser.scripts import load_script
from webtask_core.errors import ActionError, ConfigError

__all__ = ["upload", "set_files", "checked_files"]

# An empty file input of our own, never put into the page: Playwright sets the files on it from
# their paths (any size, no copy through the protocol), and the drop takes them from there.
_FILE_HOLDER = """() => {
  const input = document.createElement('input');
  input.type = 'file';
  input.multiple = true;
  return input;
}"""
_CHOOSER_WAIT_S = 2.0  # how long a click may take to open the file chooser


def _attached(files: list[Path], how: str) -> str:
    names = ", ".join(file.name for file in files)
    return how.format(count=f"{len(files)} files" if len(files) > 1 else "1 file") + f": {names}"


async def upload(target: Target, paths: Sequence[str | Path], timeout_s: float) -> str:
    """Give the files to the element: set them on a file input, drop them on a zone that takes a drop,
    else click it and answer the file chooser it opens; ActionError when it does none of these."""
    files = checked_files(paths)
    if target.info["type"] == "file":
        return await set_files(target, files, timeout_s)
    if target.info["editable"] or target.info["checkable"] or target.info["options"] is not None:
        raise ActionError(f"{target.element_id} is not a file input (it takes text or a choice); upload to a file "
                          "input, a drop zone, or an element that opens the file chooser")
    target.require_enabled()
    target = await actions.probe(target.frame, target.element_id, scroll=True)  # a drop lands on what shows
    if await _drop(target, files):
        return _attached(files, f"dropped {{count}} onto {target.element_id}")
    message = await _choose_by_click(target, files, timeout_s)
    if message is None:
        raise ActionError(
            f"{target.element_id} neither takes dropped files nor opens a file chooser when clicked; upload to "
            "an <input type=file> (hidden ones are listed too) or to the page's drop zone"
        )
    return message


async def _drop(target: Target, files: list[Path]) -> bool:
    target.require_point()
    x, y = target.info["client"]  # in the element's frame, where drop.js looks
    holder = await target.frame.evaluate_handle(_FILE_HOLDER)
    try:
        element = holder.as_element()
        assert element is not None  # the script returns an element
        await element.set_input_files(files)
        mark = await target.locator.element_handle()
        try:
            return bool(await target.frame.evaluate(load_script("drop.js"), [mark, element, x, y]))
        finally:
            await mark.dispose()
    finally:
        await holder.dispose()


async def _choose_by_click(target: Target, files: list[Path], timeout_s: float) -> str | None:
    page = target.frame.page
    try:
        async with page.expect_file_chooser(timeout=min(_CHOOSER_WAIT_S, timeout_s) * 1000) as chooser_info:
            await actions.click(target, timeout_s)
        chooser = await chooser_info.value
    except PlaywrightTimeoutError:
        return None
    if len(files) > 1 and not chooser.is_multiple():
        raise ActionError(f"the file chooser {target.element_id} opened takes a single file, but {len(files)} were given")
    await chooser.set_files(files, timeout=timeout_s * 1000)
    return _attached(files, f"clicked {target.element_id} and chose {{count}} in the file chooser it opened")


def checked_files(paths: Sequence[str | Path]) -> list[Path]:
    """The paths as files; ConfigError when none is given or one is not a file."""
    if not paths:
        raise ConfigError("paths", "give at least one file to upload")
    files = [Path(path) for path in paths]
    for file in files:
        if not file.is_file():
            raise ConfigError("paths", f"{file} does not exist or is not a file")
    return files


async def set_files(target: Target, paths: Sequence[str | Path], timeout_s: float) -> str:
    files = checked_files(paths)
    if target.info["type"] != "file":
        raise ActionError(f"{target.element_id} is not a file input; upload needs an element with type=\"file\"")
    target.require_enabled()
    if len(files) > 1 and not target.info["multiple"]:
        raise ActionError(f"{target.element_id} accepts a single file, but {len(files)} were given")
    await target.locator.set_input_files(files, timeout=timeout_s * 1000)
    names = ", ".join(file.name for file in files)
    count = f"{len(files)} files" if len(files) > 1 else "1 file"
    return f"attached {count} to {target.element_id}: {names}"
