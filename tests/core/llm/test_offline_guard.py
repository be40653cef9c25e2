"""The offline guard: tests never reach a real model; users get the same guard for their suites."""

from __future__ import annotations

import os
import socket

import anthropic
import pytest

from webtask_core.errors import ConfigError
from webtask_core.llm import AnthropicLLM
from webtask_core.llm.guard import (
    NetworkBlockedError,
    assert_offline,
    is_loopback_url,
    is_offline,
    offline_mode,
)
from webtask_core.testing import FakeAnthropicServer


def test_the_test_session_runs_offline():
    assert is_offline()
    assert_offline()


@pytest.mark.parametrize(
    "url",
    ["http://localhost:8080", "http://127.0.0.1:1", "http://127.9.8.7", "http://[::1]:9000/v1", "http://app.localhost"],
)
def test_loopback_urls(url):
    assert is_loopback_url(url)


@pytest.mark.parametrize(
    "url",
    ["https://api.anthropic.com", "http://10.0.0.5:80", "http://localhost.evil.com", "not a url", "http://[::2]"],
)
def test_non_loopback_urls(url):
    assert not is_loopback_url(url)


def test_default_endpoint_is_refused_with_a_pointer_to_the_fake():
    with pytest.raises(ConfigError) as caught:
        AnthropicLLM(api_key="test")
    assert caught.value.parameter == "base_url"
    assert "api.anthropic.com" in str(caught.value) and "FakeAnthropicServer" in str(caught.value)


def test_remote_base_url_argument_or_environment_is_refused(monkeypatch):
    with pytest.raises(ConfigError, match="not a loopback address"):
        AnthropicLLM(base_url="https://proxy.example.com", api_key="test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://proxy.example.com")
    with pytest.raises(ConfigError, match="proxy.example.com"):
        AnthropicLLM(api_key="test")


def test_a_given_client_pointing_elsewhere_is_refused():
    client = anthropic.AsyncAnthropic(api_key="test", base_url="https://api.anthropic.com")
    with pytest.raises(ConfigError, match="api.anthropic.com"):
        AnthropicLLM(client=client)


def test_bedrock_is_guarded_too():
    with pytest.raises(ConfigError, match="bedrock-runtime.eu-west-1.amazonaws.com"):
        AnthropicLLM.bedrock(aws_region="eu-west-1", api_key="test")


def test_loopback_endpoints_are_allowed():
    with FakeAnthropicServer() as server:
        llm = AnthropicLLM(base_url=server.base_url.replace("127.0.0.1", "localhost"), api_key="test")
    assert llm.base_url.startswith("http://localhost:")


def test_without_offline_mode_a_remote_endpoint_can_be_configured(monkeypatch):
    monkeypatch.delenv("WEBTASK_OFFLINE")
    llm = AnthropicLLM(api_key="test")  # constructing sends nothing
    assert llm.base_url.startswith("https://api.anthropic.com")
    with pytest.raises(ConfigError, match="WEBTASK_OFFLINE"):
        assert_offline()


def test_offline_mode_sets_the_flag_blocks_remote_sockets_and_restores_both(monkeypatch):
    monkeypatch.delenv("WEBTASK_OFFLINE")
    original_connect = socket.socket.connect
    with FakeAnthropicServer() as server, offline_mode():
        assert is_offline()
        with pytest.raises(ConfigError):
            AnthropicLLM(api_key="test")
        remote = socket.socket()
        with pytest.raises(NetworkBlockedError, match="203.0.113.9"):
            remote.connect(("203.0.113.9", 443))  # TEST-NET-3: refused before any packet leaves
        remote.close()
        port = int(server.base_url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass  # loopback still works
    assert "WEBTASK_OFFLINE" not in os.environ
    assert socket.socket.connect is original_connect
