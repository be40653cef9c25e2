"""ask_human through Agent.do on the demo marketplace (real Chromium, FakeLLM): an e-mailed code typed as
a secret, a TOTP seed typed as its code, the security check, approvals, and no handler at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_helpers import SHOP_PASSWORD, USERS, ListingOutput, listing_task
from pydantic import SecretStr

from webtask_core import Agent, WorkerStatus
from webtask_core.errors import ActionError
from webtask_core.human import HumanAnswer, HumanRequest, NoHumanAnswer
from webtask_core.secrets import SecretValue
from webtask_core.task_context import TaskSnapshot
from webtask_core.testing import FakeLLM, MarketplaceListingPolicy
from webtask_core.testing.marketplace import Marketplace
from webtask_core.worker import Worker, WorkerOptions


def _secrets(**extra: SecretValue) -> WorkerOptions:
    return WorkerOptions(secrets={"shop_password": SecretStr(SHOP_PASSWORD), **extra})


class Person:
    """A handler that answers from what a person would see (the site's inbox, the picture)."""

    def __init__(self, answer):
        self.answer, self.requests = answer, []

    async def __call__(self, request: HumanRequest):
        self.requests.append(request)
        return self.answer(request)


def _everything(agent: Agent, llm: FakeLLM) -> str:
    return json.dumps(llm.requests) + (agent.last_session.to_json() if agent.last_session else "")


async def test_an_emailed_code_is_asked_for_and_typed_as_a_secret(tab, photos: list[Path]):
    with Marketplace(users=USERS, preview_delay_ms=100, second_factor="email") as shop:
        person = Person(lambda request: shop.checks.inbox[-1].code)
        llm = FakeLLM(MarketplaceListingPolicy())
        agent = Agent(llm, browser=tab, options=_secrets(), human=person,
                      resources={"listing_image_1": photos[0], "listing_image_2": photos[1]})
        result = await agent.do(listing_task(shop.url("/listings")), max_steps=25, output_schema=ListingOutput)
        code, base_url = shop.checks.inbox[-1].code, shop.base_url

    assert result.status is WorkerStatus.completed, result.feedback
    (request,) = person.requests
    assert request.kind == "code" and request.secret and "e-mailed" in request.question
    assert request.url.startswith(base_url + "/login/verify") and request.screenshot
    assert request.task.startswith("Create a listing") and request.step >= 1
    everything = _everything(agent, llm)
    assert code not in everything  # neither the model nor the record ever held the code
    assert "{{secret:ask_human_" in everything  # the model typed the placeholder the answer named
    assert shop.checks.rejected_codes == 0
    assert agent.task_context is not None and agent.task_context.secret_answers == [f"ask_human_{request.step}"]


async def test_a_totp_seed_is_typed_as_the_current_code_without_a_person(tab, photos: list[Path]):
    with Marketplace(users=USERS, preview_delay_ms=100, second_factor="totp") as shop:
        seed = shop.checks.totp_seed
        llm = FakeLLM(MarketplaceListingPolicy())
        agent = Agent(llm, browser=tab, options=_secrets(shop_2fa=SecretValue(value=seed, totp=True)),
                      resources={"listing_image_1": photos[0], "listing_image_2": photos[1]})
        result = await agent.do(listing_task(shop.url("/listings"), totp="{{totp:shop_2fa}}"), max_steps=25,
                                output_schema=ListingOutput)
        typed = agent.worker.secrets._entries["shop_2fa"].codes.typed_codes

    assert result.status is WorkerStatus.completed, result.feedback
    assert len(typed) == 1
    everything = _everything(agent, llm)
    assert seed not in everything and typed[0] not in everything
    assert "{{totp:shop_2fa}}" in everything


async def test_the_security_check_is_answered_by_a_person(tab, photos: list[Path]):
    with Marketplace(users=USERS, preview_delay_ms=100, challenge_after=1) as shop:
        person = Person(lambda request: shop.checks.challenge_text)
        resources = {"listing_image_1": photos[0], "listing_image_2": photos[1]}
        for sku in ("SHOE-001", "SHOE-002"):
            llm = FakeLLM(MarketplaceListingPolicy())
            agent = Agent(llm, browser=tab, options=_secrets(), human=person, resources=resources)
            result = await agent.do(listing_task(shop.url("/listings"), sku=sku), max_steps=25,
                                    output_schema=ListingOutput)
            assert result.status is WorkerStatus.completed, result.feedback
        assert shop.checks.challenges_passed == 1 and len(shop.listings()) == 2

    (request,) = person.requests
    assert request.kind == "text" and not request.secret and request.url.endswith("/challenge?next=/listings/new")


async def test_an_approval_is_asked_before_publish_and_a_rejection_aborts_with_the_comment(tab, shop, photos):
    resources = {"listing_image_1": photos[0], "listing_image_2": photos[1]}
    person = Person(lambda request: HumanAnswer(approved=False, comment="price looks wrong", by="ops"))
    agent = Agent(FakeLLM(MarketplaceListingPolicy()), browser=tab, options=_secrets(), human=person,
                  resources=resources)
    rejected = await agent.do(listing_task(shop.url("/listings"), approval="price above 40"), max_steps=25,
                              output_schema=ListingOutput)
    assert rejected.status is WorkerStatus.aborted
    assert rejected.feedback == "rejected by the reviewer (ops): price looks wrong"
    assert shop.listings() == []
    (request,) = person.requests
    assert request.kind == "approve" and request.why == "price above 40" and "/listings/drafts/" in request.url

    person.answer = lambda request: "approve"
    approved = await agent.do(listing_task(shop.url("/listings"), approval="price above 40"), max_steps=25,
                              output_schema=ListingOutput)
    assert approved.status is WorkerStatus.completed, approved.feedback
    assert len(shop.listing_by_sku("SHOE-001")) == 1


async def test_without_a_handler_the_model_is_told_and_aborts_with_that_reason(tab):
    with Marketplace(users=USERS, second_factor="email") as shop:
        llm = FakeLLM(MarketplaceListingPolicy(login_only=True))
        agent = Agent(llm, browser=tab, options=_secrets())
        result = await agent.do(listing_task(shop.url("/listings")), max_steps=10)
    assert result.status is WorkerStatus.aborted
    assert "nobody can answer here" in result.feedback and "no human handler" in result.feedback


async def test_a_handler_that_gets_no_answer_ends_the_task_aborted(tab):
    async def nobody(request: HumanRequest) -> HumanAnswer:
        raise NoHumanAnswer("no answer within 1 h")

    with Marketplace(users=USERS, second_factor="email") as shop:
        agent = Agent(FakeLLM(MarketplaceListingPolicy(login_only=True)), browser=tab, options=_secrets(),
                      human=nobody)
        result = await agent.do(listing_task(shop.url("/listings")), max_steps=10)
    assert (result.status, result.feedback) == (WorkerStatus.aborted, "no answer within 1 h")
    last = agent.last_session.steps[-1]
    assert [call.message for call in last.tool_calls if call.name == "ask_human"] == ["no answer: no answer within 1 h"]


def test_a_task_resumed_in_another_process_says_its_earlier_secret_answers_are_gone():
    # A person's code answered before the run suspended: the snapshot keeps its name, never its value
    # (the flow stores the snapshot scrubbed); the worker that resumes it has no value for it, and
    # typing it tells the model to ask again instead of "unknown secret".
    first = Worker(FakeLLM(MarketplaceListingPolicy()), lambda: None, options=_secrets())
    ctx = first.start("Log in to the shop.")
    placeholder = first.secrets.add("ask_human_2", "481516")
    ctx.secret_answers.append("ask_human_2")  # as TaskRun.apply_answer does
    stored = first.secrets.scrub(ctx.snapshot().model_dump_json())
    assert "481516" not in stored

    later = Worker(FakeLLM(MarketplaceListingPolicy()), lambda: None, options=_secrets())
    resumed = later.start("Log in to the shop.")
    later.resume(resumed, TaskSnapshot.model_validate_json(stored))
    assert resumed.secret_answers == ["ask_human_2"]
    with pytest.raises(ActionError) as gone:
        later.secrets.reveal(f"code: {placeholder}")
    assert str(gone.value).startswith("{{secret:ask_human_2}}: a person's secret answer given before this run "
                                      "was suspended;") and "ask the person again with ask_human" in str(gone.value)
    assert later.secrets.reveal("{{secret:shop_password}}") == SHOP_PASSWORD
    with pytest.raises(ActionError, match="unknown secret 'ask_human_9'"):
        later.secrets.reveal("{{secret:ask_human_9}}")
    # A new answer under that name (not that it happens: names follow the step) is typed again.
    later.secrets.add("ask_human_2", "112358")
    assert later.secrets.reveal(placeholder) == "112358"
