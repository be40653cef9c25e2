"""The batch's shared login, without a browser: the task it renders, its key, when a stored login
is reused."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from webtask_core.errors import ConfigError
from webtask_core.storage import SavedSession, validate_session_key
from webtask_core.testing.request_view import task_json
from webtask_flows.listings.login import (
    LOGIN_MAX_STEPS,
    login_session_key_for,
    plan_login,
    render_login_task,
    stored_login_problem,
)

SITE = "http://127.0.0.1:8123/listings"
NOW = datetime(2024, 5, 1, 2, 0, tzinfo=UTC)


def stored(*, age_minutes: float = 5, status: str = "completed", cookies: list[dict[str, Any]] | None = None,
           session: dict[str, Any] | None = None) -> SavedSession:
    from webtask_core.record import TaskRecord

    if session is None:
        session = json.loads(TaskRecord(status=status, task_description="Log in.", max_steps=10, started_at=NOW,
                                                  finished_at=NOW).to_json())
    if cookies is None:
        cookies = [{"name": "session", "value": "x", "domain": "127.0.0.1", "path": "/", "expires": -1}]
    return SavedSession(session=session, storage_state={"cookies": cookies, "origins": []},
                         saved_at=NOW - timedelta(minutes=age_minutes))


def problem(document: SavedSession | None, max_age_minutes: float = 60) -> str | None:
    return stored_login_problem(document, site_url=SITE, max_age=timedelta(minutes=max_age_minutes), now=NOW)


def test_the_login_task_renders_the_data_a_policy_reads_and_no_sku():
    task = render_login_task(SITE, "demo", "{{secret:shop_password}}")
    assert task.startswith(f"Log in to the marketplace at {SITE}")
    request = {"messages": [{"role": "user", "content": [{"type": "text", "text": f"<task>{task}</task>"}]}]}
    assert task_json(request) == {"username": "demo", "password": "{{secret:shop_password}}", "site_url": SITE}


def test_a_login_template_can_be_given_and_its_mistakes_are_named():
    assert render_login_task(SITE, "ops", "pw", "Sign in to {{ site_url }} as {{ username }}.\n") == \
        f"Sign in to {SITE} as ops."
    with pytest.raises(ConfigError, match="^login_task_template: uses an unknown variable"):
        render_login_task(SITE, "ops", "pw", "Sign in as {{ user }}.\n")
    with pytest.raises(ConfigError, match="^login_task_template: no template file"):
        render_login_task(SITE, "ops", "pw", "/nowhere/login.yaml")


def test_one_login_key_per_site_and_account():
    key = login_session_key_for(SITE, "demo")
    assert validate_session_key(key) == key and key.startswith("login-127-0-0-1-8123-")
    assert login_session_key_for("http://127.0.0.1:8123/other/page", "demo") == key  # the origin counts
    assert login_session_key_for(SITE, "ops") != key
    assert login_session_key_for("http://127.0.0.1:9999/listings", "demo") != key


def test_plan_login_caps_the_steps_and_checks_the_age():
    plan = plan_login(site_url=SITE, username="demo", password_secret="shop-password", template=None,
                      max_steps=30, model=None, allowed_domains=None, max_age_minutes=60)
    assert plan.parameters["max_steps"] == LOGIN_MAX_STEPS
    assert plan.parameters["allowed_domains"] == ["127.0.0.1:8123"]
    assert plan.parameters["secrets"] == {"shop_password": "shop-password"}
    assert "session_key" not in plan.parameters and plan.session_key == login_session_key_for(SITE, "demo")
    with pytest.raises(ConfigError, match="^login_max_age_minutes"):
        plan_login(site_url=SITE, username="demo", password_secret="p", template=None, max_steps=30,
                   model=None, allowed_domains=None, max_age_minutes=-1)


def test_a_fresh_completed_login_with_live_cookies_is_reused():
    assert problem(stored()) is None
    later = NOW.timestamp() + 3600
    assert problem(stored(cookies=[{"name": "s", "value": "v", "domain": ".127.0.0.1", "expires": later}])) is None


@pytest.mark.parametrize(("document", "max_age", "reason"), [
    (None, 60, "no stored login"),
    (stored(age_minutes=61), 60, "the stored login is 61 minutes old"),
    (stored(age_minutes=1), 0, "the stored login is 1 minutes old"),
    (stored(status="aborted"), 60, "the last login task ended aborted"),
    (stored(cookies=[]), 60, "the stored login holds no cookie for 127.0.0.1"),
    (stored(cookies=[{"name": "s", "value": "v", "domain": "other.example", "expires": -1}]), 60,
     "the stored login holds no cookie for 127.0.0.1"),
    (stored(cookies=[{"name": "s", "value": "v", "domain": "127.0.0.1", "expires": NOW.timestamp() - 1}]), 60,
     "cookie(s) s expired"),
    (stored(session={"schema_version": 99}), 60, "the stored login is unreadable"),
])
def test_a_stored_login_that_cannot_be_reused_says_why(document, max_age, reason):
    assert (problem(document, max_age) or "").startswith(reason)
