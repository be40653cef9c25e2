"""The ``ask_human`` tool: the model asks a person (see webtask_core.human for the rest of the path).

The tool only records the question (``StepState.question``); the step ends with it, and the task run
gets the answer from the caller's handler before the next step (TaskRun.answer_pending).
"""

from __future__ import annotations

from pydantic import Field

from webtask_core.errors import ActionError
from webtask_core.human import ASK_HUMAN, HumanKind, HumanRequest
from webtask_core.tools.base import Tool, ToolContext, ToolParams

__all__ = ["AskHumanTool"]


class AskHumanTool(Tool):
    name = ASK_HUMAN
    uses_browser = False
    description = (
        "Ask a person for what only a person can give, then wait for the answer: a log-in code (from "
        "an authenticator app, or sent by e-mail or SMS), the answer to a CAPTCHA or another check "
        "that a person must pass, a choice the task leaves open, or approval before an irreversible "
        "action when the task asks for it. Calls after it in the same turn are not run; its result "
        "is the answer. A code is secret: you get a placeholder to type. Never ask for a password or "
        "anything the task already gives you."
    )

    class Params(ToolParams):
        question: str = Field(description="The question, as the person will read it.")
        kind: HumanKind = Field(
            default="text",
            description="code: a one-time code; text: free text (e.g. the characters of a CAPTCHA); "
                        "choice: one of options; approve: approve or reject what you are about to do.")
        options: list[str] | None = Field(default=None, description="kind choice: the options (two or more).")
        why: str = Field(description="Why you need it, in a sentence (what the page shows).")
        secret: bool | None = Field(
            default=None, description="Keep the answer secret from you and every record (default: true "
                                      "for a code, else false).")

    async def run(self, params: Params, ctx: ToolContext) -> str:
        if not ctx.human_available:
            raise ActionError(
                "nobody can answer here: this run has no way to ask a person (no human handler). If the task "
                f"cannot go on without it, abort with that reason ({params.why.strip() or params.question})")
        if not params.question.strip():
            raise ActionError("invalid input for ask_human: question must not be empty")
        options = [option.strip() for option in params.options or [] if option.strip()]
        if params.kind == "choice" and len(options) < 2:
            raise ActionError("invalid input for ask_human: a choice needs two or more options")
        if params.kind != "choice" and options:
            raise ActionError(f"invalid input for ask_human: options are for kind choice, not {params.kind}")
        secret = params.kind == "code" if params.secret is None else params.secret
        if params.kind in ("approve", "choice") and secret:
            raise ActionError(f"invalid input for ask_human: a {params.kind} answer cannot be secret")
        ctx.state.question = HumanRequest(question=params.question.strip(), kind=params.kind, options=options,
                                          why=params.why.strip(), secret=secret)
        return "asked; waiting for the person's answer"
