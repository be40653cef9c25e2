"""Where a person answers a run's question: the flow run's page in the Prefect UI that draws a code
field as dots.

Prefect 3.8's server ships two UIs. The new one (React, under ``/v2``; what the server's root opens
since ``PREFECT_SERVER_UI_V2_ENABLED`` became the default) draws a form field of ``format: password``
— a ``SecretStr`` of the answer form — as a password input, with a button to reveal it. The classic
one (Vue, at ``/runs/flow-run/<id>``, where Prefect's own links such as ``flow_run|ui_url`` lead)
has no password input in its forms: its schema form draws every string as a text area, so a code
typed there is shown on screen. So the alerts and the question link to the run's page in the new UI
when the server serves it (its ``/ui-settings`` says so), else to the run's usual page (Prefect
Cloud, or a server without the new UI).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urljoin

__all__ = ["answer_page_url"]

logger = logging.getLogger(__name__)

_SETTINGS_TIMEOUT_S = 5.0


async def _ui_settings(ui_url: str) -> dict[str, Any] | None:
    """The UI's own settings (``<ui>/ui-settings``: which UIs it serves, where); None when it has none."""
    import httpx

    try:
        async with httpx.AsyncClient(timeout=_SETTINGS_TIMEOUT_S) as http:
            response = await http.get(ui_url.rstrip("/") + "/ui-settings")
    except httpx.HTTPError as error:
        logger.debug("No UI settings at %s: %s", ui_url, error)
        return None
    if response.status_code != 200 or "json" not in response.headers.get("content-type", ""):
        return None
    found = response.json()
    return found if isinstance(found, dict) else None


async def answer_page_url(flow_run_id: str) -> str | None:
    """The flow run's page where its form is answered: in the new UI when the server serves it
    (``<ui>/v2/runs/flow-run/<id>``), else Prefect's usual link to the run; None without a UI URL."""
    from prefect.settings import PREFECT_UI_URL
    from prefect.utilities.urls import url_for

    usual = url_for("flow-run", obj_id=flow_run_id)
    ui_url = PREFECT_UI_URL.value()
    if not ui_url:
        return usual
    settings = await _ui_settings(ui_url)
    v2_base = settings.get("v2_base_url") if settings else None
    if not settings or "v2" not in (settings.get("available_uis") or []) or not isinstance(v2_base, str):
        return usual
    # v2_base_url is a path on the UI's host ("/v2", or "/prefect/v2" under a serve base).
    return urljoin(ui_url.rstrip("/") + "/", v2_base.rstrip("/") + f"/runs/flow-run/{flow_run_id}")
