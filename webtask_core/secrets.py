"""Secret values by name: the model sees ``{{secret:NAME}}``; the real value exists only at the last moment.

    secrets = SecretValues({"shop_password": os.environ["SHOP_PASSWORD"]}, domains=["shop.example.com"])
    secrets.reveal("{{secret:shop_password}}", url=page_url)   # -> the value, or ActionError
    secrets.scrub(text)                                        # every value -> its placeholder

One object shared by the worker, the tools, the session records and the flows, so that every text
leaving the process (model requests, tool results, step records, final_dom, session JSON, artifacts,
log lines, exception messages) can be scrubbed the same way. Scrubbing catches the value as typed,
whitespace-collapsed (as the page tree shows text), URL-encoded (a GET form), JSON-escaped, and cut
short with an ellipsis (the tree clips long values: ``S3cr3t-Pa…``).

A value may be limited to hosts (``SecretValue(value, domains=[...])``, or ``domains=`` for all of
them): ``reveal`` refuses to type it into a document of another host. The tools pass the URL of
the frame the text goes to (``BrowserTab.typing_url``), so a frame from another site embedded in
an allowed page does not count as that page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from webtask_core.errors import ActionError, ConfigError
from webtask_core.hosts import HostPatterns
from webtask_core.llm.types import Message, TextBlock, ToolCall, ToolResult
from webtask_core.redaction import RedactingFilter, redact_exception
from webtask_core.totp import TotpCodes

__all__ = [
    "SECRET_PLACEHOLDER",
    "TOTP_PLACEHOLDER",
    "ANY_PLACEHOLDER",
    "MIN_SECRET_CHARS",
    "SecretValue",
    "SecretValues",
    "SecretsInput",
    "RedactingFilter",
    "placeholder",
]

SECRET_PLACEHOLDER = re.compile(r"\{\{secret:([A-Za-z_][A-Za-z0-9_\-.]*)\}\}")
# {{totp:NAME}}: the current one-time code of the TOTP seed NAME (webtask_core.totp).
TOTP_PLACEHOLDER = re.compile(r"\{\{totp:([A-Za-z_][A-Za-z0-9_\-.]*)\}\}")
ANY_PLACEHOLDER = re.compile(r"\{\{(secret|totp):([A-Za-z_][A-Za-z0-9_\-.]*)\}\}")
# Shorter values would be found inside ordinary words and scrub the page beyond recognition.
MIN_SECRET_CHARS = 4
_ELLIPSIS = "…"
_ELEMENT_LINE = re.compile(r"^(\s*)- ([a-z][a-z0-9]*-\d+)(?=[\s(\"]|$)")


def placeholder(name: str, kind: str = "secret") -> str:
    return "{{" + kind + ":" + name + "}}"


class SecretValue(BaseModel):
    """A secret with the hosts it may be typed on (empty: the default domains, else anywhere).

    ``totp=True``: the value is a TOTP seed (base32); the model types ``{{totp:NAME}}`` and gets the
    current one-time code typed in (webtask_core.totp), never the seed."""

    model_config = ConfigDict(frozen=True)

    value: SecretStr
    domains: tuple[str, ...] = Field(default=())
    totp: bool = False


SecretsInput = Mapping[str, "str | SecretStr | SecretValue"]


class _Entry:
    __slots__ = ("codes", "domains", "name", "placeholder", "value", "variants")

    def __init__(self, name: str, value: str, domains: HostPatterns, codes: TotpCodes | None = None):
        self.name = name
        self.value = value
        self.domains = domains
        self.codes = codes  # a TOTP seed's codes; None for a plain secret
        self.placeholder = placeholder(name, "totp" if codes is not None else "secret")
        self.variants: list[str] = []
        self.add_variants(value)

    def add_variants(self, value: str) -> None:
        forms = {
            value,
            " ".join(value.split()),
            quote(value, safe=""),
            quote_plus(value),
            json.dumps(value, ensure_ascii=False)[1:-1],
            json.dumps(value)[1:-1],
            *self.variants,
        }
        # Longest first, so a longer form is replaced whole before a shorter one inside it.
        self.variants = sorted((form for form in forms if len(form) >= MIN_SECRET_CHARS), key=len, reverse=True)

    @property
    def values(self) -> list[str]:
        """What is scrubbed as this secret: the value, and the one-time codes typed from a seed."""
        return [self.value, *(self.codes.typed_codes if self.codes is not None else [])]


class SecretValues:
    """Named secret values: reveal placeholders for the page, scrub values out of everything else."""

    def __init__(self, secrets: SecretsInput | None = None, *, domains: Iterable[str] | None = None):
        if secrets is not None and not isinstance(secrets, Mapping):
            raise ConfigError("secrets", f"must be a mapping of name -> value, got {type(secrets).__name__}")
        self._default_domains = HostPatterns(domains, parameter="allowed_domains")
        self._entries: dict[str, _Entry] = {}
        self._forgotten: dict[str, str] = {}  # name -> why this run no longer has it (see forget)
        for name, raw in (secrets or {}).items():
            self._check_name(name)
            value, own_domains, totp = _unpack(name, raw)
            patterns = (HostPatterns(own_domains, parameter=f"secrets[{name!r}].domains") if own_domains
                        else self._default_domains)
            codes = TotpCodes(name, value) if totp else None
            self._entries[name] = _Entry(name, value, patterns, codes)
        self._index()

    @staticmethod
    def _check_name(name: object) -> None:
        if not isinstance(name, str) or not SECRET_PLACEHOLDER.fullmatch(placeholder(name)):
            raise ConfigError(
                "secrets", f"{name!r} cannot be used as {{{{secret:NAME}}}}: use letters, digits, '_', '-', '.'"
            )

    def _index(self) -> None:
        """The scrubbing patterns, built again whenever a value is added (a code typed, an answer)."""
        entries = list(self._entries.values())
        variants = sorted(
            ((variant, entry.placeholder) for entry in entries for variant in entry.variants),
            key=lambda pair: len(pair[0]),
            reverse=True,
        )
        self._replacements = dict(variants)
        self._pattern = (
            re.compile("|".join(re.escape(variant) for variant, _ in variants)) if variants else None
        )
        self._clipped = _clipped_pattern(entries)

    def add(self, name: str, value: str, *, domains: Iterable[str] | None = None) -> str:
        """Add a secret while a task runs (a code a person gave): typed where ``{{secret:NAME}}`` is
        written, scrubbed from everything from now on. Returns its placeholder. Everyone holding
        this object (the worker, the tools, the flow's artifacts) scrubs it at once."""
        self._check_name(name)
        if name in self._entries:
            raise ConfigError("secrets", f"{name!r} is already a secret of this task")
        value, _, _ = _unpack(name, value)
        patterns = HostPatterns(domains, parameter=f"secrets[{name!r}].domains") if domains else self._default_domains
        entry = _Entry(name, value, patterns)
        self._entries[name] = entry
        self._forgotten.pop(name, None)
        self._index()
        return entry.placeholder

    def forget(self, name: str, reason: str) -> None:
        """Say that ``{{secret:NAME}}`` was a secret of this task that this process does not have (a
        person's answer given to the run before it was suspended, kept nowhere): typing it is an
        ActionError giving ``reason``, instead of "unknown secret"."""
        self._check_name(name)
        if name not in self._entries:
            self._forgotten[name] = reason

    @classmethod
    def of(cls, secrets: SecretValues | SecretsInput | None, *, domains: Iterable[str] | None = None) -> SecretValues:
        return secrets if isinstance(secrets, SecretValues) else cls(secrets, domains=domains)

    # ---- what it holds (never the values) ----

    @property
    def names(self) -> list[str]:
        return list(self._entries)

    def __bool__(self) -> bool:
        return bool(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __repr__(self) -> str:
        return f"SecretValues(names={self.names!r})"

    def domains_of(self, name: str) -> tuple[str, ...]:
        return self._entries[name].domains.patterns

    # ---- into the page ----

    def limited(self, text: str) -> bool:
        """True if a placeholder in ``text`` names a secret that may be typed on some hosts only."""
        return any(
            entry is not None and bool(entry.domains)
            for entry in (self._entries.get(match.group(2)) for match in ANY_PLACEHOLDER.finditer(text))
        )

    async def ready(self, text: str) -> None:
        """Wait until the one-time codes ``text`` asks for may be typed (webtask_core.totp: never
        a code about to turn stale; a retry waits for the next window)."""
        for match in TOTP_PLACEHOLDER.finditer(text):
            entry = self._entries.get(match.group(1))
            if entry is not None and entry.codes is not None:
                await entry.codes.ready()

    def reveal(self, text: str, *, url: str | None = None) -> str:
        """``text`` with its placeholders replaced by the values (the current code for
        ``{{totp:NAME}}``), checked against ``url``'s host."""
        typed_code = False

        def substitute(match: re.Match[str]) -> str:
            nonlocal typed_code
            kind, name = match.group(1), match.group(2)
            entry = self._entries.get(name)
            if entry is None and name in self._forgotten:
                raise ActionError(f"{match.group(0)}: {self._forgotten[name]}")
            if entry is None:
                known = ", ".join(self._entries) or "none were given for this task"
                raise ActionError(f"unknown secret {name!r} in {match.group(0)}; known secrets: {known}")
            if entry.domains and (url is None or not entry.domains.matches(url)):
                raise ActionError(
                    f"secret {name!r} may only be typed on pages of [{', '.join(entry.domains)}]; "
                    f"the field is in a document of {url or 'an unknown page'}"
                )
            if entry.codes is None and kind == "totp":
                raise ActionError(f"{match.group(0)}: {name!r} is not a TOTP seed; write {{{{secret:{name}}}}}")
            if entry.codes is None:
                return entry.value
            if kind == "secret":
                raise ActionError(f"{match.group(0)}: {name!r} is a TOTP seed, never typed itself; write "
                                  f"{{{{totp:{name}}}}} to type its current code")
            code = entry.codes.code()
            entry.add_variants(code)
            typed_code = True
            return code

        revealed = ANY_PLACEHOLDER.sub(substitute, text)
        if typed_code:
            self._index()
        return revealed

    # ---- out of everything else ----

    def contains(self, text: str) -> bool:
        """True if ``text`` shows a secret value (in any form :meth:`scrub` removes)."""
        if self._pattern is None or not text:
            return False
        return bool(self._pattern.search(text) or (self._clipped is not None and self._clipped.search(text)))

    def scrub(self, text: str) -> str:
        """``text`` with every secret value replaced by its placeholder."""
        if self._pattern is None or not text:
            return text
        text = self._pattern.sub(lambda match: self._replacements[match.group(0)], text)
        if self._clipped is not None and _ELLIPSIS in text:
            text = self._clipped.sub(lambda match: self._clip_replacement(match) + _ELLIPSIS, text)
        return text

    def _clip_replacement(self, match: re.Match[str]) -> str:
        prefix = match.group(0)[: -len(_ELLIPSIS)]
        entry = next(entry for entry in self._entries.values()
                     if any(value.startswith(prefix) for value in entry.values))
        return entry.placeholder

    def scrub_data(self, data: Any) -> Any:
        """A copy of JSON-like data (dicts, lists, strings) with every string scrubbed."""
        if not self:
            return data
        if isinstance(data, str):
            return self.scrub(data)
        if isinstance(data, Mapping):
            return {self.scrub_data(key): self.scrub_data(value) for key, value in data.items()}
        if isinstance(data, list):
            return [self.scrub_data(item) for item in data]
        if isinstance(data, tuple):
            return tuple(self.scrub_data(item) for item in data)
        return data

    def scrub_model(self, model: Any) -> Any:
        """A pydantic model (a TaskRecord, a Step) with every string in it scrubbed."""
        if not self:
            return model
        dumped = model.model_dump(mode="json")
        cleaned = self.scrub_data(dumped)
        return model if cleaned == dumped else type(model).model_validate(cleaned)

    def drop_secret_entries(self, storage_state: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        """A browser storage state without the cookies and local-storage items holding a secret.

        Replacing the value would hand the site a placeholder; dropping the entry only costs a log-in.
        Returns the cleaned state and how many entries were dropped.
        """
        dropped = 0
        cookies = []
        for cookie in storage_state.get("cookies", []):
            if self.contains(str(cookie.get("value", ""))):
                dropped += 1
            else:
                cookies.append(cookie)
        origins = []
        for origin in storage_state.get("origins", []):
            items = [item for item in origin.get("localStorage", []) if not self.contains(str(item.get("value", "")))]
            dropped += len(origin.get("localStorage", [])) - len(items)
            origins.append({**origin, "localStorage": items})
        return {**storage_state, "cookies": cookies, "origins": origins}, dropped

    # ---- page states ----

    def scrub_page(self, tree: str) -> tuple[str, list[str], bool]:
        """The tree scrubbed, the ids of elements showing a secret (to mask in a screenshot), and
        whether a secret also shows outside any element (the screenshot cannot be masked then)."""
        if not self.contains(tree):
            return tree, [], False
        mask_ids: list[str] = []
        unmaskable = False
        ancestors: list[tuple[int, str]] = []  # (indent, id) of the interactive lines above
        for line in tree.splitlines():
            match = _ELEMENT_LINE.match(line)
            indent = len(line) - len(line.lstrip(" "))
            while ancestors and ancestors[-1][0] >= indent:
                ancestors.pop()
            if match:
                ancestors.append((indent, match.group(2)))
            if not self.contains(line):
                continue
            if ancestors:
                if ancestors[-1][1] not in mask_ids:
                    mask_ids.append(ancestors[-1][1])
            else:
                unmaskable = True
        return self.scrub(tree), mask_ids, unmaskable

    def scrub_observation(self, observation: Any) -> tuple[Any, list[str], bool]:
        """A browser Observation with secret values replaced by placeholders, the ids of elements to
        mask in its screenshot, and whether a secret shows where no element can be masked."""
        if not self:
            return observation, [], False
        scrub = self.scrub
        tree, mask_ids, unmaskable = self.scrub_page(observation.tree)
        cleaned = observation.model_copy(update={
            "url": scrub(observation.url),
            "title": scrub(observation.title),
            "tree": tree,
            "tabs": [tab.model_copy(update={"url": scrub(tab.url), "title": scrub(tab.title)}) for tab in observation.tabs],
            "elements": {key: element.model_copy(update={"text": scrub(element.text)})
                         for key, element in observation.elements.items()},
        })
        return cleaned, mask_ids, unmaskable

    # ---- model messages ----

    def scrub_messages(self, messages: list[Message]) -> list[Message]:
        """Messages with every text block and tool input scrubbed (unchanged ones are the same objects,
        so a cached prompt prefix stays byte-identical). Images and signed reasoning are left alone."""
        if not self:
            return messages
        return [self._scrub_message(message) for message in messages]

    def _scrub_message(self, message: Message) -> Message:
        content = [self._scrub_block(block) for block in message.content]
        changed = any(new is not old for new, old in zip(content, message.content, strict=True))
        return message.model_copy(update={"content": content}) if changed else message

    def _scrub_block(self, block: Any) -> Any:
        if isinstance(block, TextBlock):
            text = self.scrub(block.text)
            return block if text == block.text else TextBlock(text=text)
        if isinstance(block, ToolResult):
            parts = [self._scrub_block(part) for part in block.content]
            changed = any(new is not old for new, old in zip(parts, block.content, strict=True))
            return block.model_copy(update={"content": parts}) if changed else block
        if isinstance(block, ToolCall):
            cleaned = self.scrub_data(block.input)
            return block if cleaned == block.input else block.model_copy(update={"input": cleaned})
        return block

    # ---- exceptions ----

    def redact_exception(self, error: BaseException) -> BaseException:
        """``error`` itself when no secret shows in it or its causes; else a scrubbed copy of the same
        type (same attributes, same traceback), whose cause and context are scrubbed copies too."""
        return redact_exception(self, error)

    # ---- logs ----

    def log_filter(self) -> RedactingFilter:
        return RedactingFilter(self)


def _unpack(name: str, raw: object) -> tuple[str, tuple[str, ...], bool]:
    domains: tuple[str, ...] = ()
    value: object
    totp = False
    if isinstance(raw, SecretValue):
        value, domains, totp = raw.value.get_secret_value(), raw.domains, raw.totp
    elif isinstance(raw, SecretStr):
        value = raw.get_secret_value()
    elif isinstance(raw, Mapping) and "value" in raw:  # a SecretValue as plain data (JSON parameters)
        parsed = SecretValue.model_validate(raw)
        value, domains, totp = parsed.value.get_secret_value(), parsed.domains, parsed.totp
    else:
        value = raw
    if not isinstance(value, str) or not value.strip():
        raise ConfigError("secrets", f"{name!r} must have a non-empty string value")
    if len(value) < MIN_SECRET_CHARS:
        raise ConfigError(
            "secrets", f"{name!r} is shorter than {MIN_SECRET_CHARS} characters and could not be masked reliably"
        )
    return value, tuple(domains), totp


def _clipped_pattern(entries: Iterable[_Entry]) -> re.Pattern[str] | None:
    """Prefixes of a value cut short with an ellipsis (``S3cr3t-Pa…``), longest first."""
    prefixes = sorted(
        {value[:length] for entry in entries for value in entry.values for length in range(MIN_SECRET_CHARS, len(value))},
        key=len,
        reverse=True,
    )
    if not prefixes:
        return None
    return re.compile("(?:" + "|".join(re.escape(prefix) for prefix in prefixes) + ")" + _ELLIPSIS)
