"""What only a person can pass on the demo marketplace: a second factor at log-in and a challenge.

- ``second_factor="totp"``: after the password, the site asks for the 6-digit code of an authenticator
  app (RFC 6238, the seed in ``Checks.totp_seed``; checked strictly within the current 30-second
  window, as a careful site does);
- ``second_factor="email"``: the site "e-mails" a 6-digit code to the account's address: the mail
  lands on the site's ``/inbox`` page (the owner's mailbox; a person reads it, not the agent);
- ``challenge_after=N``: after N listings published within ``challenge_window_s``, opening the
  listing form shows a security check (characters drawn in a picture, no text in the page) until
  it is answered.
"""

from __future__ import annotations

import hmac
import io
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

import pyotp

__all__ = ["Checks", "Mail", "SecondFactor"]

SecondFactor = Literal["totp", "email"]
_PENDING_LOGIN_S = 600.0


@dataclass(frozen=True)
class Mail:
    to: str
    subject: str
    body: str
    code: str
    sent_at: datetime


@dataclass
class _PendingLogin:
    username: str
    next_path: str
    code: str | None  # the e-mailed code (None for an authenticator app)
    started: float


@dataclass
class Checks:
    """The site's checks and their state (shared by the app and the `Marketplace` that owns it)."""

    second_factor: SecondFactor | None = None
    totp_seed: str = field(default_factory=pyotp.random_base32)
    challenge_after: int | None = None
    challenge_window_s: float = 300.0
    inbox: list[Mail] = field(default_factory=list)
    challenge_text: str | None = None  # the characters to type while a check is due
    challenge_version: int = 0
    challenges_passed: int = 0
    rejected_codes: int = 0
    _pending: dict[str, _PendingLogin] = field(default_factory=dict)
    _published: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.second_factor not in (None, "totp", "email"):
            raise ValueError(f"second_factor must be None, 'totp' or 'email', got {self.second_factor!r}")
        if self.challenge_after is not None and self.challenge_after < 1:
            raise ValueError(f"challenge_after must be a positive number of listings, got {self.challenge_after!r}")

    # ---- second factor ----

    def start_login(self, username: str, next_path: str) -> str:
        """A token for the verification page; with e-mail, the code is sent to the inbox."""
        token = secrets.token_urlsafe(16)
        code = None
        if self.second_factor == "email":
            code = f"{secrets.randbelow(10**6):06d}"
            self.inbox.append(Mail(to=f"{username}@closet.example", subject="Your Closet Exchange sign-in code",
                                   body=f"Your sign-in code is {code}. It expires in 10 minutes.", code=code,
                                   sent_at=datetime.now(UTC)))
        self._pending[token] = _PendingLogin(username, next_path, code, time.time())
        return token

    def pending(self, token: str) -> _PendingLogin | None:
        login = self._pending.get(token)
        if login is None or time.time() - login.started > _PENDING_LOGIN_S:
            return None
        return login

    def verify(self, token: str, code: str) -> _PendingLogin | None:
        """The pending log-in when ``code`` is right (it is then done), else None."""
        login = self.pending(token)
        code = code.strip().replace(" ", "")
        if login is None:
            return None
        if login.code is not None:
            good = hmac.compare_digest(code, login.code)
        else:
            good = pyotp.TOTP(self.totp_seed).verify(code, valid_window=0)
        if not good:
            self.rejected_codes += 1
            return None
        del self._pending[token]
        return login

    def current_code(self) -> str:
        """The authenticator app's code now (what a person would read off their phone)."""
        return pyotp.TOTP(self.totp_seed).now()

    # ---- the challenge ----

    def note_published(self) -> None:
        now = time.time()
        self._published = [when for when in self._published if now - when < self.challenge_window_s] + [now]
        if self.challenge_after is not None and len(self._published) >= self.challenge_after:
            self._published.clear()
            self.challenge_text = "".join(secrets.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(5))
            self.challenge_version += 1

    @property
    def challenge_due(self) -> bool:
        return self.challenge_text is not None

    def answer_challenge(self, answer: str) -> bool:
        if self.challenge_text is None:
            return True
        if answer.strip().upper() != self.challenge_text:
            return False
        self.challenge_text = None
        self.challenges_passed += 1
        return True

    def challenge_picture(self) -> bytes:
        """The characters drawn in a PNG with some noise (there is no text in the page to read)."""
        from PIL import Image, ImageDraw

        image = Image.new("RGB", (240, 80), (245, 240, 230))
        draw = ImageDraw.Draw(image)
        rng = secrets.SystemRandom()
        for _ in range(12):
            draw.line([(rng.randint(0, 240), rng.randint(0, 80)), (rng.randint(0, 240), rng.randint(0, 80))],
                      fill=(rng.randint(120, 200), rng.randint(120, 200), rng.randint(120, 200)), width=2)
        for position, char in enumerate(self.challenge_text or ""):
            draw.text((30 + 38 * position, 25 + rng.randint(-8, 8)), char, fill=(40, 40, 90),
                      font_size=32)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()

