"""The read-back in the flows (webtask_core.readback): what a run that read its listing back shows.

A listing the site shows otherwise than asked ends ``run-webtask`` ``Failed(name="Mismatch")``, with
the ``webtask.listing.mismatch`` event (``deployments/automations/webtask-listing-mismatch.yaml``
alerts on it): its payload names each field expected vs shown, the listing's URL, how the page was
read, and a picture of the page (a presigned URL with ``WEBTASK_SCREENSHOT_STORE``; otherwise the
picture is an artifact of the run). The run's summary gets a table of the fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webtask_core.readback import ReadbackResult

if TYPE_CHECKING:
    from webtask_flows.screenshots import ScreenshotStore

__all__ = ["readback_payload", "readback_markdown", "publish_readback_picture"]

_MAX_FIELDS = 30  # an event stays far below Prefect's size limit
_MAX_VALUE_CHARS = 300


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= _MAX_VALUE_CHARS:
        return text
    return text[: _MAX_VALUE_CHARS - 1] + "…"


def readback_payload(readback: ReadbackResult, *, picture: str | None = None,
                     picture_artifact_id: str | None = None) -> dict[str, Any]:
    """What the outcome event carries about the read-back: the fields that differ first."""
    ordered = sorted(readback.fields, key=lambda check: {"mismatch": 0, "not_shown": 2}.get(check.verdict, 1))
    payload: dict[str, Any] = {
        "readback": readback.status,
        "readback_method": readback.method,
        "listing_url": readback.url,
        "mismatched_fields": [check.field for check in readback.mismatches],
        "fields": [{"field": check.field, "expected": _clip(check.expected), "shown": _clip(check.shown),
                    "verdict": check.verdict, "note": check.note} for check in ordered[:_MAX_FIELDS]],
        "not_shown": readback.not_shown,
        "readback_summary": _clip(readback.summary()),
    }
    if picture and not picture.startswith("data:"):
        payload["picture"] = picture
    if picture_artifact_id:
        payload["picture_artifact_id"] = picture_artifact_id
    return payload


def readback_markdown(readback: ReadbackResult) -> str:
    """The read-back's section of the run's summary: each field expected vs shown."""
    how = {"templates": "in code, against the page's templates", "model": "by one model call, judged in code",
           "none": "not read"}[readback.method]
    lines = ["", f"**Read-back**: {readback.status} ({how}){': ' + readback.reason if readback.reason else ''}", ""]
    if readback.url:
        lines += [f"Listing page: {readback.url}", ""]
    if readback.fields:
        lines += ["| field | expected | shown | |", "|---|---|---|---|"]
        for check in readback.fields:
            cells = [check.field, _cell(check.expected), _cell(check.shown or "(not shown)"),
                     check.verdict.replace("_", " ") + (f": {_cell(check.note)}" if check.note else "")]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return (_clip(" ".join(text.split())) or "").replace("|", "/")


async def publish_readback_picture(readback: ReadbackResult, *,
                                   screenshots: ScreenshotStore | None) -> tuple[str | None, str | None]:
    """The page the read-back saw, as an image artifact of the run: (its URL, the artifact's id)."""
    from prefect.artifacts import acreate_image_artifact

    from webtask_flows.pictures import own_run_artifacts, picture_url

    if not readback.screenshot:
        return None, None
    url = await picture_url(readback.screenshot, name="readback", screenshots=screenshots)
    if url is None:
        return None, None
    with own_run_artifacts():
        artifact_id = await acreate_image_artifact(
            url, description=f"The listing's page as the read-back saw it ({readback.status}): {readback.url}")
    return url, str(artifact_id) if artifact_id is not None else None
