"""`webtask services`: the offline model and the demo marketplace as long-lived services, as a user
starts them in a terminal for a separate Prefect worker, and stops them with Ctrl+C."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest


def read_exports(process: subprocess.Popen[str], timeout_s: float = 60) -> dict[str, str]:
    """The `export NAME=value` lines the command prints, up to its Secret command (the last line)."""
    exports: dict[str, str] = {}
    deadline = time.monotonic() + timeout_s
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        assert line, f"the command ended early:\n{process.stderr.read() if process.stderr else ''}"
        if line.startswith("export "):
            name, _, value = line[len("export "):].strip().partition("=")
            exports[name] = shlex.split(value)[0]
        elif line.startswith("python -c "):
            exports["secret command"] = line.strip()
            return exports
    raise AssertionError(f"no Secret command within {timeout_s} s; exports so far: {exports}")


def test_services_serve_the_model_and_the_site_until_ctrl_c(tmp_path: Path):
    webtask = Path(sys.executable).with_name("webtask")
    env = {name: value for name, value in os.environ.items() if not name.startswith(("ANTHROPIC_", "WEBTASK_SITE"))}
    process = subprocess.Popen([str(webtask), "services", "--listings", "2", "--workdir", str(tmp_path / "kit")],
                               env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        exports = read_exports(process)
        assert set(exports) == {"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "WEBTASK_SITE_URL", "WEBTASK_SITE_USER",
                                "WEBTASK_NIGHTLY_MANIFEST", "WEBTASK_LEDGER", "WEBTASK_SESSION_STORE",
                                "WEBTASK_TRACE_STORE", "secret command"}
        assert exports["secret command"] == (
            "python -c \"from prefect.blocks.system import Secret; "
            "Secret(value='demo-pass').save('shop-password', overwrite=True)\"")
        assert len(Path(exports["WEBTASK_NIGHTLY_MANIFEST"]).read_text().splitlines()) == 2

        site = httpx.get(exports["WEBTASK_SITE_URL"], follow_redirects=True, timeout=10)
        assert site.status_code == 200 and "Log in" in site.text
        answer = httpx.post(f"{exports['ANTHROPIC_BASE_URL']}/v1/messages", timeout=10, headers={
            "x-api-key": exports["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"}, json={
            "model": "claude-sonnet-5-5", "max_tokens": 100,
            "messages": [{"role": "user", "content": "<task>Log in.</task>"}]})
        assert answer.status_code == 200 and answer.json()["type"] == "message"
    finally:
        process.send_signal(signal.SIGINT)
        _stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr and "Stopped." in stderr
    with pytest.raises(httpx.ConnectError):  # both stopped
        httpx.get(exports["WEBTASK_SITE_URL"], timeout=5)
    with pytest.raises(httpx.ConnectError):
        httpx.get(exports["ANTHROPIC_BASE_URL"], timeout=5)
    assert (tmp_path / "kit" / "manifest.jsonl").is_file()  # a --workdir is the user's: kept


def test_a_port_in_use_is_refused_naming_its_option(tmp_path: Path):
    import socket

    from webtask_core.errors import ConfigError
    from webtask_flows.listings.services import ServicesOptions, running_services

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for option in ("model_port", "site_port"):
            with pytest.raises(ConfigError, match=f"{option}: .*127.0.0.1:{port}"):
                with running_services(ServicesOptions(workdir=tmp_path / option, **{option: port})):
                    pass


def _ask(model_url: str, sku: str) -> httpx.Response:
    """One model call for the listing of ``sku``, as a worker's first step would make it."""
    task = f'List it.\n```json\n{{"sku": "{sku}", "title": "t", "description": "d", "price": 1, "category": "Bags", ' \
        '"condition": "Good", "photos": ["p"], "username": "demo", "password": "x", "site_url": "http://s"}\n```'
    return httpx.post(f"{model_url}/v1/messages", timeout=10, headers={
        "x-api-key": "k", "anthropic-version": "2023-06-01"}, json={
        "model": "claude-sonnet-5-5", "max_tokens": 100,
        "messages": [{"role": "user", "content": [  # the task, and a blank page as a fresh run's first step sees
            {"type": "text", "text": f"<task>{task}</task>"},
            {"type": "text", "text": '<page url="about:blank" title="" step="1">\n</page>'}]}]})


def test_a_trial_makes_chosen_listings_abort_or_fail_and_shows_the_redesign(tmp_path: Path):
    """What deployments/README.md's trial does: NIGHT-2 aborts, NIGHT-3 fails, the site is redesigned;
    then, while serving, the cause is cleared and the original site is back."""
    import json

    webtask = Path(sys.executable).with_name("webtask")
    kit = tmp_path / "kit"
    process = subprocess.Popen([str(webtask), "services", "--listings", "3", "--workdir", str(kit),
                                "--abort-sku", "NIGHT-2", "--fail-sku", "NIGHT-3", "--layout", "renamed_field"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        exports = read_exports(process)
        model, site = exports["ANTHROPIC_BASE_URL"], exports["WEBTASK_SITE_URL"].rsplit("/listings", 1)[0]
        assert httpx.get(f"{site}/_layout").json()["changes"] == ["renamed_field"]
        assert httpx.get(f"{site}/api/listings").json() == {"count": 0, "listings": []}

        aborted = _ask(model, "NIGHT-2").json()["content"]
        assert [(block["name"], block["input"]["reason"]) for block in aborted if block["type"] == "tool_use"] == [
            ("abort", "told to abort the listing of SKU NIGHT-2")]
        failed = _ask(model, "NIGHT-3")
        assert failed.status_code == 400 and "the listing of SKU NIGHT-3 is set to fail" in failed.text
        def tools(reply: httpx.Response) -> list[str]:
            assert reply.status_code == 200, reply.text
            return [block["name"] for block in reply.json()["content"] if block["type"] == "tool_use"]

        assert tools(_ask(model, "NIGHT-1")) == ["navigate"]  # the others are listed as usual

        # The cause is fixed while the services run: the faults file, and the layout over HTTP.
        (kit / "faults.json").write_text(json.dumps({"abort": [], "fail": []}))
        assert tools(_ask(model, "NIGHT-3")) == tools(_ask(model, "NIGHT-2")) == ["navigate"]
        assert httpx.post(f"{site}/_layout", json={"changes": []}).json()["layout"] == "original"
    finally:
        process.send_signal(signal.SIGINT)
        _stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert "abort: NIGHT-2; fail: NIGHT-3" in stderr


def test_an_unknown_layout_change_is_refused(tmp_path: Path):
    from webtask_core.errors import ConfigError
    from webtask_flows.listings.services import ServicesOptions, running_services

    with pytest.raises(ConfigError, match="layout: unknown layout change 'bigger_buttons'"):
        with running_services(ServicesOptions(workdir=tmp_path, layout="bigger_buttons")):
            pass


@pytest.mark.parametrize("factor", ["email", "totp"])
def test_a_second_factor_for_the_trial(tmp_path: Path, factor: str):
    """`--second-factor email`: the log-in e-mails a code to the site's inbox page, where a person reads
    it; `--second-factor totp`: the seed is printed as a Secret block command, and its code is accepted."""
    import re

    import pyotp

    webtask = Path(sys.executable).with_name("webtask")
    process = subprocess.Popen([str(webtask), "services", "--listings", "1", "--workdir", str(tmp_path / "kit"),
                                "--second-factor", factor], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        exports = read_exports(process)
        site = exports["WEBTASK_SITE_URL"].rsplit("/listings", 1)[0]
        with httpx.Client(base_url=site, timeout=10, follow_redirects=True) as browser:
            asked = browser.post("/login", data={"username": "demo", "password": "demo-pass"})
            assert asked.status_code == 200 and "/login/verify" in str(asked.url)  # a second factor is asked
            token = re.search(r'name="token" value="([^"]+)"', asked.text)
            assert token, asked.text
            if factor == "email":
                assert "secret command" in exports and "shop-2fa" not in exports["secret command"]
                code = re.search(r"\b(\d{6})\b", browser.get("/inbox").text)  # what the owner reads
                assert code, "no code on the inbox page"
                typed = code.group(1)
            else:
                seed = re.search(r"Secret\(value='([A-Z2-7]+)'\)\.save\('shop-2fa'", exports["secret command"])
                assert seed, exports["secret command"]
                typed = pyotp.TOTP(seed.group(1)).now()  # what an authenticator app set up with it shows
            verified = browser.post("/login/verify", data={"token": token.group(1), "code": typed})
            assert verified.status_code == 200 and "/login" not in str(verified.url), verified.text[-500:]
    finally:
        process.send_signal(signal.SIGINT)
        _stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    said = " ".join(stderr.split())
    if factor == "email":
        assert f"the log-in e-mails a code to {site}/inbox" in said
    else:
        assert "run the batch with --param totp_secret=shop-2fa" in said


def test_an_unknown_second_factor_is_refused(tmp_path: Path):
    webtask = Path(sys.executable).with_name("webtask")
    done = subprocess.run([str(webtask), "services", "--second-factor", "sms"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "--second-factor must be email or totp, got 'sms'" in done.stderr
