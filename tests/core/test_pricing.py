"""Prices by model: the package's table, Bedrock names, overrides from WEBTASK_MODEL_PRICES, bad input."""

from __future__ import annotations

import json

import pytest

from webtask_core.errors import ConfigError
from webtask_core.llm.types import Usage
from webtask_core.pricing import PRICES_ENV, Cost, ModelPrice, PriceTable, format_usd

USAGE = Usage(input_tokens=1_000, cache_write_tokens=2_000, cache_read_tokens=10_000, output_tokens=500)


def test_each_kind_of_token_is_priced_by_the_model_family():
    cost = PriceTable().cost("claude-sonnet-4-5-20250929", USAGE)
    assert cost is not None
    # Sonnet: $3 input, $3.75 cache write, $0.30 cache read, $15 output per million tokens.
    assert (cost.input_usd, cost.cache_write_usd, cost.cached_usd, cost.output_usd) == pytest.approx(
        (0.003, 0.0075, 0.003, 0.0075))
    assert cost.total_usd == pytest.approx(0.021)
    assert cost.describe() == "$0.0210 (input $0.0030 · cache write $0.0075 · cached $0.0030 · output $0.0075)"


@pytest.mark.parametrize("model, input_price", [
    ("claude-opus-4-1", 15), ("claude-opus-4-20250514", 15), ("claude-opus-4-5", 5), ("claude-opus-5-5", 5),
    ("claude-haiku-4-5", 1), ("claude-3-5-haiku-latest", 0.8), ("claude-sonnet-5-5", 3),
    # Bedrock: a region profile, the provider, a version suffix.
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", 3), ("global.anthropic.claude-opus-4-1-20250805-v1:0", 15),
])
def test_the_longest_matching_name_wins(model, input_price):
    price = PriceTable().price_of(model)
    assert price is not None and price.input == input_price


def test_an_unknown_model_has_no_price():
    assert PriceTable().cost("claude-mythos-5", USAGE) is None


def test_overrides_from_the_environment_json_or_a_file(monkeypatch, tmp_path):
    monkeypatch.setenv(PRICES_ENV, json.dumps({"claude-mythos": {"input": 20, "output": 100},
                                               "claude-sonnet": {"input": 2.5, "output": 12, "cache_read": 0.2}}))
    table = PriceTable.from_env()
    mythos = table.cost("claude-mythos-5", USAGE)
    assert mythos is not None and mythos.input_usd == pytest.approx(0.02)
    assert mythos.cache_write_usd == pytest.approx(2_000 * 25 / 1e6)  # 1.25 x input when not given
    assert table.price_of("claude-sonnet-4-5") == ModelPrice(input=2.5, output=12, cache_read=0.2)
    assert table.price_of("claude-haiku-4-5") == PriceTable().price_of("claude-haiku-4-5")  # the rest stays

    prices = tmp_path / "prices.yaml"
    prices.write_text("claude-haiku:\n  input: 0.5\n  output: 2\n")
    monkeypatch.setenv(PRICES_ENV, str(prices))
    assert PriceTable.from_env().price_of("claude-haiku-4-5").input == 0.5


@pytest.mark.parametrize("value, problem", [
    ("{not json", "cannot be parsed"),
    ('["claude-sonnet"]', "must map model names to prices"),
    ('{"claude-sonnet": {"input": -1, "output": 15}}', "the price of 'claude-sonnet' is not valid"),
    ('{"claude-sonnet": {"input": 3, "outptu": 15}}', "the price of 'claude-sonnet' is not valid"),
    ("/no/such/prices.json", "is neither"),
])
def test_bad_prices_are_named(monkeypatch, value, problem):
    monkeypatch.setenv(PRICES_ENV, value)
    with pytest.raises(ConfigError, match=problem) as caught:
        PriceTable.from_env()
    assert caught.value.parameter == PRICES_ENV


def test_costs_add_up_and_print_as_money():
    total = Cost(model="a", input_usd=0.5, output_usd=0.25) + Cost(model="a", cached_usd=0.75)
    assert total.total_usd == 1.5 and total.model == "a"
    assert (Cost(model="a") + Cost(model="b")).model == "mixed"
    assert (format_usd(0.0042), format_usd(1234.5)) == ("$0.0042", "$1,234.50")
