"""Host patterns (``allowed_domains`` and the domains a secret may be typed on), without Playwright.

A pattern is a host glob with an optional port: ``127.0.0.1``, ``shop.example.com``,
``*.example.com`` (subdomains only), ``shop.test:8443``. Only http(s) URLs can match; the browser
layer adds the schemes a navigation may always reach (``about:``, ``data:`` ...) on top.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from fnmatch import fnmatchcase
from urllib.parse import urlsplit

from webtask_core.errors import ConfigError

__all__ = ["HostPatterns", "DEFAULT_PORTS"]

DEFAULT_PORTS = {"http": 80, "https": 443}


class HostPatterns:
    """An immutable list of host patterns; :meth:`matches` says whether a URL's host is one of them."""

    def __init__(self, patterns: Iterable[str] | None, *, parameter: str = "allowed_domains"):
        if isinstance(patterns, str):
            raise ConfigError(parameter, "must be a list of host patterns, not a single string")
        if patterns is not None and not isinstance(patterns, Iterable):
            raise ConfigError(parameter, f"must be a list of host patterns, got {type(patterns).__name__}")
        self.parameter = parameter
        self.patterns: tuple[str, ...] = tuple(self._check(pattern) for pattern in (patterns or ()))

    def _check(self, pattern: object) -> str:
        if not isinstance(pattern, str) or not pattern.strip():
            raise ConfigError(self.parameter, f"each entry must be a non-empty host pattern, got {pattern!r}")
        if "/" in pattern or "@" in pattern or any(char.isspace() for char in pattern.strip()):
            raise ConfigError(
                self.parameter,
                f"{pattern!r} is not a host pattern; use forms like '127.0.0.1', 'example.com:8080', '*.example.com'",
            )
        return pattern.strip().lower()

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def __iter__(self) -> Iterator[str]:
        return iter(self.patterns)

    def __repr__(self) -> str:
        return f"HostPatterns({list(self.patterns)!r})"

    def matches(self, url: str) -> bool:
        """True if ``url`` is http(s) and its host (and port, when the pattern gives one) matches."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        try:
            port = parts.port
        except ValueError:  # a port that is not a number
            return False
        if scheme not in DEFAULT_PORTS or not parts.hostname:
            return False
        host = parts.hostname.lower()
        port = port or DEFAULT_PORTS[scheme]
        for pattern in self.patterns:
            host_pattern, port_pattern = _split_port(pattern)
            if fnmatchcase(host, host_pattern) and (not port_pattern or port_pattern == str(port)):
                return True
        return False


def _split_port(pattern: str) -> tuple[str, str]:
    head, sep, tail = pattern.rpartition(":")
    if sep and tail.isdigit() and not head.endswith(":"):
        return head, tail
    return pattern, ""
