"""The generic Prefect layer around webtask_core (the folder ``flows/``, installed as ``webtask_flows``):
the ``run-webtask`` flow, its step task, result, artifacts, events, resources from S3 and the session
store. The listing upload application built on it is :mod:`webtask_flows.listings`; nothing here
imports it.

Names are imported lazily, so ``import webtask_flows.resources`` does not load Playwright or the model SDK.
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
    "SharedBrowser",
    "fetch_resources",
    "downloaded_resources",
    "resource_folder",
    "resource_problems",
    "get_session_store",
    "load_session",
    "load_worker_session",
    "save_session",
    "session_lock",
    "emit_task_event",
    "TASK_EVENT_NAMES",
    "create_automation_from_file",
    "run_in_own_task",
    "SubflowStarts",
    "WebtaskSettings",
    "ReplaySpec",
    "get_script_store",
    "emit_script_event",
    "emit_handover_event",
]

_WHERE = {
    "run_webtask": "webtask_flows.run_flow",
    "WebtaskResult": "webtask_flows.run_result",
    "WebtaskFailed": "webtask_flows.run_result",
    "StepTiming": "webtask_flows.run_result",
    "webtask_result": "webtask_flows.run_result",
    "SharedBrowser": "webtask_core.browser.runtime",
    "fetch_resources": "webtask_flows.resources",
    "downloaded_resources": "webtask_flows.resources",
    "resource_folder": "webtask_flows.resources",
    "resource_problems": "webtask_flows.resources",
    "get_session_store": "webtask_flows.session_store",
    "load_session": "webtask_flows.session_store",
    "load_worker_session": "webtask_flows.session_store",
    "save_session": "webtask_flows.session_store",
    "session_lock": "webtask_flows.session_store",
    "emit_task_event": "webtask_flows.events",
    "TASK_EVENT_NAMES": "webtask_flows.events",
    "create_automation_from_file": "webtask_flows.automations",
    "run_in_own_task": "webtask_flows.subflows",
    "SubflowStarts": "webtask_flows.run_signals",
    "WebtaskSettings": "webtask_flows.settings",
    "ReplaySpec": "webtask_flows.replay_scripts",
    "get_script_store": "webtask_flows.replay_scripts",
    "emit_script_event": "webtask_flows.events",
    "emit_handover_event": "webtask_flows.events",
}

if TYPE_CHECKING:
    from webtask_core.browser.runtime import SharedBrowser
    from webtask_flows.automations import create_automation_from_file
    from webtask_flows.events import TASK_EVENT_NAMES, emit_handover_event, emit_script_event, emit_task_event
    from webtask_flows.replay_scripts import ReplaySpec, get_script_store
    from webtask_flows.resources import downloaded_resources, fetch_resources, resource_folder, resource_problems
    from webtask_flows.run_flow import run_webtask
    from webtask_flows.run_result import StepTiming, WebtaskFailed, WebtaskResult, webtask_result
    from webtask_flows.run_signals import SubflowStarts
    from webtask_flows.session_store import get_session_store, load_session, load_worker_session, save_session, session_lock
    from webtask_flows.settings import WebtaskSettings
    from webtask_flows.subflows import run_in_own_task


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
