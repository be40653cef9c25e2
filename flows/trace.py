"""A Playwright trace of every ``run-webtask`` run, kept where a person will want it.

Every run records one (:class:`~webtask_core.browser.tracing.TraceRecorder`: actions grouped by
step, a screenshot film strip, DOM snapshots; secrets scrubbed out). What happens to it at the end
is ``WEBTASK_TRACE`` (Playwright's own words):

- ``retain-on-failure`` (default): kept when the run did not complete, or when replay handed over
  to the model (the site changed, or the item did); a clean run's trace is dropped;
- ``on``: always kept;
- ``off``: not recorded at all.

``WEBTASK_TRACE_FILM_STRIP`` (``off`` by default, ``on``): whether the trace records the screencast
film strip beside its DOM snapshots. Off, because the film strip is most of what a trace costs Chromium
(JPEG frames while the page paints, kept or not: ~0.6 CPU-s of a demo listing's ~2.5) and shows nothing
the rest does not: the DOM snapshots show the page before and after each action, and the step artifacts
show each step's picture. ``on`` adds it (as frames, no secret readable: webtask_core.browser.tracing).

Kept traces go to ``WEBTASK_TRACE_STORE`` (a folder or ``s3://bucket/prefix``), else beside the step
pictures when ``WEBTASK_SCREENSHOT_STORE`` is set, else ``~/.webtask/traces``; as
``<store>/<flow run id>/trace.zip`` (``trace-2.zip``... when the run's browser was reopened after a
crash). On S3 the run links it with a presigned URL (``WEBTASK_SCREENSHOT_URL_DAYS``). The summary
artifact shows the command that opens it: ``playwright show-trace <path or URL>``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from pathlib import Path
from types import TracebackType
from typing import Literal

from webtask_core.browser.tracing import TraceRecorder
from webtask_core.errors import ConfigError
from webtask_core.scratch import owned_temp_folder, remove_stale_folders
from webtask_core.storage import is_s3_uri
from webtask_flows.screenshots import ScreenshotStore, s3_store_from_uri, screenshot_store_from_env

__all__ = ["TraceMode", "TraceSettings", "RunTrace", "trace_settings_from_env", "TRACE_ENV", "TRACE_STORE_ENV",
           "TRACE_FILM_STRIP_ENV"]

logger = logging.getLogger(__name__)

TRACE_ENV = "WEBTASK_TRACE"
TRACE_STORE_ENV = "WEBTASK_TRACE_STORE"
TRACE_FILM_STRIP_ENV = "WEBTASK_TRACE_FILM_STRIP"
TraceMode = Literal["off", "on", "retain-on-failure"]
_MODES: tuple[TraceMode, ...] = ("off", "on", "retain-on-failure")
_SCRATCH_PREFIX = "webtask-trace-"


def default_trace_folder() -> Path:
    return Path.home() / ".webtask" / "traces"


class TraceSettings:
    """``mode`` and where kept traces go: a folder, or an S3 store (presigned links)."""

    def __init__(self, mode: TraceMode = "retain-on-failure", *, folder: Path | None = None,
                 s3: ScreenshotStore | None = None, film_strip: bool = False):
        self.mode = mode
        self.film_strip = film_strip
        self.folder = folder if folder is not None or s3 is not None else default_trace_folder()
        self.s3 = s3

    def __repr__(self) -> str:
        where = self.s3.location.uri if self.s3 is not None else str(self.folder)
        return f"TraceSettings({self.mode!r}, {where!r}{', film_strip=True' if self.film_strip else ''})"

    async def keep(self, flow_run_id: str, parts: list[Path]) -> list[str]:
        """Store the trace parts of a run; returns where each went (a path, or a presigned URL)."""
        places = []
        for part in parts:
            if self.s3 is not None:
                body = await asyncio.to_thread(part.read_bytes)
                places.append(await self.s3.put_bytes(flow_run_id, part.name, body, content_type="application/zip"))
            else:
                assert self.folder is not None
                target = self.folder.expanduser() / flow_run_id / part.name
                await asyncio.to_thread(_copy, part, target)
                places.append(str(target.resolve()))
        return places


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def trace_settings_from_env() -> TraceSettings:
    """``WEBTASK_TRACE``, ``WEBTASK_TRACE_STORE`` and ``WEBTASK_TRACE_FILM_STRIP`` (a bad value is a
    ConfigError naming it)."""
    mode = (os.environ.get(TRACE_ENV) or "retain-on-failure").strip()
    if mode not in _MODES:
        raise ConfigError(TRACE_ENV, f"must be one of {', '.join(_MODES)}, got {mode!r}")
    film_strip = (os.environ.get(TRACE_FILM_STRIP_ENV) or "off").strip()
    if film_strip not in ("on", "off"):
        raise ConfigError(TRACE_FILM_STRIP_ENV, f"must be 'on' or 'off', got {film_strip!r}")
    where = (os.environ.get(TRACE_STORE_ENV) or "").strip()
    if is_s3_uri(where):
        store = TraceSettings(mode, s3=s3_store_from_uri(where, setting=TRACE_STORE_ENV))
    elif where:
        store = TraceSettings(mode, folder=Path(where))
    else:
        store = TraceSettings(mode, s3=screenshot_store_from_env())  # beside the pictures, else the default folder
    store.film_strip = film_strip == "on"
    return store


class RunTrace:
    """``async with RunTrace(settings, flow_run_id, scrub=...)`` around the run's browser runtime
    (entered before it, so it ends after the runtime saved the trace). Call :meth:`outcome` once the
    task ended; on leaving, a trace worth keeping is stored and ``locations`` says where."""

    def __init__(self, settings: TraceSettings, flow_run_id: str | None, *, title: str = ""):
        self.settings = settings
        self.flow_run_id = flow_run_id or "no-flow-run"
        self.title = title
        self.recorder: TraceRecorder | None = None
        self.locations: list[str] = []
        self._keep_reason: str | None = None
        self._folder: Path | None = None

    async def __aenter__(self) -> RunTrace:
        if self.settings.mode != "off":
            # Named after this process: the next run removes what a killed one left (webtask_core.scratch).
            await asyncio.to_thread(remove_stale_folders, _SCRATCH_PREFIX)
            self._folder = owned_temp_folder(_SCRATCH_PREFIX)
            self.recorder = TraceRecorder(self._folder, title=self.title, screenshots=self.settings.film_strip)
        return self

    def outcome(self, *, completed: bool, handed_over: bool) -> None:
        """What the task ended as: decides whether the trace is kept."""
        if self.settings.mode == "on":
            self._keep_reason = "always kept (WEBTASK_TRACE=on)"
        elif not completed:
            self._keep_reason = "the task did not complete"
        elif handed_over:
            self._keep_reason = "replay handed over to the model"
        if self._keep_reason is None and self.recorder is not None:
            # Dropped at the end anyway: the browser ends the trace without saving and scrubbing it
            # (~0.3 s a listing). A run that still fails after this keeps it (BrowserRuntime's exit).
            self.recorder.keep = False

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        try:
            if self.recorder is None or not self.recorder.parts:
                return
            from prefect.exceptions import PrefectSignal

            if isinstance(exc, PrefectSignal):  # a pause or suspension (a person's answer), not a failure
                exc = None
            if exc is not None and self._keep_reason is None:
                self._keep_reason = f"the run failed ({exc_type.__name__ if exc_type else 'error'})"
            if self.settings.mode == "on" and self._keep_reason is None:
                self._keep_reason = "always kept (WEBTASK_TRACE=on)"
            if self._keep_reason is None:
                return
            from botocore.exceptions import BotoCoreError, ClientError

            try:
                self.locations = await self.settings.keep(self.flow_run_id, self.recorder.parts)
            except (OSError, ConfigError, BotoCoreError, ClientError) as error:  # a record only: the outcome stands
                logger.warning("The run's Playwright trace could not be kept: %s", error)
                return
            logger.info("Playwright trace kept (%s): playwright show-trace %s", self._keep_reason,
                        " ".join(self.locations))
            if exc is not None:  # no summary follows a run that raised: the trace gets a note of its own
                await self._note_for_a_failed_run(exc)
        finally:
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)

    async def _note_for_a_failed_run(self, exc: BaseException) -> None:
        import shlex

        from prefect.artifacts import acreate_markdown_artifact

        from webtask_flows.pictures import own_run_artifacts

        commands = "\n".join(f"    playwright show-trace {shlex.quote(place)}" for place in self.locations)
        with own_run_artifacts():
            await acreate_markdown_artifact(
                f"## Playwright trace of the failed run\n\nThe run failed ({type(exc).__name__}); its browser's "
                f"trace, every step's actions, opens with:\n\n{commands}\n",
                key=None, description=f"Playwright trace of the failed run ({type(exc).__name__})")
