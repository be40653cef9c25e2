"""What model calls cost in money: tokens by kind priced per model.

    prices = PriceTable.from_env()                 # the table below, with WEBTASK_MODEL_PRICES on top
    cost = prices.cost("claude-sonnet-4-5", usage)  # -> Cost | None (None: no price for that model)
    cost.total_usd, cost.input_usd, cost.cached_usd, cost.cache_write_usd, cost.output_usd

Prices are US dollars per million tokens, by kind: fresh input, prompt-cache writes, prompt-cache
reads ("cached") and output. A model is found by its name with any Bedrock decoration taken off
(``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` reads ``claude-sonnet-4-5-20250929``), then the
longest entry that starts it: ``claude-sonnet`` prices every Sonnet the table does not name.

The table is Anthropic's list price when it was written; a deployment whose prices differ (a
discount, a new model, Bedrock's regional prices) sets ``WEBTASK_MODEL_PRICES`` to JSON, or to the
path of a JSON or YAML file, mapping model names (or prefixes) to prices, which win over the table::

    {"claude-sonnet": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}}
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from webtask_core.errors import ConfigError
from webtask_core.llm.types import Usage

__all__ = ["ModelPrice", "Cost", "PriceTable", "DEFAULT_PRICES", "PRICES_ENV", "format_usd"]

PRICES_ENV = "WEBTASK_MODEL_PRICES"
_MILLION = 1_000_000


class ModelPrice(BaseModel):
    """US dollars per million tokens; cache reads and writes default to 0.1 and 1.25 times input
    (Anthropic's five-minute cache)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)

    @property
    def cache_read_price(self) -> float:
        return self.cache_read if self.cache_read is not None else self.input * 0.1

    @property
    def cache_write_price(self) -> float:
        return self.cache_write if self.cache_write is not None else self.input * 1.25


class Cost(BaseModel):
    """The money a model's usage cost, by kind of token (US dollars)."""

    model: str = ""
    input_usd: float = 0.0  # fresh input tokens
    cache_write_usd: float = 0.0
    cached_usd: float = 0.0  # input read from the prompt cache
    output_usd: float = 0.0

    @property
    def total_usd(self) -> float:
        return self.input_usd + self.cache_write_usd + self.cached_usd + self.output_usd

    def __add__(self, other: Cost) -> Cost:
        model = self.model if self.model == other.model or not other.model else (other.model if not self.model else "mixed")
        return Cost(model=model, input_usd=self.input_usd + other.input_usd,
                    cache_write_usd=self.cache_write_usd + other.cache_write_usd,
                    cached_usd=self.cached_usd + other.cached_usd, output_usd=self.output_usd + other.output_usd)

    def describe(self) -> str:
        """``$0.0123 (input $0.0100 · cache write $0.0003 · cached $0.0010 · output $0.0010)``."""
        return (f"{format_usd(self.total_usd)} (input {format_usd(self.input_usd)} · cache write "
                f"{format_usd(self.cache_write_usd)} · cached {format_usd(self.cached_usd)} · output "
                f"{format_usd(self.output_usd)})")


def format_usd(amount: float) -> str:
    """Dollars with the precision a model call needs: ``$0.0042``, ``$1.27``."""
    return f"${amount:,.4f}" if abs(amount) < 1 else f"${amount:,.2f}"


# List prices (USD per million tokens) by name prefix; the longest matching prefix wins.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "claude-opus": ModelPrice(input=5, output=25, cache_read=0.5, cache_write=6.25),  # Opus 4.5 and later
    "claude-opus-4-0": ModelPrice(input=15, output=75, cache_read=1.5, cache_write=18.75),
    "claude-opus-4-1": ModelPrice(input=15, output=75, cache_read=1.5, cache_write=18.75),
    "claude-opus-4-2025": ModelPrice(input=15, output=75, cache_read=1.5, cache_write=18.75),  # claude-opus-4-20250514
    "claude-sonnet": ModelPrice(input=3, output=15, cache_read=0.3, cache_write=3.75),
    "claude-3-7-sonnet": ModelPrice(input=3, output=15, cache_read=0.3, cache_write=3.75),
    "claude-haiku": ModelPrice(input=1, output=5, cache_read=0.1, cache_write=1.25),  # Haiku 4.5 and later
    "claude-3-5-haiku": ModelPrice(input=0.8, output=4, cache_read=0.08, cache_write=1),
    "claude-3-haiku": ModelPrice(input=0.25, output=1.25, cache_read=0.03, cache_write=0.3),
}

# Bedrock model ids: an optional region profile, the provider, and a version suffix.
_BEDROCK = re.compile(r"^(?:[a-z]{2,6}\.)?anthropic\.(?P<name>.+?)(?:-v\d+(?::\d+)?)?$")


def _base_name(model: str) -> str:
    model = model.strip().casefold()
    match = _BEDROCK.match(model)
    return match.group("name") if match else model


class PriceTable:
    """Prices by model name (or name prefix); ``cost`` prices a Usage."""

    def __init__(self, prices: Mapping[str, ModelPrice | Mapping[str, Any]] | None = None):
        self.prices: dict[str, ModelPrice] = {}
        for name, price in (DEFAULT_PRICES if prices is None else prices).items():
            self.prices[_base_name(name)] = _price(name, price)

    def __repr__(self) -> str:
        return f"PriceTable({len(self.prices)} prices)"

    def with_overrides(self, overrides: Mapping[str, ModelPrice | Mapping[str, Any]]) -> PriceTable:
        table = PriceTable({})
        table.prices = {**self.prices, **PriceTable(overrides).prices}
        return table

    @classmethod
    def from_env(cls) -> PriceTable:
        """The default table with ``WEBTASK_MODEL_PRICES`` (JSON, or a JSON/YAML file's path) on top."""
        raw = (os.environ.get(PRICES_ENV) or "").strip()
        table = cls()
        if not raw:
            return table
        return table.with_overrides(_read_overrides(raw))

    def price_of(self, model: str) -> ModelPrice | None:
        name = _base_name(model)
        best = max((prefix for prefix in self.prices if name.startswith(prefix)), key=len, default=None)
        return self.prices[best] if best is not None else None

    def cost(self, model: str, usage: Usage) -> Cost | None:
        """What ``usage`` of ``model`` cost; None when the table has no price for the model."""
        price = self.price_of(model)
        if price is None:
            return None
        return Cost(
            model=model,
            input_usd=usage.input_tokens * price.input / _MILLION,
            cache_write_usd=usage.cache_write_tokens * price.cache_write_price / _MILLION,
            cached_usd=usage.cache_read_tokens * price.cache_read_price / _MILLION,
            output_usd=usage.output_tokens * price.output / _MILLION,
        )


def _price(name: object, price: object) -> ModelPrice:
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(PRICES_ENV, f"a model name must be a non-empty string, got {name!r}")
    if isinstance(price, ModelPrice):
        return price
    try:
        return ModelPrice.model_validate(price)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'price'}: {e['msg']}" for e in exc.errors()[:3])
        raise ConfigError(PRICES_ENV, f"the price of {name!r} is not valid ({problems}); give "
                          '{"input": 3, "output": 15} in dollars per million tokens') from None


def _read_overrides(raw: str) -> Mapping[str, Any]:
    text, source = raw, "the value"
    if not raw.startswith(("{", "[")):
        path = Path(raw).expanduser()
        if not path.is_file():
            raise ConfigError(PRICES_ENV, f"must be JSON or the path of a JSON/YAML file; {raw!r} is neither")
        text, source = path.read_text(), str(path)
    try:
        data = yaml.safe_load(text) if source.endswith((".yaml", ".yml")) else json.loads(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(PRICES_ENV, f"{source} cannot be parsed: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(PRICES_ENV, f"{source} must map model names to prices, got {type(data).__name__}")
    return data
