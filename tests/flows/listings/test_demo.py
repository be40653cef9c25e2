"""`webtask demo`, as a new user runs it: no API key, no Prefect server, a fresh home folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
@pytest.mark.e2e
def test_the_demo_command_lists_every_product_on_the_marketplace_and_answers_one_approval(tmp_path: Path):
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("PREFECT_", "ANTHROPIC_"))}
    env["HOME"] = str(tmp_path)  # the demo keeps Prefect's database under ~/.webtask/demo/prefect
    webtask = Path(sys.executable).with_name("webtask")
    done = subprocess.run([str(webtask), "demo", "--listings", "3", "--json"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])

    assert outcome["status"] == "completed"
    assert [(listing["sku"], listing["status"]) for listing in outcome["listings"]] == [
        ("DEMO-001", "completed"), ("DEMO-002", "completed"), ("DEMO-003", "completed")]
    listed = {item["sku"]: item for item in outcome["marketplace"]}  # read from the site before it stopped
    assert sorted(listed) == ["DEMO-001", "DEMO-002", "DEMO-003"]
    assert [listed[sku]["photos"] for sku in sorted(listed)] == [2, 1, 2]  # as the manifest has them
    assert {item["listing_url"] for item in outcome["listings"]} == {item["url"] for item in listed.values()}
    # The first listing is the model's (what it cost, by kind of token: cache reads are billed at about
    # a tenth) and records the flow; the second replays it without a model call; the last, priced
    # above the approval rule, is the model's again (a replay would publish without asking).
    first, second, pricey = outcome["listings"]
    assert first["replay"] == "recorded" and first["usage"]["cache_read_tokens"] > 0 and first["usage"]["input_tokens"] > 0
    assert (second["replay"], second["model_calls"], second["tokens"]) == ("replayed", 0, 0)
    assert pricey["replay"] == "none" and pricey["model_calls"] == pricey["steps"] == first["steps"] + 1  # + ask_human
    assert [listing["readback"] for listing in outcome["listings"]] == ["passed"] * 3  # each read back from the site
    # Its run paused for approval; the demo answered the form through the API the UI uses, and the
    # server accepted the answer: the listing was published after it.
    (answer,) = outcome["person"]
    assert answer["sku"] == "DEMO-003" and answer["status"] == "ACCEPT"
    assert answer["question"] == "Publish SKU DEMO-003 (Silver hoop earrings) at 640.00?"
    assert answer["run_input"]["decision"] == "approve"
    text = " ".join(done.stderr.split())
    assert "Tokens per listing: " in text and "read from the prompt cache" in text
    made = first["model_calls"] + pricey["model_calls"]
    assert f"Model calls: {made} made, {second['replayed_steps']} saved by replay" in text

    prefect_home = tmp_path / ".webtask" / "demo" / "prefect"
    assert (prefect_home / "prefect.db").is_file()  # `prefect server start` with this home shows the runs
    # The venv's own prefect: a new user has not activated the virtual environment.
    prefect_bin = Path(sys.executable).with_name("prefect")
    assert f"PREFECT_HOME={prefect_home} {prefect_bin} server start" in done.stderr
    assert "Listings page: http://127.0.0.1:" in done.stderr
    assert "DEMO-003 waits for a person: Publish SKU DEMO-003" in text
    assert f"POST /flow_runs/{answer['flow_run_id']}/resume with {{'decision': 'approve'}} -> ACCEPT" in text
    assert f"approved through the Prefect API (ACCEPT); then published at {pricey['listing_url']}" in text


def test_with_a_prefect_server_the_demo_links_to_the_run_in_the_ui_not_the_api():
    import uuid

    from prefect.settings import PREFECT_API_URL, temporary_settings
    from prefect.states import Completed
    from rich.console import Console

    from webtask_flows.listings.demo import _where_to_look

    class Shop:
        def url(self, path: str) -> str:
            return "http://127.0.0.1:8000" + path

    run_id = uuid.uuid4()
    state = Completed(message="4 listing(s) completed")
    state.state_details.flow_run_id = run_id
    console = Console(record=True, width=300)
    with temporary_settings({PREFECT_API_URL: "http://prefect.internal:4200/api"}):
        _where_to_look(console, Shop(), state)
    text = console.export_text()
    assert f"Prefect UI: the batch run is at http://prefect.internal:4200/runs/flow-run/{run_id}" in text
    assert "/api" not in text


@pytest.mark.parametrize("command", ["demo", "services"])
def test_without_the_demo_extra_the_commands_say_what_to_install(command: str):
    script = ("import sys\nsys.modules['python_multipart'] = None\n"
              f"from webtask_flows.listings.cli import app\napp([{command!r}], prog_name='webtask')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip() == (f"error: `webtask {command}` needs the demo extra (python-multipart not "
                                   "installed): pip install 'prefect-webtask[demo]'")


def test_the_demo_prints_its_json_line_only_when_asked(capsys):
    from webtask_flows.listings.cli import print_outcome

    outcome = {"status": "completed", "listings": []}
    print_outcome(outcome, json_line=False)  # a person reads the demo's own lines (stderr), not a JSON dump
    assert capsys.readouterr().out == ""
    print_outcome(outcome, json_line=True)
    assert json.loads(capsys.readouterr().out) == outcome
