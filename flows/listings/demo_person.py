"""The demo's stand-in for a person at the Prefect UI: it answers a listing's approval form.

``webtask demo`` gives one listing a price above :data:`DEMO_APPROVAL_PRICE`, and the batch's
``approve_if`` rule makes its run pause for a person's approval before Publish
(webtask_flows.listings.approvals). :class:`DemoReviewer` then does what someone at the UI does,
through the same API: it reads the paused run's form (the markdown description with the question
and the JSON schema of its fields: ``GET /flow_runs/{id}/input/{key}``) and sends the answer with
``POST /flow_runs/{id}/resume`` and the run input, which is what the UI's Resume button posts.

Only approval forms are answered (a code or a security check needs someone who can read it).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import httpx

__all__ = ["DEMO_APPROVAL_PRICE", "DEMO_APPROVAL_RULE", "DemoReviewer", "PersonAnswer"]

DEMO_APPROVAL_PRICE = Decimal("500")
DEMO_APPROVAL_RULE = {"price_above": str(DEMO_APPROVAL_PRICE)}
_APPROVAL = {"decision": "approve", "comment": "Approved by the demo, as a person would in the Prefect UI."}


@dataclass
class PersonAnswer:
    """One form the demo answered: what the run asked and what the server said to the answer."""

    sku: str
    flow_run_id: str
    question: str
    run_input: dict[str, Any]
    status: str  # the server's answer to the resume: ACCEPT, or REJECT with a reason
    paused_s: float  # how long the run had been paused when the answer went

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class DemoReviewer:
    """Answers each paused listing run's approval form once (call :meth:`look` with every run seen)."""

    def __init__(self, console: Any):
        self.console = console
        self.answered: list[PersonAnswer] = []
        self._seen: set[tuple[str, str]] = set()  # (flow run id, pause key): one answer a pause

    async def look(self, client: Any, run: Any) -> None:
        """If ``run`` is paused for a form not seen before, read it and answer it."""
        state = run.state
        keyset = state.state_details.run_input_keyset if state is not None and state.is_paused() else None
        if not keyset:
            return
        pause = (str(run.id), keyset["response"])
        if pause in self._seen:
            return
        try:
            schema = json.loads(await client.read_flow_run_input(run.id, keyset["schema"]))
            description = json.loads(await client.read_flow_run_input(run.id, keyset["description"]))
        except httpx.HTTPStatusError as error:
            # Prefect saves the form just after the run turns Paused: look again at the next poll.
            if error.response.status_code == 404:
                return
            raise
        self._seen.add(pause)
        question = _question(description)
        self.console.print(f"[magenta]{run.name} waits for a person:[/magenta] {question}", soft_wrap=True)
        if "decision" not in schema.get("properties", {}):
            self.console.print("  (not an approval: the demo leaves it to a person)", soft_wrap=True)
            return
        result = await client.resume_flow_run(run.id, run_input=_APPROVAL)
        status = result.status.value + (f" ({result.details.reason})" if getattr(result.details, "reason", None) else "")
        self.answered.append(PersonAnswer(sku=run.name, flow_run_id=str(run.id), question=question,
                                          run_input=dict(_APPROVAL), status=status,
                                          paused_s=round((datetime.now(UTC) - state.timestamp).total_seconds(), 1)))
        self.console.print(f"  the demo answered as the UI's Resume button does: POST /flow_runs/{run.id}/resume "
                           f"with {{'decision': 'approve'}} -> {status}", soft_wrap=True)

    def report(self, results: list[Any]) -> None:
        """What became of each answered listing (printed after the batch)."""
        outcome = {result.sku: result for result in results}
        for answer in self.answered:
            result = outcome.get(answer.sku)
            then = (f"published at {result.listing_url}" if result is not None and result.status == "completed"
                    else f"{result.status}: {result.feedback}" if result is not None else "no result")
            self.console.print(f"Person in the loop: {answer.sku} asked \"{answer.question}\"; approved through "
                               f"the Prefect API ({answer.status}); then {then}", soft_wrap=True)


def _question(description: str) -> str:
    """The question in the form's markdown (its bold line, webtask_flows.human.describe_question)."""
    for line in description.splitlines():
        if line.startswith("**") and line.endswith("**"):
            return line.strip("*")
    return description.strip().splitlines()[0] if description.strip() else "(no description)"
