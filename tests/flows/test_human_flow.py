"""ask_human in run-webtask against the test harness's Prefect server: the run pauses for a typed form,
is resumed through the API the UI uses (POST /flow_runs/{id}/resume with run_input), and the code
is found nowhere afterwards; an approval rejected, no answer in time, a TOTP seed from a Secret block."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from flow_helpers import (
    OUTPUT_SCHEMA,
    USERS,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    listing_task,
    read_artifacts,
    read_events_for,
    shop_secret,  # noqa: F401 (fixture)
)

from webtask_core.record import WorkerStatus
from webtask_core.testing import MarketplaceListingPolicy
from webtask_core.testing.marketplace import Marketplace
from webtask_flows.run_flow import run_webtask
from webtask_flows.run_result import webtask_result

LOGIN_ONLY = MarketplaceListingPolicy(login_only=True)


async def paused_run(name: str, timeout_s: float = 60) -> Any:
    """The flow run called ``name`` once it is paused for input and its form is saved."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName

    async with get_client() as client:
        for _ in range(int(timeout_s * 5)):
            runs = await client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name])))
            # Prefect saves the form (schema, then description) just after the Paused state: the UI shows
            # Resume with its form only then, so a reader waits for both.
            if runs and runs[0].state is not None and runs[0].state.is_paused():
                keys = [item.key for item in await run_inputs(runs[0].id)]
                if any(k.endswith("-schema") for k in keys) and any(k.endswith("-description") for k in keys):
                    return runs[0]
            await asyncio.sleep(0.2)
    raise AssertionError(f"flow run {name} did not pause within {timeout_s} s")


async def resume_as_the_ui_does(flow_run_id: Any, run_input: dict[str, Any]) -> httpx.Response:
    """POST /flow_runs/{id}/resume with the form's input, as the UI's Resume button does; a 503 from
    the test server's SQLite (busy with a write) is tried again, as a person would press again."""
    from prefect.settings import PREFECT_API_URL

    async with httpx.AsyncClient() as http:
        for _ in range(10):
            response = await http.post(f"{PREFECT_API_URL.value()}/flow_runs/{flow_run_id}/resume",
                                       json={"run_input": run_input})
            if response.status_code != 503:
                break
            await asyncio.sleep(0.5)
        return response


async def demo_reviewer_sees(run: Any) -> tuple[Any, str]:
    """What `webtask demo`'s reviewer does with ``run`` (paused): itself and what it printed."""
    from prefect.client.orchestration import get_client
    from rich.console import Console

    from webtask_flows.listings.demo_person import DemoReviewer

    console = Console(record=True, width=300)
    reviewer = DemoReviewer(console)
    async with get_client() as client:
        await reviewer.look(client, run)
        await reviewer.look(client, run)  # one look a pause
    return reviewer, console.export_text()


async def run_inputs(flow_run_id: Any) -> list[Any]:
    from prefect.client.orchestration import get_client

    async with get_client() as client:
        return await client.filter_flow_run_input(flow_run_id=flow_run_id, key_prefix="paused", limit=50,
                                                  exclude_keys=set())


async def logs_of(flow_run_id: Any) -> str:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.logging.handlers import APILogHandler

    await APILogHandler.aflush()
    async with get_client() as client:
        logs = await client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
    return "\n".join(log.message for log in logs)


async def test_an_emailed_code_through_the_ui_form_and_the_code_is_stored_nowhere(flow_env, shop_secret, monkeypatch):
    with Marketplace(users=USERS, second_factor="email") as shop:
        async with fake_model_env(LOGIN_ONLY, monkeypatch) as server:
            running = asyncio.ensure_future(run_webtask.with_options(flow_run_name="human-email")(
                listing_task(shop.url("/listings")), start_url=shop.url("/listings"), max_steps=10,
                session_key="human-email", secrets=shop_secret, labels={"sku": "BOOT-001"},
                human={"timeout_s": 60, "poll_s": 0.5}, return_state=True))
            paused = await paused_run("human-email")
            (schema,) = [item for item in await run_inputs(paused.id) if item.key.endswith("-schema")]
            (described,) = [item for item in await run_inputs(paused.id) if item.key.endswith("-description")]
            code = shop.checks.inbox[-1].code
            # The demo's stand-in for a person answers approvals only: it shows this question and leaves it.
            reviewer, shown = await demo_reviewer_sees(paused)
            refused = await resume_as_the_ui_does(paused.id, {})  # the form needs its field
            answered = await resume_as_the_ui_does(paused.id, {"answer": code})
            state = await running
            requests = server.requests

    assert refused.json()["status"] == "REJECT" and answered.json()["status"] == "ACCEPT"
    assert state.is_completed(), state.message
    assert reviewer.answered == [] and shown == ("human-email waits for a person: Please enter the 6-digit sign-in "
                                                 "code the marketplace just e-mailed to the account's address.\n"
                                                 "  (not an approval: the demo leaves it to a person)\n")
    assert json.loads(schema.value)["properties"]["answer"]["format"] == "password"  # hidden in the form
    description = json.loads(described.value)
    assert "6-digit sign-in code" in description and "Listing: **BOOT-001**" in description
    assert "/login/verify?token=" in description and "](data:image/jpeg;base64," in description

    flow_run_id = state.state_details.flow_run_id
    events = await read_events_for(f"webtask.task.{flow_run_id}", expected=2)
    assert {event.event for event in events} == {"webtask.task.waiting", "webtask.task.completed"}
    trail = [json.dumps(requests), await logs_of(flow_run_id),
             json.dumps([a.data for a in await read_artifacts(flow_run_id)]),
             json.dumps([json.loads(e.model_dump_json()) for e in events]),
             json.dumps([i.value for i in await run_inputs(flow_run_id)]),
             *(path.read_text(errors="replace") for path in flow_env.sessions.rglob("*") if path.is_file())]
    assert [text for text in trail if code in text] == []
    assert any("{{secret:ask_human_" in text for text in trail)


async def test_a_rejected_approval_ends_the_run_aborted_with_the_comment(flow_env, shop_secret, monkeypatch, tmp_path):
    from flow_helpers import make_photos

    photos = make_photos(tmp_path / "photos")
    with Marketplace(users=USERS, preview_delay_ms=100) as shop:
        async with fake_model_env(MarketplaceListingPolicy(), monkeypatch):
            running = asyncio.ensure_future(run_webtask.with_options(flow_run_name="human-approve")(
                listing_task(shop.url("/listings"), approval="price above 40"), start_url=shop.url("/listings"),
                resources={"listing_image_1": str(photos[0]), "listing_image_2": str(photos[1])}, max_steps=20,
                output_schema=OUTPUT_SCHEMA, secrets=shop_secret, human={"timeout_s": 60, "poll_s": 0.5},
                return_state=True))
            paused = await paused_run("human-approve")
            answered = await resume_as_the_ui_does(paused.id, {"decision": "reject", "comment": "too cheap"})
            state = await running
        assert shop.listings() == []

    assert answered.json()["status"] == "ACCEPT"
    assert state.is_failed() and state.name == "Aborted"
    result = await webtask_result(state)
    assert (result.status, result.feedback) == (WorkerStatus.aborted, "rejected by the reviewer (Prefect UI): too cheap")
    # Every answer, not only a secret one, is deleted from the server once the run has read it.
    kept = [item.key for item in await run_inputs(state.state_details.flow_run_id)]
    assert kept and not [key for key in kept if key.endswith("-response")], kept


async def test_no_answer_in_time_ends_the_run_aborted(flow_env, shop_secret, monkeypatch):
    with Marketplace(users=USERS, second_factor="email") as shop:
        async with fake_model_env(LOGIN_ONLY, monkeypatch):
            state = await run_webtask(listing_task(shop.url("/listings")), start_url=shop.url("/listings"),
                                      max_steps=10, secrets=shop_secret, human={"timeout_s": 2, "poll_s": 0.5},
                                      return_state=True)
    assert state.is_failed() and state.name == "Aborted", state
    result = await webtask_result(state)
    assert (result.status, result.feedback) == (WorkerStatus.aborted, "no answer within 2 s")


async def test_a_totp_seed_from_a_secret_block_logs_in_unattended(flow_env, shop_secret, monkeypatch):
    from prefect.blocks.system import Secret

    with Marketplace(users=USERS, second_factor="totp") as shop:
        seed = shop.checks.totp_seed
        await Secret(value=seed).asave("webtask-test-shop-2fa", overwrite=True)
        async with fake_model_env(LOGIN_ONLY, monkeypatch) as server:
            state = await run_webtask(
                listing_task(shop.url("/listings"), totp="{{totp:shop_2fa}}"), start_url=shop.url("/listings"),
                max_steps=10, session_key="human-totp",
                secrets={**shop_secret, "shop_2fa": "totp:webtask-test-shop-2fa"}, return_state=True)
            requests = server.requests
    assert state.is_completed(), state.message
    flow_run_id = state.state_details.flow_run_id
    stored = "".join(path.read_text(errors="replace") for path in flow_env.sessions.rglob("*") if path.is_file())
    trail = json.dumps(requests) + stored + json.dumps([a.data for a in await read_artifacts(flow_run_id)])
    assert seed not in trail and "{{totp:shop_2fa}}" in trail
