"""Keep tests offline: no request may reach a real model (or, on demand, any non-loopback host).

`AnthropicLLM` calls :func:`check_model_endpoint` when it is constructed. With ``WEBTASK_OFFLINE=1``
in the environment (the project's ``tests/conftest.py`` sets it) any base URL that is not loopback is
refused up front, so a test that forgot to point the model at `FakeAnthropicServer` fails loudly
instead of spending money. It lives with the model client because production code runs it on every
client it builds; the offline kit (:mod:`webtask_core.testing`) re-exports the parts tests call.

For users' own test suites::

    from webtask_core.testing import offline_mode   # or webtask_core.llm.guard

    with offline_mode():            # WEBTASK_OFFLINE=1 and non-loopback sockets refused
        ...
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from webtask_core.errors import ConfigError

__all__ = [
    "OFFLINE_ENV",
    "NetworkBlockedError",
    "is_offline",
    "is_loopback_host",
    "is_loopback_url",
    "check_model_endpoint",
    "assert_offline",
    "offline_mode",
]

OFFLINE_ENV = "WEBTASK_OFFLINE"
_TRUE = {"1", "true", "yes", "on"}
_FAKE_HINT = (
    "tests must use the offline model kit: webtask_core.testing.FakeLLM in process, or start "
    "webtask_core.testing.FakeAnthropicServer and pass base_url=server.base_url"
)


class NetworkBlockedError(ConnectionRefusedError):
    """A socket tried to reach a non-loopback host inside :func:`offline_mode`."""


def is_offline() -> bool:
    """True when ``WEBTASK_OFFLINE`` is set to 1/true/yes/on."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in _TRUE


def is_loopback_host(host: str) -> bool:
    """``localhost``, 127.0.0.0/8 and ::1 (brackets allowed)."""
    host = host.strip().strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_url(url: str) -> bool:
    """True when the URL's host is loopback (any scheme, any port)."""
    host = urlsplit(str(url)).hostname
    return host is not None and is_loopback_host(host)


def check_model_endpoint(url: str, *, parameter: str = "base_url") -> None:
    """Refuse a non-loopback model endpoint while offline. A no-op when not offline."""
    if is_offline() and not is_loopback_url(url):
        raise ConfigError(
            parameter,
            f"{url!r} is not a loopback address and {OFFLINE_ENV}=1 is set; {_FAKE_HINT}",
        )


def assert_offline() -> None:
    """Raise ConfigError unless offline mode is on (call it from a test session's conftest)."""
    if not is_offline():
        raise ConfigError(
            OFFLINE_ENV,
            "offline mode is off: set WEBTASK_OFFLINE=1 (or use offline_mode()) so no test reaches a real model",
        )


def _address_host(address: Any) -> str | None:
    # AF_INET/AF_INET6 addresses are tuples whose first item is the host; AF_UNIX ones are paths.
    if isinstance(address, tuple) and address and isinstance(address[0], str):
        return address[0]
    return None


@contextlib.contextmanager
def offline_mode(*, block_network: bool = True) -> Iterator[None]:
    """Set ``WEBTASK_OFFLINE=1`` for the block; with ``block_network`` also refuse every socket
    connection to a non-loopback host (raising :class:`NetworkBlockedError`). Both are restored on exit.

    Not thread-scoped: it changes the process environment and the ``socket.socket`` class.
    """
    previous_env = os.environ.get(OFFLINE_ENV)
    os.environ[OFFLINE_ENV] = "1"
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def _check(address: Any) -> None:
        host = _address_host(address)
        if host is not None and not is_loopback_host(host):
            raise NetworkBlockedError(f"offline_mode: connection to {address!r} refused; {_FAKE_HINT}")

    def guarded_connect(self: Any, address: Any) -> None:
        _check(address)
        return original_connect(self, address)

    def guarded_connect_ex(self: Any, address: Any) -> int:
        _check(address)
        return original_connect_ex(self, address)

    if block_network:
        socket.socket.connect = guarded_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
    try:
        yield
    finally:
        if block_network:
            socket.socket.connect = original_connect  # type: ignore[method-assign]
            socket.socket.connect_ex = original_connect_ex  # type: ignore[method-assign]
        if previous_env is None:
            os.environ.pop(OFFLINE_ENV, None)
        else:
            os.environ[OFFLINE_ENV] = previous_env
