"""TOTP seeds as secrets, with a frozen clock: RFC 6238's codes, typed fresh, retried once with the next
window's code, scrubbed everywhere; and secrets added while a task runs (a person's code)."""

from __future__ import annotations

import pytest

from webtask_core.errors import ActionError, ConfigError
from webtask_core.secrets import SecretValue, SecretValues
from webtask_core.totp import TotpCodes

# RFC 6238 appendix B: the ASCII seed "12345678901234567890" in base32; 8-digit codes, SHA-1.
RFC_SEED = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
RFC_CODES = {59: "94287082", 1111111109: "07081804", 1111111111: "14050471", 1234567890: "89005924",
             2000000000: "69279037"}


class Clock:
    def __init__(self, now: float):
        self.now, self.slept = now, []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.mark.parametrize(("when", "code"), sorted(RFC_CODES.items()))
async def test_codes_are_rfc_6238s_for_a_frozen_clock(when, code):
    clock = Clock(when)
    codes = TotpCodes("rfc", RFC_SEED, digits=8, clock=clock, sleep=clock.sleep)
    assert codes.at(when) == code
    await codes.ready()
    typed = codes.code()
    if when % 30 <= 30 - 2:  # room left in its window: that window's code, at once
        assert typed == code and clock.slept == []
    else:  # in the last seconds of the window: the next window's code, after waiting for it
        assert typed == codes.at(when + 30) and clock.slept == [pytest.approx(30 - when % 30 + 0.05)]


async def test_a_code_is_never_typed_in_the_last_seconds_of_its_window():
    clock = Clock(29.5)  # half a second before the window turns
    codes = TotpCodes("rfc", RFC_SEED, digits=8, clock=clock, sleep=clock.sleep)
    await codes.ready()
    assert clock.slept == [pytest.approx(0.55)] and codes.code() == codes.at(30) != codes.at(29)


async def test_a_rejected_code_is_retried_once_with_the_next_windows_code_then_refused():
    clock = Clock(1111111080.0)  # the start of a window: 30 s to go
    codes = TotpCodes("shop_2fa", RFC_SEED, clock=clock, sleep=clock.sleep)
    await codes.ready()
    first = codes.code()
    clock.now += 5  # the site said no; the model types {{totp:shop_2fa}} again, same window
    await codes.ready()
    second = codes.code()
    assert clock.slept == [pytest.approx(25.05)] and second != first
    assert codes.typed == [37037036, 37037037]  # two consecutive windows
    clock.now += 10
    with pytest.raises(ActionError, match="2 codes were typed .* abort"):
        await codes.ready()
    clock.now += 90  # a later log-in is a fresh start
    await codes.ready()
    assert codes.code() == codes.at(clock.now)


async def test_secret_values_reveal_and_scrub_totp_codes():
    clock = Clock(1111111111)
    secrets = SecretValues({"shop_2fa": SecretValue(value=RFC_SEED, totp=True), "pw": "hunter22"})
    codes = secrets._entries["shop_2fa"].codes
    codes.clock, codes.sleep = clock, clock.sleep  # freeze this seed's clock
    await secrets.ready("{{totp:shop_2fa}}")
    typed = secrets.reveal("{{totp:shop_2fa}}")
    assert typed == "050471"  # RFC 6238's 14050471 with six digits
    page = f'- input-0 (name="code" value="{typed}")\n- text: "seed {RFC_SEED}"'
    assert secrets.scrub(page) == '- input-0 (name="code" value="{{totp:shop_2fa}}")\n- text: "seed {{totp:shop_2fa}}"'
    assert secrets.contains("0504…")  # clipped codes too
    with pytest.raises(ActionError, match="is a TOTP seed, never typed itself"):
        secrets.reveal("{{secret:shop_2fa}}")
    with pytest.raises(ActionError, match="is not a TOTP seed"):
        secrets.reveal("{{totp:pw}}")
    with pytest.raises(ConfigError, match="not a base32 TOTP seed"):
        SecretValues({"bad": SecretValue(value="not base32!!", totp=True)})
    # JSON parameters (the flows) say it the same way
    assert SecretValues({"x": {"value": RFC_SEED, "totp": True}})._entries["x"].codes is not None


def test_a_secret_added_while_a_task_runs_is_scrubbed_by_everyone_holding_the_object():
    secrets = SecretValues({"pw": "hunter22"})
    holder = secrets  # the worker, the tools and the flow's artifacts share one object
    placeholder = secrets.add("ask_human_3", "481516")
    assert placeholder == "{{secret:ask_human_3}}"
    assert holder.scrub("code 481516 typed") == "code {{secret:ask_human_3}} typed"
    assert holder.reveal("{{secret:ask_human_3}}") == "481516"
    with pytest.raises(ConfigError, match="already a secret"):
        secrets.add("ask_human_3", "999999")
    with pytest.raises(ConfigError, match="shorter than 4"):
        secrets.add("tiny", "12")
