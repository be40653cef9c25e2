"""When only a person can answer: the ``ask_human`` tool, and what a run asks and gets back.

The model calls ``ask_human`` (webtask_core/tools/ask_human.py) (a question, a kind — ``code``, ``text``, ``choice`` with options,
``approve`` — and why) when it needs what only a person can give: a log-in code sent by e-mail, the
answer to a CAPTCHA, a choice, an approval before an irreversible action. The step ends there (calls
after it in the same turn are not run); before the next step the run hands a :class:`HumanRequest`
(the question, the page's URL and a screenshot) to the caller's handler::

    async def ask(request: HumanRequest) -> HumanAnswer | str: ...
    agent = Agent(llm, human=ask)

and the answer becomes the ask_human call's result. A secret answer (a code, by default) never
reaches the model or a record: it becomes a run-time secret, typed where the model writes the
placeholder the result names, and scrubbed like any secret. A rejected approval ends the task
``aborted`` with the reviewer's comment; a handler that gives up raises :class:`NoHumanAnswer` and the
task ends ``aborted`` with its reason. Without a handler the tool says nobody can answer, and the
model aborts with that reason.

Where the question waits is the handler's business: ``webtask run`` asks on the terminal
(:func:`terminal_handler`); the Prefect flow pauses its run for a form in the UI (webtask_flows.human).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from webtask_core.errors import WebtaskError
from webtask_core.record import utc_now

__all__ = [
    "HumanKind",
    "HumanRequest",
    "HumanAnswer",
    "HumanHandler",
    "NoHumanAnswer",
    "PendingQuestion",
    "answer_message",
    "as_answer",
    "terminal_handler",
    "ASK_HUMAN",
]

ASK_HUMAN = "ask_human"
HumanKind = Literal["code", "text", "choice", "approve"]
_APPROVE_WORDS = {"y", "yes", "approve", "approved", "ok", "publish"}
_REJECT_WORDS = {"n", "no", "reject", "rejected", "deny", "denied"}


class HumanRequest(BaseModel):
    """What the model asked, and what the person needs to see to answer it."""

    question: str
    kind: HumanKind = "text"
    options: list[str] = Field(default_factory=list)  # kind "choice"
    why: str = ""
    secret: bool = False  # the answer is typed like a secret and never shown to the model
    # Filled in by the run, for the person:
    task: str = ""  # the task (secrets as placeholders)
    url: str = ""  # the page when the question was asked
    page_title: str = ""
    step: int = 0
    screenshot: str | None = None  # base64 JPEG of that page (secret fields masked), or None
    asked_at: datetime = Field(default_factory=utc_now)


class HumanAnswer(BaseModel):
    """A person's answer. ``approve`` questions use ``approved`` (and ``comment``); the others ``answer``."""

    answer: str = ""
    approved: bool | None = None
    comment: str = ""
    by: str = ""  # who answered, when the handler knows

    @model_validator(mode="after")
    def _strip(self) -> HumanAnswer:
        self.answer = self.answer.strip()
        self.comment = self.comment.strip()
        return self


HumanHandler = Callable[[HumanRequest], Awaitable["HumanAnswer | str"]]


class NoHumanAnswer(WebtaskError):
    """Raised by a handler that got no answer (a timeout, nobody there): the task ends ``aborted``
    with ``reason``."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.reason,))


class PendingQuestion(BaseModel):
    """A question asked by the step that ended with it, waiting for its answer (it is part of an
    unfinished task's state, so a suspended run resumes with it)."""

    call_id: str
    position: int  # the ask_human call's place among its step's calls
    request: HumanRequest


def as_answer(request: HumanRequest, raw: HumanAnswer | str) -> HumanAnswer:
    """The handler's return value as a checked answer; an unusable one is a NoHumanAnswer naming why."""
    answer = raw if isinstance(raw, HumanAnswer) else HumanAnswer(answer=str(raw))
    if request.kind == "approve":
        if answer.approved is None:
            word = answer.answer.casefold()
            if word in _APPROVE_WORDS or word in _REJECT_WORDS:
                answer = answer.model_copy(update={"approved": word in _APPROVE_WORDS})
            else:
                raise NoHumanAnswer(f"the answer to the approval {request.question!r} was neither approve nor reject")
        return answer
    if not answer.answer:
        raise NoHumanAnswer(f"the person gave an empty answer to {request.question!r}")
    if request.kind == "choice" and answer.answer not in request.options:
        folded = {option.casefold(): option for option in request.options}
        if answer.answer.casefold() not in folded:
            raise NoHumanAnswer(f"{answer.answer!r} is not one of the options {request.options}")
        answer = answer.model_copy(update={"answer": folded[answer.answer.casefold()]})
    return answer


def answer_message(request: HumanRequest, answer: HumanAnswer, *, placeholder: str | None = None) -> str:
    """The ask_human call's result, as the model reads it. A secret answer is only its placeholder."""
    who = f" ({answer.by})" if answer.by else ""
    if request.kind == "approve":
        comment = f" Comment: {answer.comment}" if answer.comment else ""
        return (f"approved by the person{who}: go on.{comment}" if answer.approved
                else f"rejected by the person{who}.{comment}")
    if placeholder is not None:
        return (f"the person answered{who}. The answer is secret: type it as {placeholder} (fill or type put "
                "the real value in; you never see it).")
    comment = f" Comment: {answer.comment}" if answer.comment else ""
    return f"the person answered{who}: {answer.answer}{comment}"


def terminal_handler(console: object | None = None) -> HumanHandler:
    """A handler asking on the terminal (``webtask run``): hidden input for secret answers, a list of
    options for a choice, y/n for an approval. The prompt runs in a thread, so the event loop (and the
    browser) goes on."""
    import asyncio

    from rich.console import Console
    from rich.prompt import Confirm, Prompt

    shown = console if isinstance(console, Console) else Console(stderr=True)

    def ask(request: HumanRequest) -> HumanAnswer:
        shown.rule("[bold]a person is needed[/bold]")
        shown.print(f"[bold]{request.question}[/bold]")
        if request.why:
            shown.print(f"Why: {request.why}")
        if request.url:
            shown.print(f"Page: {request.url}")
        if request.kind == "approve":
            approved = Confirm.ask("Approve?", console=shown)
            comment = Prompt.ask("Comment", default="", console=shown)
            return HumanAnswer(approved=approved, comment=comment, by="terminal")
        if request.kind == "choice":
            return HumanAnswer(answer=Prompt.ask("Choose", choices=request.options, console=shown), by="terminal")
        return HumanAnswer(answer=Prompt.ask("Answer", password=request.secret, console=shown), by="terminal")

    async def handler(request: HumanRequest) -> HumanAnswer:
        return await asyncio.to_thread(ask, request)

    return handler
