"""A run's cost in money: each step, the run, and what replay saved (see webtask_core.pricing).

A step the model decided costs what its model call cost. What a run has spent so far is kept on the
Prefect server as it goes, so a run whose process died still says what it spent — the crash report and a
retried batch add it up (webtask_flows.listings.spend): after each step that changed it
(webtask_flows.steps.StepRun.record_spent) as a flow run input ``webtask-spent-…`` — an insert, which a
busy SQLite server takes in ~0.04 s, where a label update (read, then write) met ``SQLITE_BUSY`` and the
client's backoff and took 0.7-1.6 s — and when the run ends as its flow run's label
``webtask.cost_usd``, which API readers and ``prefect flow-run inspect`` see (:func:`read_spent` reads
both). A replayed step made no model call; what it saved is estimated as one model call of the same
script: the mean call of this run when it asked the model, else the mean call of the last run of the
script that did (remembered beside the scripts, in the session store's ``replay-costs/``, as tokens by
kind so a price change applies to it). With neither (no run of the script has asked the model since this
was kept), nothing is estimated.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

from pydantic import BaseModel, Field, ValidationError

from webtask_core.errors import ConfigError
from webtask_core.llm.types import Usage
from webtask_core.pricing import Cost, PriceTable, format_usd
from webtask_core.record import Step
from webtask_core.storage import SessionStore

__all__ = ["RunPricing", "RunCost", "CallUsage", "load_call_usage", "remember_call_usage", "price_run",
           "SPENT_LABEL", "SPENT_INPUT_PREFIX", "record_spent", "spent_of", "read_spent"]

logger = logging.getLogger(__name__)

_COSTS_CHILD = "replay-costs"
SPENT_LABEL = "webtask.cost_usd"  # the flow run's label: US dollars its model calls cost, when it ended
SPENT_INPUT_PREFIX = "webtask-spent-"  # its flow run inputs: what it had spent so far, newest last
_SPENT_INPUTS_READ = 1000  # inputs read back at most (one per priced step)


class CallUsage(BaseModel):
    """The mean model call of a run: tokens by kind, and how many calls the mean is of."""

    usage: Usage = Field(default_factory=Usage)  # the sum over ``calls``
    calls: int = 0
    saved_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    def mean(self) -> Usage:
        if not self.calls:
            return Usage()
        return Usage(input_tokens=round(self.usage.input_tokens / self.calls),
                     output_tokens=round(self.usage.output_tokens / self.calls),
                     cache_read_tokens=round(self.usage.cache_read_tokens / self.calls),
                     cache_write_tokens=round(self.usage.cache_write_tokens / self.calls))


class RunCost(BaseModel):
    """What a run cost and saved (US dollars); None where no price or estimate was to be had."""

    model: str = ""
    cost: Cost | None = None
    saved_usd: float | None = None  # replayed steps x the estimated cost of one model call
    saved_basis: str = ""  # what the estimate rests on, in words

    @property
    def cost_usd(self) -> float | None:
        return round(self.cost.total_usd, 6) if self.cost is not None else None


class RunPricing:
    """Prices for one run's model; ``step_cost`` for the step artifacts, ``run_cost`` at the end."""

    def __init__(self, model: str, table: PriceTable | None = None):
        self.model = model
        self.table = table if table is not None else PriceTable.from_env()

    def __repr__(self) -> str:
        return f"RunPricing({self.model!r})"

    @property
    def priced(self) -> bool:
        return self.table.price_of(self.model) is not None

    def cost(self, usage: Usage) -> Cost | None:
        return self.table.cost(self.model, usage)

    def step_cost(self, step: Step) -> Cost | None:
        return self.cost(step.usage)

    def run_cost(self, steps: Sequence[Step], usage: Usage, *, remembered: CallUsage | None = None) -> RunCost:
        """The run's cost (all its usage, retried calls included) and what its replayed steps saved."""
        cost = self.cost(usage)
        replayed = sum(1 for step in steps if step.replayed)
        asked = [step for step in steps if step.asked_model]
        result = RunCost(model=self.model, cost=cost)
        if not replayed or cost is None:
            return result
        if asked:
            mean = sum((step.usage for step in asked), Usage())
            basis = CallUsage(usage=mean, calls=len(asked))
            where = "the mean model call of this run"
        elif remembered is not None and remembered.calls:
            basis = remembered
            where = (f"the mean model call of the last run of this script that asked the model "
                     f"({remembered.saved_at:%Y-%m-%d %H:%M} UTC)")
        else:
            result.saved_basis = "no model call of this script is known to price a replayed step by"
            return result
        per_call = self.cost(basis.mean())
        if per_call is not None:
            result.saved_usd = round(per_call.total_usd * replayed, 6)
            result.saved_basis = f"{replayed} model call(s) at {format_usd(per_call.total_usd)} each, {where}"
        return result


def _document_key(script_key: str) -> str:
    return script_key  # script keys are valid store keys already (ReplaySpec.check)


async def load_call_usage(store: SessionStore, script_key: str) -> CallUsage | None:
    """The remembered mean model call of ``script_key``; None when there is none or it is unreadable."""
    raw = await asyncio.to_thread(store.child(_COSTS_CHILD).read_bytes, _document_key(script_key))
    if raw is None:
        return None
    try:
        return CallUsage.model_validate(json.loads(raw))
    except (ValueError, ValidationError) as exc:  # an estimate only: never fail a run for it
        logger.warning("Ignoring the unreadable replay cost record %r: %s", script_key, exc)
        return None


async def remember_call_usage(store: SessionStore, script_key: str, steps: Sequence[Step]) -> None:
    """Keep this run's mean model call for ``script_key`` when it asked the model (last writer wins)."""
    asked = [step for step in steps if step.asked_model]
    if not asked:
        return
    record = CallUsage(usage=sum((step.usage for step in asked), Usage()), calls=len(asked))
    await asyncio.to_thread(store.child(_COSTS_CHILD).write_bytes, _document_key(script_key),
                            record.model_dump_json().encode())


async def price_run(pricing: RunPricing, steps: Sequence[Step], usage: Usage, *, script_key: str | None,
                    store: SessionStore | None) -> RunCost:
    """The run's :class:`RunCost`; with a replay script (``script_key``) in ``store``, the remembered
    model call prices replayed steps when this run asked no model, and a run that did updates it."""
    remembered = None
    if script_key is not None and store is not None:
        try:
            if any(step.replayed for step in steps) and not any(step.asked_model for step in steps):
                remembered = await load_call_usage(store, script_key)
            await remember_call_usage(store, script_key, steps)
        except (OSError, ConfigError) as exc:  # an estimate only: the store being down fails nothing
            logger.warning("The replay cost record %r could not be read or kept: %s", script_key, exc)
    return pricing.run_cost(steps, usage, remembered=remembered)


async def record_spent(flow_run_id: str, cost_usd: float, *, final: bool = False) -> None:
    """Keep what the run has spent so far on the server: a flow run input while it runs, its flow
    run's label (:data:`SPENT_LABEL`) when ``final``. A record only: a server that cannot be reached
    costs a warning, never the step."""
    import httpx
    from prefect.client.orchestration import get_client
    from prefect.exceptions import PrefectHTTPStatusError

    value = round(cost_usd, 6)
    try:
        async with get_client() as client:
            if final:
                await client.update_flow_run_labels(UUID(flow_run_id), {SPENT_LABEL: value})
            else:
                await client.create_flow_run_input(UUID(flow_run_id), key=f"{SPENT_INPUT_PREFIX}{uuid4().hex}",
                                                   value=json.dumps(value))
    except (httpx.HTTPError, PrefectHTTPStatusError) as error:
        logger.warning("Could not record what flow run %s spent so far (%s): %s", flow_run_id,
                       format_usd(cost_usd), error)


def spent_of(flow_run: Any) -> float | None:
    """What a flow run said it spent when it ended (:data:`SPENT_LABEL`), or None when it said nothing."""
    return _number((getattr(flow_run, "labels", None) or {}).get(SPENT_LABEL))


async def read_spent(client: Any, flow_runs: Sequence[Any]) -> dict[str, float | None]:
    """What each flow run spent (by id): the label of a run that ended Completed or Failed and wrote it;
    else (running, paused, killed) the newest of its inputs or its label, the larger (None: it said
    nothing)."""
    spent: dict[str, float | None] = {}
    for run in flow_runs:
        labelled = spent_of(run)
        state = getattr(run, "state", None)
        if labelled is not None and state is not None and (state.is_completed() or state.is_failed()):
            spent[str(run.id)] = labelled
            continue
        inputs = await client.filter_flow_run_input(flow_run_id=run.id, key_prefix=SPENT_INPUT_PREFIX,
                                                    limit=_SPENT_INPUTS_READ, exclude_keys=set())
        newest = next((value for value in (_number(_json(item.value)) for item in reversed(inputs))
                       if value is not None), None)  # the server lists them oldest first
        # A run stopped by an error or a signal labels what it spent as it goes down: at least its
        # newest record (what a run spent only grows).
        known = [value for value in (newest, labelled) if value is not None]
        spent[str(run.id)] = max(known) if known else None
    return spent


def _json(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return float(value)
    except ValueError:
        return None
