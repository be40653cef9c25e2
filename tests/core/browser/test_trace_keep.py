"""A trace its owner will not keep is ended unsaved, unless the run then ends on an error.

Real Chromium, a real Playwright trace through BrowserRuntime: a clean run under retain-on-failure
(``keep`` False) writes no zip at all (saving and scrubbing one to delete it cost ~0.3 s a listing);
a runtime leaving on an exception saves it whatever was decided before, so a run failing after its
task completed (its session could not be stored) still has its trace.
"""

from __future__ import annotations

import zipfile

import pytest

from webtask_core.browser.runtime import BrowserRuntime
from webtask_core.browser.tracing import TraceRecorder


async def _traced_visit(runtime: BrowserRuntime, url: str) -> None:
    tab = await runtime.open(url)
    await tab.observe()


async def test_a_trace_nobody_keeps_is_not_written(browser, sites, tmp_path):
    tracer = TraceRecorder(tmp_path / "traces")
    async with BrowserRuntime(browser=browser, tracer=tracer) as runtime:
        await _traced_visit(runtime, sites.url("clickables.html"))
        tracer.keep = False
    assert tracer.parts == [] and tracer.discarded == 1
    assert not (tmp_path / "traces").exists()


async def test_a_runtime_leaving_on_an_error_saves_the_trace_it_was_told_to_drop(browser, sites, tmp_path):
    tracer = TraceRecorder(tmp_path / "traces")
    with pytest.raises(OSError, match="session store"):
        async with BrowserRuntime(browser=browser, tracer=tracer) as runtime:
            await _traced_visit(runtime, sites.url("clickables.html"))
            tracer.keep = False  # the task completed...
            raise OSError("the session store refused the write")  # ...and the run failed after that
    (path,) = tracer.parts
    assert tracer.discarded == 0
    with zipfile.ZipFile(path) as trace:
        assert "trace.trace" in trace.namelist()
        assert sites.url("clickables.html").encode() in trace.read("trace.trace")
