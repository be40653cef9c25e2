"""Secrets kept out of exceptions and log records: a scrubbed copy of an error (and of its causes)
and a logging filter, both driven by the run's secret values (webtask_core.secrets.SecretValues)."""

from __future__ import annotations

import logging
from typing import Any, Protocol

__all__ = ["Scrubber", "RedactingFilter", "redact_exception"]


class Scrubber(Protocol):
    """What redaction needs of the secret values: whether a text shows one, and a text without them."""

    def __bool__(self) -> bool: ...

    def contains(self, text: str) -> bool: ...

    def scrub(self, text: str) -> str: ...

    def scrub_data(self, data: Any) -> Any: ...


def redact_exception(secrets: Scrubber, error: BaseException) -> BaseException:
    """``error`` itself when no secret shows in it or its causes; else a scrubbed copy of the same
    type (same attributes, same traceback), whose cause and context are scrubbed copies too."""
    if not secrets or not _chain_shows(secrets, error, set()):
        return error
    return _redacted_copy(secrets, error, {})


def _redacted_copy(secrets: Scrubber, error: BaseException, done: dict[int, BaseException]) -> BaseException:
    if id(error) in done:
        return done[id(error)]
    args = tuple(secrets.scrub(arg) if isinstance(arg, str) else arg for arg in error.args)
    try:
        clone = type(error).__new__(type(error))
        clone.args = args
        clone.__dict__.update({
            key: secrets.scrub_data(value) if isinstance(value, (str, list, tuple, dict)) else value
            for key, value in vars(error).items()
        })
    except (TypeError, AttributeError):  # an exotic exception type: keep the message, lose the type
        clone = RuntimeError(secrets.scrub(f"{type(error).__name__}: {error}"))
    done[id(error)] = clone
    clone.__traceback__ = error.__traceback__
    clone.__suppress_context__ = error.__suppress_context__
    clone.__cause__ = _redacted_copy(secrets, error.__cause__, done) if error.__cause__ is not None else None
    clone.__context__ = _redacted_copy(secrets, error.__context__, done) if error.__context__ is not None else None
    notes = getattr(error, "__notes__", None)
    if notes:
        clone.__notes__ = [secrets.scrub(note) for note in notes]
    return clone


def _chain_shows(secrets: Scrubber, error: BaseException, seen: set[int]) -> bool:
    if id(error) in seen:
        return False
    seen.add(id(error))
    texts = [str(arg) for arg in error.args] + [str(value) for value in vars(error).values() if isinstance(value, str)]
    texts += list(getattr(error, "__notes__", None) or [])
    if any(secrets.contains(text) for text in texts):
        return True
    return any(
        linked is not None and _chain_shows(secrets, linked, seen) for linked in (error.__cause__, error.__context__)
    )


class RedactingFilter(logging.Filter):
    """A logging filter (put it on a handler) that scrubs secrets from messages and tracebacks."""

    def __init__(self, secrets: Scrubber):
        super().__init__()
        self.secrets = secrets
        self._formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        if self.secrets.contains(message):
            record.msg, record.args = self.secrets.scrub(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.secrets.scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = self.secrets.scrub(record.stack_info)
        return True
