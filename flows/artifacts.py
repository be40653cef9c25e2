"""What a run shows in the Prefect UI: a markdown artifact per step, a table of steps, a summary.

- Step artifacts (one per step, created by the step's task run, so they show under it and under the
  flow run) and the steps table have no key: they belong to their run and never collide with other
  runs, and they do not flood the UI's Artifacts catalog.
- The summary has a key per session (``webtask-summary-<session key>``) or per listing
  (``webtask-listing-<sku>``), so reruns version one artifact whose history is the run history; a run
  with neither keeps its summary to itself. Keys match ``^[a-z0-9-]*$``.

Secrets never appear: the worker only ever records ``{{secret:NAME}}`` placeholders, and every text
rendered here is scrubbed with the run's :class:`~webtask_core.secrets.SecretValues` as well, in case
a page echoed a secret.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from webtask_core.pricing import Cost, format_usd
from webtask_core.record import Step, ToolCallRecord
from webtask_core.secrets import SecretValues

if TYPE_CHECKING:
    from webtask_flows.run_result import WebtaskResult
    from webtask_flows.screenshots import ScreenshotStore

__all__ = [
    "ARTIFACT_KEY_PATTERN",
    "summary_artifact_key",
    "step_markdown",
    "steps_table",
    "summary_markdown",
    "publish_step_artifact",
    "publish_run_artifacts",
]

ARTIFACT_KEY_PATTERN = re.compile(r"^[a-z0-9-]*$")
_MAX_PARAMS_CHARS = 300
_MAX_MESSAGE_CHARS = 500
_MAX_KEY_SLUG_CHARS = 60
# Words, not emoji: a UI or a mail client without an emoji font shows those as empty boxes.
_CALL_MARK = {True: "ok", False: "FAILED"}


def summary_artifact_key(session_key: str | None, sku: str | None = None) -> str | None:
    """``webtask-summary-<session key>``; a batch's listing: ``webtask-listing-<sku>``; else None.

    Keyed summaries version one artifact per session or listing, so its history is the run history;
    a run with neither keeps its summary to itself (one shared key would mix unrelated runs). A
    short hash keeps keys distinct when the slug lost characters."""
    if session_key:
        prefix, source = "webtask-summary", session_key
    elif sku:
        prefix, source = "webtask-listing", sku
    else:
        return None
    slug = re.sub(r"[^a-z0-9]+", "-", source.lower()).strip("-")[:_MAX_KEY_SLUG_CHARS].strip("-") or "run"
    if slug != source:
        slug += "-" + hashlib.sha1(source.encode()).hexdigest()[:6]
    key = f"{prefix}-{slug}"
    assert ARTIFACT_KEY_PATTERN.fullmatch(key), key
    return key


# ---- rendering ----


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _code(text: str) -> str:
    """Inline code that survives backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest else f"`{text}`"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _params(call: ToolCallRecord) -> str:
    try:
        text = json.dumps(call.input, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        text = repr(call.input)
    return _clip(text, _MAX_PARAMS_CHARS)


def _tokens(step_or_usage: Any) -> str:
    usage = getattr(step_or_usage, "usage", step_or_usage)
    return (f"input {usage.input_tokens} · output {usage.output_tokens} · "
            f"cache read {usage.cache_read_tokens} · cache write {usage.cache_write_tokens}")


def step_markdown(step: Step, *, secrets: SecretValues | None = None, attempts: int = 1,
                  image_url: str | None = None, cost: Cost | None = None, notes: Sequence[str] = ()) -> str:
    """The step artifact: the page, what the model said, each action and its result, its cost, a
    thumbnail (at ``image_url`` when the picture was stored elsewhere, else inline). ``notes``: more
    lines (what replay checked and where it handed over)."""
    mask = (secrets or SecretValues()).scrub
    lines = [f"### Step {step.index}" + (f" — {_one_line(step.title)}" if step.title.strip() else ""), ""]
    lines += [f"Page: {_code(step.url)}  ", f"Decided by: **{step.decided_by}**", ""]
    if step.model_text.strip():
        lines += [f"> {line}" if line.strip() else ">" for line in step.model_text.strip().splitlines()]
        lines.append("")
    if step.tool_calls:
        lines.append("**Actions**")
        lines.append("")
        for number, call in enumerate(step.tool_calls, start=1):
            message = _one_line(_clip(call.message, _MAX_MESSAGE_CHARS)) or ("done" if call.ok else "failed")
            lines.append(f"{number}. {_CALL_MARK[call.ok]} **{call.name}** {_code(_params(call))} → {message}")
        lines.append("")
    else:
        lines += ["**Actions**: none", ""]
    if step.warnings:
        lines += ["**Warnings**: " + " · ".join(_one_line(w) for w in step.warnings), ""]
    if step.error:
        lines += [f"**Problem**: {_one_line(step.error)}", ""]
    if step.ended is not None:
        lines += [f"**The task ended here**: {step.ended.value}", ""]
    for note in notes:
        lines += [note, ""]
    timings = step.timings
    lines.append(f"**Tokens**: {_tokens(step)}  ")
    if cost is not None:
        lines.append(f"**Cost**: {cost.describe()}  ")
    lines.append(
        f"**Time**: observe {timings.observe_ms:.0f} ms · model {timings.model_ms:.0f} ms · "
        f"act {timings.act_ms:.0f} ms · total {timings.total_ms:.0f} ms"
        + (f" · attempts {attempts}" if attempts > 1 else "")
    )
    text = mask("\n".join(lines))
    if image_url:
        text += f"\n\n![page at step {step.index}]({image_url})\n"
    elif step.screenshot:  # base64 JPEG thumbnail from the worker; masked text first, the image after
        text += f"\n\n![page at step {step.index}](data:image/jpeg;base64,{step.screenshot})\n"
    return text


def steps_table(
    steps: Sequence[Step], *, attempts: Mapping[int, int] | None = None,
    task_ms: Mapping[int, float] | None = None, secrets: SecretValues | None = None,
    names: Mapping[int, str] | None = None, costs: Mapping[int, float | None] | None = None,
) -> list[dict[str, Any]]:
    """One row per step, for the table artifact (``names``: what each step did; ``costs``: dollars)."""
    mask = (secrets or SecretValues()).scrub
    rows = []
    for step in steps:
        rows.append({
            "step": step.index,
            "name": mask((names or {}).get(step.index) or f"step {step.index}"),
            "url": mask(step.url),
            "actions": mask(_clip(step.summary(), _MAX_MESSAGE_CHARS)),
            "ok": step.ok and step.error is None,
            "decided_by": step.decided_by,
            "input_tokens": step.usage.input_tokens,
            "output_tokens": step.usage.output_tokens,
            "cost_usd": (costs or {}).get(step.index),
            "model_ms": round(step.timings.model_ms),
            "step_ms": round(step.timings.total_ms),
            "task_ms": round((task_ms or {}).get(step.index, 0.0)),
            "attempts": (attempts or {}).get(step.index, 1),
        })
    return rows


def summary_markdown(result: WebtaskResult, *, task: str, secrets: SecretValues | None = None) -> str:
    """The run summary: status, feedback, output, steps, tokens, time."""
    mask = (secrets or SecretValues()).scrub
    status = result.status.value
    first_line = _clip(_one_line(task.strip().splitlines()[0] if task.strip() else ""), 200)
    # What happened comes first: for a failed task, that is why it failed.
    lines = [
        f"## webtask {status}",
        "",
        f"**{'Feedback' if result.ok else 'Why'}**: {_one_line(result.feedback) or '(none)'}",
        "",
        f"**Task**: {first_line}",
        "",
        "| | |",
        "|---|---|",
        f"| Status | {status} |",
        f"| Steps | {result.steps} of {result.max_steps} |",
        f"| Tokens | {result.tokens} ({_tokens(result.usage)}) |",
        f"| Model calls | {result.model_calls} |",
        f"| Cost | {result.cost.describe() if result.cost is not None else _unpriced(result.model)} |",
        f"| Time | {result.duration_s:.1f} s |",
        f"| Step retries | {result.step_retries} |",
        f"| Browser relaunches | {result.browser_relaunches} |",
    ]
    if result.replay_key:
        lines.append(f"| Replay | {result.replay}: {result.replayed_steps} step(s) replayed without the model "
                     f"(script {_code(result.replay_key)}) |")
        lines += [f"| Model took over | {_one_line(reason)} |" for reason in result.replay_handovers[:3]]
        if result.replay_handovers and not result.ok:
            lines.append(f"| After the handover | the model ended the task {result.status.value}: "
                         f"{_one_line(result.feedback)} |")
        if result.replayed_steps:
            saved = (f"~{format_usd(result.saved_by_replay_usd)}" if result.saved_by_replay_usd is not None
                     else "not estimated")
            lines.append(f"| Saved by replay | {saved} ({_one_line(result.saved_by_replay)}) |")
    if result.trace:
        lines.append(f"| Playwright trace | {_code('playwright show-trace ' + shlex.quote(result.trace))} |")
    if result.session_key:
        lines.append(f"| Session key | {_code(result.session_key)} |")
    if result.final_url:
        lines.append(f"| Final page | {_code(result.final_url)} |")
    if result.readback is not None:
        from webtask_flows.readback_flow import readback_markdown

        lines.append(readback_markdown(result.readback))
    if result.output is not None:
        lines += ["", "**Output**", "", "```json", json.dumps(result.output, indent=2, default=str), "```"]
    return mask("\n".join(lines)) + "\n"


def _unpriced(model: str) -> str:
    return f"no price for model {model!r} (set WEBTASK_MODEL_PRICES)" if model else "unknown"


# ---- publishing (inside an async flow / task: the a-prefixed functions) ----


async def publish_step_artifact(step: Step, *, secrets: SecretValues | None = None, attempts: int = 1,
                                screenshots: ScreenshotStore | None = None, cost: Cost | None = None,
                                notes: Sequence[str] = ()) -> Any:
    """The step's markdown artifact; with a screenshot store, its picture is also an image artifact."""
    from prefect.artifacts import acreate_image_artifact, acreate_markdown_artifact
    from prefect.context import FlowRunContext

    mask = (secrets or SecretValues()).scrub
    description = mask(_clip(f"Step {step.index} ({step.decided_by}): {step.summary()}", 500))
    image_url = None
    context = FlowRunContext.get()
    if screenshots is not None and step.screenshot and context is not None and context.flow_run is not None:
        image_url = await screenshots.put(str(context.flow_run.id), step.index, step.screenshot)
        await acreate_image_artifact(image_url, description=f"The page at step {step.index}")
    return await acreate_markdown_artifact(
        step_markdown(step, secrets=secrets, attempts=attempts, image_url=image_url, cost=cost, notes=notes),
        key=None, description=description,
    )


async def publish_run_artifacts(
    result: WebtaskResult,
    steps: Iterable[Step],
    *,
    task: str,
    attempts: Mapping[int, int] | None = None,
    task_ms: Mapping[int, float] | None = None,
    secrets: SecretValues | None = None,
    labels: Mapping[str, str] | None = None,
) -> tuple[Any, Any]:
    """The steps table (no key) and the summary (keyed per session or listing, see
    :func:`summary_artifact_key`), both the run's own (see ``own_run_artifacts``); returns their ids."""
    from prefect.artifacts import acreate_markdown_artifact, acreate_table_artifact

    from webtask_flows.pictures import own_run_artifacts

    mask = (secrets or SecretValues()).scrub
    names = {timing.index: timing.name for timing in result.step_timings if timing.name}
    costs = {timing.index: timing.cost_usd for timing in result.step_timings}
    rows = steps_table(list(steps), attempts=attempts, task_ms=task_ms, secrets=secrets, names=names, costs=costs)
    with own_run_artifacts():
        table_id = await acreate_table_artifact(
            rows, key=None, description=f"Steps of the webtask ({result.status.value}, {result.steps} steps)"
        )
        summary_id = await acreate_markdown_artifact(
            summary_markdown(result, task=task, secrets=secrets),
            key=summary_artifact_key(result.session_key, (labels or {}).get("sku")),
            description=mask(_clip(f"webtask {result.status.value}: {_one_line(result.feedback)}", 500)),
        )
    return table_id, summary_id
