"""What ``webtask run`` shows on stderr while a task runs: a line per finished step and, under them, a
live status — a spinner, the step, what it is doing now (observing, waiting for the model, the tool
call running) and the tokens so far. On a terminal rich redraws the status in place; in a log only
the lines are written."""

from __future__ import annotations

from types import TracebackType
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.spinner import Spinner

from webtask_core.progress import Phase, Progress
from webtask_core.record import Step

__all__ = ["StepDisplay"]


class StepDisplay:
    def __init__(self, console: Console):
        self.console = console
        self._spinner = Spinner("dots", text="starting the browser")
        self._live = Live(self._spinner, console=console, transient=True, refresh_per_second=10)

    def __enter__(self) -> StepDisplay:
        self._live.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._live.stop()

    def progress(self, update: Progress) -> None:
        """The Agent's progress callback."""
        if update.phase is Phase.retrying:  # worth a line of its own: it explains a pause
            self.console.print(f"[yellow]step {update.step} failed[/yellow]: {escape(update.detail)}")
        doing = f"{update.phase.value} {update.detail}" if update.phase is Phase.acting else update.phase.value
        self._spinner.update(text=f"[bold]step {update.step}/{update.max_steps}[/bold] {escape(doing)} "
                                  f"[dim]· {update.tokens:,} tokens[/dim]")
        self._live.refresh()  # now, not at the next tick: an action can be over before it

    def step_done(self, step: Step) -> None:
        colour = "green" if step.ok and not step.error else "yellow"
        self.console.print(
            f"[bold]step {step.index}[/bold] [dim]{escape(step.url)}[/dim]\n"
            f"  [{colour}]{escape(step.error or step.summary())}[/{colour}]"
            f" [dim]({step.timings.total_ms / 1000:.1f} s, {step.usage.total_tokens:,} tokens)[/dim]"
        )

    def finished(self, result: Any) -> None:
        colour = "green" if result.ok else "red"
        self.console.print(f"[{colour}]{result.status.value}[/{colour}]: {escape(result.feedback)} "
                           f"[dim]({result.steps} steps, {result.usage.total_tokens:,} tokens)[/dim]")
