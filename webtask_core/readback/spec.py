"""What a read-back checks: the listing's fields as asked, and how to find the listing's own page.

    ReadBack(fields={"sku": "SHOE-1", "title": "Blue suede shoes", "price": "45.00", "photos": [...]},
             labels={"price": "Preis"}, search_url="https://shop.example/listings?sku={sku}")

Every field is checked unless ``check`` names some; a list under ``pictures`` (default ``photos``)
is checked by how many pictures the page shows. The page is the URL given, else the one the run
reported in its output (``url_fields``), else the page the run ended on when it names the listing
(an ``identifying`` field), else ``search_url`` with the fields filled in.
"""

from __future__ import annotations

import string
from typing import Any, Literal

from pydantic import BaseModel, Field

from webtask_core.errors import ConfigError

__all__ = ["ReadBack", "VerifyMode", "VERIFY_MODES", "check_verify"]

# When a completed run is read back: every one, only runs with a replay script (the model saw the
# live runs' pages itself), or never.
VerifyMode = Literal["always", "replayed", "off"]
VERIFY_MODES: tuple[str, ...] = ("always", "replayed", "off")


def check_verify(verify: object) -> VerifyMode:
    if verify not in VERIFY_MODES:
        raise ConfigError("verify", f"must be one of {', '.join(VERIFY_MODES)}, got {verify!r}")
    return verify  # type: ignore[return-value]


class ReadBack(BaseModel):
    """The listing's fields (what was asked) and where its page is; see the module docstring."""

    fields: dict[str, Any]
    check: list[str] | None = None  # the fields to check (default: every field)
    labels: dict[str, str] = Field(default_factory=dict)  # field -> the words the page labels it with
    pictures: str | None = "photos"  # the list field whose length is the number of pictures shown
    url: str | None = None
    url_fields: list[str] = Field(default_factory=lambda: ["listing_url", "url"])
    identifying: list[str] = Field(default_factory=lambda: ["sku", "title"])
    search_url: str | None = None  # e.g. "https://shop.example/listings?sku={sku}"

    def validated(self, where: str = "readback") -> ReadBack:
        """Itself, after checking that every name it uses is a field; else ConfigError naming it."""
        if not self.fields:
            raise ConfigError(f"{where}.fields", "names no field to check")
        for option, names in (("check", self.check or []), ("labels", list(self.labels))):
            unknown = sorted(set(names) - set(self.fields))
            if unknown:
                raise ConfigError(f"{where}.{option}", f"names {', '.join(unknown)}, which are not in {where}.fields")
        if self.check is not None and not self.check:
            raise ConfigError(f"{where}.check", "is empty: give the fields to check, or leave it out for all")
        for text, option in ((self.url, "url"), (self.search_url, "search_url")):
            if text is not None and not text.startswith(("http://", "https://")):
                raise ConfigError(f"{where}.{option}", f"must be an http(s) URL, got {text!r}")
        if self.search_url is not None:
            missing = [name for _, name, _, _ in string.Formatter().parse(self.search_url)
                       if name and name not in self.fields]
            if missing:
                raise ConfigError(f"{where}.search_url", f"uses {{{missing[0]}}}, which is not in {where}.fields")
        return self

    @property
    def picture_field(self) -> str | None:
        name = self.pictures
        if name and isinstance(self.fields.get(name), list) and (self.check is None or name in self.check):
            return name
        return None

    @property
    def expected(self) -> dict[str, Any]:
        """The fields compared as text, numbers or yes/no (the pictures' list aside, and None values)."""
        names = self.check if self.check is not None else list(self.fields)
        return {name: self.fields[name] for name in names
                if name != self.picture_field and self.fields.get(name) is not None}

    def asked_besides(self, name: str) -> list[Any]:
        """The other fields' values as asked: shown beside this one, they contradict nothing."""
        return [value for other, value in self.expected.items() if other != name]

    def label_of(self, name: str) -> str:
        """The words a page labels the field with: the given label, else its name in words."""
        return self.labels.get(name) or name.replace("_", " ").replace("-", " ").strip().capitalize()

    def search_for(self) -> str | None:
        if self.search_url is None:
            return None
        from urllib.parse import quote

        values = {name: quote(str(value), safe="") for name, value in self.fields.items()}
        return self.search_url.format(**values)
