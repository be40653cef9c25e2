"""Run-level artifacts that belong to the run, and pictures of the pages that matter.

A ``run-webtask`` run that a batch starts is a subflow called from one of the batch's tasks
(``listing SKU``). Prefect leaves that task's run context in place inside the subflow, so an
artifact the subflow's body creates is tied to the batch's task run: the listing run's Artifacts
tab then shows it under no task run of its own ("None"). :func:`own_run_artifacts` hides the
outer task's context while the body creates its artifacts, so they belong to the run itself.

:func:`publish_picture` shows one page as an image artifact: uploaded beside the step pictures
with a presigned URL when ``WEBTASK_SCREENSHOT_STORE`` is set, else as a small inline JPEG.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from webtask_core.images import shrink_jpeg

if TYPE_CHECKING:
    from webtask_flows.screenshots import ScreenshotStore

__all__ = ["own_run_artifacts", "publish_picture", "picture_url", "INLINE_PICTURE_WIDTH"]

logger = logging.getLogger(__name__)

INLINE_PICTURE_WIDTH = 640  # an inline picture is stored in Prefect's database: keep it small


@contextmanager
def own_run_artifacts() -> Iterator[None]:
    """Artifacts created inside belong to the current flow run, not to a parent's task run."""
    from prefect.context import FlowRunContext, TaskRunContext

    task_context, flow_context = TaskRunContext.get(), FlowRunContext.get()
    if (task_context is None or flow_context is None or flow_context.flow_run is None
            or task_context.task_run.flow_run_id == flow_context.flow_run.id):
        yield
        return
    token = TaskRunContext.__var__.set(None)  # type: ignore[arg-type]  # what get() reads as "no task run"
    try:
        yield
    finally:
        TaskRunContext.__var__.reset(token)


async def picture_url(jpeg_b64: str, *, name: str, screenshots: ScreenshotStore | None = None) -> str | None:
    """Where one page's picture can be seen: a presigned URL in the screenshot store when there is
    one, else a small inline JPEG (a data URI); None when it is not a JPEG it could read."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    if screenshots is not None and context is not None and context.flow_run is not None:
        return await screenshots.put(str(context.flow_run.id), name, jpeg_b64)
    try:
        small = shrink_jpeg(base64.b64decode(jpeg_b64), INLINE_PICTURE_WIDTH, quality=70)
    except ValueError:  # not base64
        small = None
    if small is None:  # a picture is a record only: never fail the run for it
        logger.warning("Not showing the picture %r: not a JPEG it could read", name)
        return None
    return "data:image/jpeg;base64," + small


async def publish_picture(jpeg_b64: str, *, name: str, description: str,
                          screenshots: ScreenshotStore | None = None) -> Any:
    """An image artifact of one page (``name`` names its file in the store: ``final``,
    ``handover-5``); returns the artifact's id."""
    from prefect.artifacts import acreate_image_artifact

    url = await picture_url(jpeg_b64, name=name, screenshots=screenshots)
    return None if url is None else await acreate_image_artifact(url, description=description)
