"""One-time codes from a TOTP seed (RFC 6238, the authenticator-app kind), typed at the last moment.

A secret whose ``SecretValue`` says ``totp=True`` holds the seed (base32, as a site shows it under its
QR code). The model writes ``{{totp:NAME}}`` where the code goes; ``fill`` / ``type`` put in the code
of the current 30-second window at the moment of typing, and every code typed is scrubbed from what is
recorded like a secret value. The model sees neither the seed nor a code.

Two rules make an unattended log-in reliable:

- a code is never typed in the last :data:`FRESH_MARGIN_S` seconds of its window (it would turn stale
  before the form is sent): typing waits for the next window instead;
- a code the site rejected because the window turned is retried once: when the model types
  ``{{totp:NAME}}`` again within the same window, typing waits for the next window and types its code;
  a third code within :data:`RETRY_SPAN_WINDOWS` windows is refused (the seed is wrong, or the site
  takes something else), so the model aborts instead of locking the account.
"""

from __future__ import annotations

import asyncio
import binascii
import time
from collections.abc import Awaitable, Callable

import pyotp

from webtask_core.errors import ActionError, ConfigError

__all__ = ["TotpCodes", "FRESH_MARGIN_S", "RETRY_SPAN_WINDOWS", "MAX_CODES"]

FRESH_MARGIN_S = 2.0
RETRY_SPAN_WINDOWS = 3  # codes typed closer together than this are attempts at the same log-in
MAX_CODES = 2  # the first code and one retry with the next window's


class TotpCodes:
    """The codes of one seed, for one task run: ``await codes.ready()`` then ``codes.code()``.

    ``clock`` (seconds since the epoch) and ``sleep`` are replaceable, so tests can freeze time."""

    def __init__(self, name: str, seed: str, *, digits: int = 6, interval: int = 30,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep):
        cleaned = "".join(seed.split()).upper()
        try:
            pyotp.TOTP(cleaned).at(0)
        except (binascii.Error, ValueError, TypeError):
            raise ConfigError("secrets", f"{name!r} is marked totp but its value is not a base32 TOTP seed") from None
        self.name = name
        self._totp = pyotp.TOTP(cleaned, digits=digits, interval=interval)
        self.interval = interval
        self.clock = clock
        self.sleep = sleep
        self.typed: list[int] = []  # the windows (counters) whose codes were typed, oldest first
        self.typed_codes: list[str] = []

    def window(self, now: float | None = None) -> int:
        return int((self.clock() if now is None else now) // self.interval)

    def _recent(self, counter: int) -> list[int]:
        return [typed for typed in self.typed if counter - typed < RETRY_SPAN_WINDOWS]

    async def ready(self) -> None:
        """Wait (at most one window) until a code may be typed: not in the last seconds of its
        window, and not again in a window whose code was typed already (the site rejected it)."""
        now = self.clock()
        counter = self.window(now)
        recent = self._recent(counter)
        if len(recent) >= MAX_CODES:
            raise ActionError(
                f"{{{{totp:{self.name}}}}}: {len(recent)} codes were typed in the last "
                f"{RETRY_SPAN_WINDOWS * self.interval} seconds already; if the site rejected them, the seed is "
                "wrong or the site wants another code: abort with that reason rather than lock the account")
        left = (counter + 1) * self.interval - now
        if (recent and recent[-1] >= counter) or left < FRESH_MARGIN_S:
            await self.sleep(left + 0.05)

    def code(self) -> str:
        """The code of the window now, noted as typed (call :meth:`ready` first)."""
        counter = self.window()
        code = self._totp.at(counter * self.interval)
        self.typed.append(counter)
        self.typed_codes.append(code)
        return code

    def at(self, when: float) -> str:
        """The code for a moment (tests, and the demo site's check)."""
        return self._totp.at(when)
