"""The two error families of webtask.

What the *model* got wrong (bad tool input, unknown element id, element not interactable, unknown
resource, invalid output) is an :class:`ActionError`: the worker turns it into a tool result the model
sees, and the loop goes on.

What the *infrastructure* got wrong (model API overloaded or rate limited, network, browser crashed)
is a :class:`TransientError`: it propagates to the caller, who may retry the step.

Everything else the caller did wrong up front is a :class:`ConfigError` naming the parameter.
"""

from __future__ import annotations

__all__ = [
    "WebtaskError",
    "ConfigError",
    "ActionError",
    "TransientError",
    "ModelTransientError",
    "BrowserCrashedError",
    "PermanentModelError",
    "UnknownModelError",
    "ResourceError",
    "SessionFormatError",
]


class WebtaskError(Exception):
    """Base class of every error this library raises on purpose."""

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt from args and attributes, not by calling __init__ (whose signature differs per
        # class), so every error survives pickling — Prefect persists a failed run's exception.
        return (_rebuild, (type(self), self.args, dict(vars(self))))


def _rebuild(cls: type[WebtaskError], args: tuple[object, ...], attributes: dict[str, object]) -> WebtaskError:
    error = cls.__new__(cls)
    error.args = args
    vars(error).update(attributes)
    return error


class ConfigError(WebtaskError, ValueError):
    """Bad input given by the caller, rejected before any work starts. The message names the parameter."""

    def __init__(self, parameter: str, problem: str):
        self.parameter = parameter
        self.problem = problem
        super().__init__(f"{parameter}: {problem}")


class ActionError(WebtaskError):
    """A tool call that could not be carried out because of what the model asked for.

    The message is written for the model: it names the element id / tool / resource and the reason.
    """


class TransientError(WebtaskError):
    """An infrastructure failure. The step did nothing the caller has to undo; retrying it is safe."""


class ModelTransientError(TransientError):
    """The model API was overloaded, rate limited, returned 5xx, timed out or dropped the connection
    (after the SDK's own retries)."""

    def __init__(self, message: str, *, status_code: int | None = None):
        self.status_code = status_code
        super().__init__(message)


class BrowserCrashedError(TransientError):
    """The browser process or its page died. A retried step relaunches it."""


class PermanentModelError(WebtaskError):
    """Authentication failure, bad request or a refusal: retrying will not help."""

    def __init__(self, message: str, *, status_code: int | None = None):
        self.status_code = status_code
        super().__init__(message)


class UnknownModelError(PermanentModelError, ConfigError):
    """The provider does not know the model name (its 404 on the first call): a ConfigError naming
    ``model`` for the caller, and a PermanentModelError (never retried) for the step loop."""

    def __init__(self, model: str, detail: str, *, status_code: int | None = 404):
        self.status_code = status_code
        self.parameter = "model"
        self.problem = f"the model API does not know {model!r} ({detail})"
        WebtaskError.__init__(self, f"model: {self.problem}")


class ResourceError(ConfigError):
    """A file resource that does not exist, is not a file, or has an invalid name."""

    def __init__(self, name: str, problem: str):
        self.name = name
        super().__init__(f"resource {name!r}", problem)


class SessionFormatError(WebtaskError, ValueError):
    """A stored TaskRecord is corrupt or from an incompatible schema version."""
