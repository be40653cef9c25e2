"""SecretValues on its own: reveal with host limits, scrub every form a value can take, redact errors and logs."""

from __future__ import annotations

import json
import logging
import pickle
from urllib.parse import quote_plus

import pytest
from pydantic import SecretStr

from webtask_core.errors import ActionError, ConfigError, ModelTransientError
from webtask_core.llm.types import ImageBlock, Message, ReasoningBlock, TextBlock, ToolCall, ToolResult
from webtask_core.secrets import RedactingFilter, SecretValue, SecretValues

PASSWORD = "S3cr3t Pa55/word+&"
TOKEN = "tok-1234567890-abcdef"


@pytest.fixture
def secrets() -> SecretValues:
    return SecretValues({"shop_password": PASSWORD, "api_token": SecretStr(TOKEN)})


def test_reveal_substitutes_placeholders_and_names_unknown_ones(secrets):
    assert secrets.reveal("{{secret:shop_password}}") == PASSWORD
    assert secrets.reveal("user {{secret:api_token}}!") == f"user {TOKEN}!"
    assert secrets.reveal("no placeholder") == "no placeholder"
    with pytest.raises(ActionError, match=r"unknown secret 'nope'.*known secrets: shop_password, api_token"):
        secrets.reveal("{{secret:nope}}")
    with pytest.raises(ActionError, match="none were given"):
        SecretValues().reveal("{{secret:shop_password}}")  # never typed literally into a field


def test_a_secret_limited_to_hosts_is_only_revealed_there():
    secrets = SecretValues(
        {"shop": SecretValue(value=SecretStr("shop-pass-1"), domains=("shop.test:8080",)), "any": "anywhere-1"},
        domains=["*.example.com"],
    )
    assert secrets.reveal("{{secret:shop}}", url="http://shop.test:8080/login") == "shop-pass-1"
    with pytest.raises(ActionError, match=r"may only be typed on pages of \[shop.test:8080\]; the field is in a document of http://evil"):
        secrets.reveal("{{secret:shop}}", url="http://evil.test/login")
    with pytest.raises(ActionError, match="in a document of data:"):
        secrets.reveal("{{secret:shop}}", url="data:text/html,<input>")  # never on a page with no host
    # a secret without its own domains gets the default ones
    assert secrets.reveal("{{secret:any}}", url="https://a.example.com/") == "anywhere-1"
    with pytest.raises(ActionError):
        secrets.reveal("{{secret:any}}", url="https://example.org/")
    assert secrets.domains_of("shop") == ("shop.test:8080",) and secrets.domains_of("any") == ("*.example.com",)
    assert SecretValues({"x": "no-limits"}).reveal("{{secret:x}}", url=None) == "no-limits"
    # only a limited secret needs to know where it is typed (finding the focused frame costs round trips)
    assert secrets.limited("user {{secret:shop}}") and secrets.limited("{{secret:any}}")
    assert not SecretValues({"x": "no-limits"}).limited("{{secret:x}} {{secret:unknown}}")


@pytest.mark.parametrize("bad, problem", [
    ({"bad name": "value-1"}, "cannot be used"),
    ({"ok": ""}, "non-empty"),
    ({"ok": 12345}, "non-empty string"),
    ({"ok": "abc"}, "shorter than 4"),
    ({"ok": SecretValue(value=SecretStr("value-1"), domains=("https://x/",))}, "not a host pattern"),
])
def test_bad_secrets_are_config_errors(bad, problem):
    with pytest.raises(ConfigError, match=problem) as caught:
        SecretValues(bad)
    assert caught.value.parameter.startswith("secrets")


def test_no_value_in_repr(secrets):
    assert PASSWORD not in repr(secrets) and TOKEN not in repr(secrets)
    assert repr(secrets) == "SecretValues(names=['shop_password', 'api_token'])"


def test_scrub_catches_every_form_of_a_value(secrets):
    forms = {
        "raw": PASSWORD,
        "collapsed whitespace": " ".join(PASSWORD.split()),
        "url-encoded": quote_plus(PASSWORD),
        "percent-encoded": "S3cr3t%20Pa55%2Fword%2B%26",
        "json-escaped": json.dumps({"p": 'a"' + TOKEN})[7:-2],
    }
    for form, text in forms.items():
        shown = f"before {text} after"
        assert secrets.contains(shown), form
        assert PASSWORD not in secrets.scrub(shown) and TOKEN not in secrets.scrub(shown), form
    assert secrets.scrub(f"pw={PASSWORD};t={TOKEN}") == "pw={{secret:shop_password}};t={{secret:api_token}}"
    assert secrets.scrub("nothing here") == "nothing here" and not secrets.contains("nothing here")


def test_scrub_catches_a_value_cut_short_with_an_ellipsis(secrets):
    # The page tree clips long values: value="tok-1234567…"
    assert secrets.scrub('value="tok-1234567…"') == 'value="{{secret:api_token}}…"'
    assert secrets.scrub("Your token is tok-12…") == "Your token is {{secret:api_token}}…"
    assert secrets.scrub("tok…") == "tok…"  # shorter than MIN_SECRET_CHARS: ordinary text


def test_the_longest_secret_is_replaced_whole():
    secrets = SecretValues({"short": "hunter22", "long": "hunter22-and-more"})
    assert secrets.scrub("x hunter22-and-more y hunter22") == "x {{secret:long}} y {{secret:short}}"


def test_scrub_data_and_storage_state(secrets):
    data = {"a": [PASSWORD, {"b": (TOKEN, 3)}], PASSWORD: None}
    assert secrets.scrub_data(data) == {
        "a": ["{{secret:shop_password}}", {"b": ("{{secret:api_token}}", 3)}], "{{secret:shop_password}}": None}
    state = {
        "cookies": [{"name": "session", "value": "abc"}, {"name": "pw", "value": quote_plus(PASSWORD)}],
        "origins": [{"origin": "http://x", "localStorage": [{"name": "t", "value": TOKEN}, {"name": "k", "value": "v"}]}],
    }
    cleaned, dropped = secrets.drop_secret_entries(state)
    assert dropped == 2
    assert cleaned["cookies"] == [{"name": "session", "value": "abc"}]
    assert cleaned["origins"][0]["localStorage"] == [{"name": "k", "value": "v"}]


def test_scrub_page_finds_the_elements_to_mask(secrets):
    tree = "\n".join([
        '- h1 "Profile"',
        f'- input-0 (type="text" name="note" value="{PASSWORD}")',
        "- button-1 \"Show\"",
        "  - text: \"token: " + TOKEN + '"',
        '- input-2 (type="password" name="pw" value="••••••")',
    ])
    scrubbed, mask_ids, unmaskable = secrets.scrub_page(tree)
    assert mask_ids == ["input-0", "button-1"] and not unmaskable
    assert PASSWORD not in scrubbed and TOKEN not in scrubbed and "{{secret:api_token}}" in scrubbed
    _, mask_ids, unmaskable = secrets.scrub_page(f'- h1 "Welcome"\n- text: "you typed {PASSWORD}"')
    assert mask_ids == [] and unmaskable  # no element to mask: the screenshot must be withheld
    assert secrets.scrub_page("- a-0 \"Home\"") == ("- a-0 \"Home\"", [], False)


def test_scrub_messages_keeps_clean_blocks_identical(secrets):
    clean = Message(role="user", content=[TextBlock(text="<task>x</task>")])
    reasoning = ReasoningBlock(provider="anthropic", data={"thinking": PASSWORD, "signature": "sig"})
    dirty = Message(role="assistant", content=[
        reasoning, TextBlock(text=f"I saw {TOKEN}"), ToolCall(id="t1", name="fill", input={"text": PASSWORD}),
    ])
    result = Message(role="user", content=[
        ToolResult(tool_call_id="t1", content=[TextBlock(text=f"filled with {PASSWORD}")]),
        ImageBlock(data="AAAA"),
    ])
    out = secrets.scrub_messages([clean, dirty, result])
    assert out[0] is clean
    assert out[1].content[0] is reasoning  # signed reasoning goes back unmodified
    assert out[1].content[1].text == "I saw {{secret:api_token}}"
    assert out[1].content[2].input == {"text": "{{secret:shop_password}}"}
    assert out[2].content[0].content[0].text == "filled with {{secret:shop_password}}"
    assert out[2].content[1] is result.content[1]


def test_redact_exception_scrubs_the_whole_chain_and_keeps_the_type(secrets):
    def failing() -> None:
        try:
            raise ValueError(f"Locator.fill: cannot type {PASSWORD!r}")
        except ValueError as inner:
            raise ModelTransientError(f"retry: {TOKEN}", status_code=529) from inner

    with pytest.raises(ModelTransientError) as caught:
        failing()
    original = caught.value
    redacted = secrets.redact_exception(original)
    assert redacted is not original and type(redacted) is ModelTransientError
    assert str(redacted) == "retry: {{secret:api_token}}" and redacted.status_code == 529
    assert isinstance(redacted.__cause__, ValueError) and PASSWORD not in str(redacted.__cause__)
    assert redacted.__traceback__ is original.__traceback__
    assert PASSWORD not in str(redacted.__context__)
    clean = ConfigError("max_steps", "must be positive")
    assert secrets.redact_exception(clean) is clean  # nothing to hide: the same object
    config = secrets.redact_exception(ConfigError("secrets", f"bad {PASSWORD}"))
    assert isinstance(config, ConfigError) and config.parameter == "secrets" and PASSWORD not in config.problem
    assert PASSWORD not in str(pickle.loads(pickle.dumps(config)))


def test_redacting_filter_scrubs_messages_args_and_tracebacks(secrets):
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    handler = Collect()
    handler.addFilter(RedactingFilter(secrets))
    logger = logging.getLogger("webtask.test.redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("typed %s into %s", PASSWORD, "input-0")
        try:
            raise RuntimeError(f"boom {TOKEN}")
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    assert records[0] == "typed {{secret:shop_password}} into input-0"
    assert "RuntimeError: boom {{secret:api_token}}" in records[1]
    assert all(PASSWORD not in text and TOKEN not in text for text in records)
