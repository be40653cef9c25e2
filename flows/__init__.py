"""Prefect flows around webtask_core: ``run-webtask``, ``batch-listing-upload`` and the pieces they
are built from.

Names are imported lazily, so ``import flows.resources`` does not load Playwright or the model SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webtask_core.lazy_exports import lazy_exports

__all__ = [
    "run_webtask",
    "WebtaskResult",
    "WebtaskFailed",
    "StepTiming",
    "webtask_result",
    "batch_listing_upload",
    "BatchFailed",
    "batch_results",
    "ListingResult",
    "SharedBrowser",
    "fetch_resources",
    "downloaded_resources",
    "resource_folder",
    "get_session_store",
    "load_session",
    "load_worker_session",
    "save_session",
    "session_lock",
    "emit_task_event",
    "TASK_EVENT_NAMES",
    "create_automation_from_file",
    "WebtaskSettings",
]

_WHERE = {
    "run_webtask": "flows.webtask_flow",
    "WebtaskResult": "flows.run_result",
    "WebtaskFailed": "flows.run_result",
    "StepTiming": "flows.run_result",
    "webtask_result": "flows.run_result",
    "batch_listing_upload": "flows.batch",
    "BatchFailed": "flows.batch",
    "batch_results": "flows.batch",
    "ListingResult": "flows.batch_models",
    "SharedBrowser": "webtask_core.browser.runtime",
    "fetch_resources": "flows.resources",
    "downloaded_resources": "flows.resources",
    "resource_folder": "flows.resources",
    "get_session_store": "flows.session_store",
    "load_session": "flows.session_store",
    "load_worker_session": "flows.session_store",
    "save_session": "flows.session_store",
    "session_lock": "flows.session_store",
    "emit_task_event": "flows.events",
    "TASK_EVENT_NAMES": "flows.events",
    "create_automation_from_file": "flows.automations",
    "WebtaskSettings": "flows.settings",
}

if TYPE_CHECKING:
    from flows.automations import create_automation_from_file
    from flows.batch import BatchFailed, batch_listing_upload, batch_results
    from flows.batch_models import ListingResult
    from webtask_core.browser.runtime import SharedBrowser
    from flows.events import TASK_EVENT_NAMES, emit_task_event
    from flows.resources import downloaded_resources, fetch_resources, resource_folder
    from flows.session_store import get_session_store, load_session, load_worker_session, save_session, session_lock
    from flows.settings import WebtaskSettings
    from flows.webtask_flow import run_webtask
    from flows.run_result import StepTiming, WebtaskFailed, WebtaskResult, webtask_result


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
