"""`LLM` on the official `anthropic` async client: native tool use, prompt caching, error mapping.

The worker speaks only the provider-neutral types of :mod:`webtask_core.llm.types`; this module turns
them into Messages API parameters and the reply back into a :class:`ModelReply`. After the SDK's own
retries every failure becomes a :class:`ModelTransientError` (retry the step) or a
:class:`PermanentModelError` (do not); nothing else escapes :meth:`AnthropicLLM.complete`.
"""

from __future__ import annotations

import asyncio
import os
import re
import typing
import weakref
from collections.abc import Mapping
from typing import Any

import anthropic
from anthropic.types import Model as _SDKModel

from webtask_core.errors import ConfigError, ModelTransientError, PermanentModelError, UnknownModelError
from webtask_core.llm.anthropic_messages import MAX_CACHE_BREAKPOINTS, build_request, checked_reply, parse_reply
from webtask_core.llm.guard import check_model_endpoint
from webtask_core.llm.types import (
    Message,
    ModelReply,
    ToolSpec,
)

try:  # Bedrock signs requests with botocore; its credential errors are raised at call time.
    from botocore.exceptions import BotoCoreError as _BotoCoreError

    _AWS_ERRORS: tuple[type[Exception], ...] = (_BotoCoreError,)
except ImportError:  # botocore is optional unless Bedrock is used
    _AWS_ERRORS = ()

__all__ = [
    "AnthropicLLM",
    "DEFAULT_MODEL",
    "DEFAULT_BEDROCK_MODEL",
    "MAX_CACHE_BREAKPOINTS",
    "known_models",
    "check_model_name",
    "build_request",
    "parse_reply",
    "checked_reply",
    "status_error",
    "map_sdk_error",
]

# The current Sonnet; not in the SDK's deprecation table (see tests/core/llm/test_anthropic_llm.py).
DEFAULT_MODEL = "claude-sonnet-5-5"
# A cross-region inference profile; pass a regional one ("us.anthropic....") where "global." is not offered.
DEFAULT_BEDROCK_MODEL = "global.anthropic.claude-sonnet-5-5"


def known_models() -> tuple[str, ...]:
    """Model names the installed SDK knows (other names are still accepted: new models come first)."""
    for arg in typing.get_args(_SDKModel):
        if typing.get_origin(arg) is typing.Literal:
            return tuple(typing.get_args(arg))
    return ()


# What a Claude model id looks like on Anthropic's API (claude-sonnet-5-5, claude-future-9), on
# Bedrock (anthropic.claude-..., us./global. inference profiles, ARNs) and on Vertex (claude-...@date).
_PLAUSIBLE_MODEL = re.compile(
    r"(?:(?:[a-z]{2,6}\.)?anthropic\.)?claude-[a-z0-9][a-z0-9.\-]*(?:[:@][A-Za-z0-9.\-:]+)?"
    r"|arn:aws[a-z\-]*:bedrock:[A-Za-z0-9:/._\-]+"
)


def _check_model(model: object) -> str:
    """Names of new models are accepted (they come out before the SDK lists them), but a name that
    cannot be a Claude model (a typo like "sonet-5", another vendor's model) is rejected up front; a
    well-formed name the provider does not know fails the first call with UnknownModelError."""
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(
            "model", f"expected a non-empty model name, got {model!r}; known models: {', '.join(known_models())}"
        )
    if model not in known_models() and not _PLAUSIBLE_MODEL.fullmatch(model):
        raise ConfigError(
            "model",
            f"{model!r} is not a Claude model name; use one like {DEFAULT_MODEL!r} "
            f"(known models: {', '.join(known_models())})",
        )
    return model


def _env_number(name: str, default: float, *, integer: bool = False) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        raise ConfigError(name, f"must be a {'whole ' if integer else ''}number, got {raw!r}") from None
    if value < 0 or (not integer and value == 0):
        raise ConfigError(name, f"must be {'>= 0' if integer else '> 0'}, got {raw!r}")
    return value


# Public, so callers (the flows) can refuse a bad model name before anything starts.
check_model_name = _check_model


def _is_transient_status(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def status_error(
    status: int, error_type: str | None, detail: str, *, retried: str, model: str | None = None
) -> Exception:
    """The webtask error for an error answer of the Messages API (``retried`` says how often it was
    tried); shared with the in-process fake so both fail the same way."""
    if status == 404 and model is not None and error_type == "not_found_error" and "model" in str(detail).lower():
        return UnknownModelError(model, f"{status}: {detail}", status_code=status)
    kind = f"{error_type}: " if error_type else ""
    message = f"model API returned {status}: {kind}{detail}"
    if _is_transient_status(status):
        return ModelTransientError(f"{message} {retried}", status_code=status)
    return PermanentModelError(message, status_code=status)


def map_sdk_error(
    error: anthropic.AnthropicError, *, timeout_s: float, max_retries: int, model: str | None = None
) -> Exception:
    """The webtask error for an SDK error raised after the SDK's own retries."""
    retried = f"(after the SDK's {max_retries} retries)"
    if isinstance(error, anthropic.APITimeoutError):
        return ModelTransientError(f"model API timed out after {timeout_s:g}s {retried}")
    if isinstance(error, anthropic.APIConnectionError):
        return ModelTransientError(f"could not reach the model API {retried}: {error.message}")
    if isinstance(error, anthropic.APIStatusError):
        detail = error.api_message or error.message
        return status_error(error.status_code, error.type, detail, retried=retried, model=model)
    return PermanentModelError(f"model API call failed: {type(error).__name__}: {error}")


def _missing_aws_credentials(client: Any, error: RuntimeError) -> bool:
    """The Bedrock client signs each request with botocore and raises a bare RuntimeError, before
    sending anything, when the AWS credential chain finds no credentials."""
    return isinstance(client, anthropic.AsyncAnthropicBedrock) and "credentials" in str(error).lower()


def _aws_credentials_advice(client: Any) -> str:
    where = f"AWS profile {client.aws_profile!r}" if client.aws_profile else "the AWS credential chain"
    return (
        f"Amazon Bedrock ({client.aws_region}): no AWS credentials found in {where}; set "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or run with an instance or "
        "container role), or use a Bedrock API key: api_key= or AWS_BEARER_TOKEN_BEDROCK"
    )


class AnthropicLLM:
    """Claude through the Messages API. Implements the `LLM` protocol.

    ``temperature`` is only sent when set (default None): current models (Sonnet 5 and later) reject
    non-default sampling parameters with a 400, and the SDK's ``create()`` no longer takes one.
    ``extra_body`` is merged into every request (e.g. ``{"output_config": {"effort": "low"}}``).
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 4096,
        temperature: float | None = None,
        timeout_s: float | None = None,
        max_retries: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        client: anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock | None = None,
    ):
        self.model = _check_model(model)
        # Unset: WEBTASK_MODEL_TIMEOUT_S / WEBTASK_MODEL_MAX_RETRIES, so deployments can tune them.
        if timeout_s is None:
            timeout_s = _env_number("WEBTASK_MODEL_TIMEOUT_S", 60.0)
        if max_retries is None:
            max_retries = int(_env_number("WEBTASK_MODEL_MAX_RETRIES", 2, integer=True))
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise ConfigError("max_tokens", f"expected a positive integer, got {max_tokens!r}")
        if not isinstance(timeout_s, int | float) or not timeout_s > 0:
            raise ConfigError("timeout_s", f"expected a positive number of seconds, got {timeout_s!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError("max_retries", f"expected an integer >= 0, got {max_retries!r}")
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.extra_body = dict(extra_body or {})
        self._client_loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self._owns_client = client is None
        self._make_client: typing.Callable[[], Any] | None = None
        if client is None:
            check_model_endpoint(base_url or os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com")
            self._make_client = lambda: anthropic.AsyncAnthropic(
                api_key=api_key, base_url=base_url, timeout=self.timeout_s, max_retries=max_retries
            )
            try:
                client = self._make_client()
            except anthropic.CredentialsError as error:  # e.g. ANTHROPIC_PROFILE names a missing profile
                raise ConfigError("api_key", f"no usable Anthropic credentials: {error}") from error
            if client.api_key is None and client.auth_token is None and client.credentials is None:
                raise ConfigError("api_key", "no Anthropic credentials: pass api_key= or set ANTHROPIC_API_KEY")
        self._client = client
        check_model_endpoint(str(client.base_url))

    @classmethod
    def bedrock(
        cls,
        model: str = DEFAULT_BEDROCK_MODEL,
        *,
        aws_region: str | None = None,
        aws_profile: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 4096,
        temperature: float | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        extra_body: Mapping[str, Any] | None = None,
    ) -> AnthropicLLM:
        """Claude on Amazon Bedrock (``AsyncAnthropicBedrock``); credentials from the usual AWS chain,
        or a Bedrock API key (``api_key`` / ``AWS_BEARER_TOKEN_BEDROCK``)."""
        _check_model(model)
        endpoint = base_url or os.environ.get("ANTHROPIC_BEDROCK_BASE_URL")
        check_model_endpoint(endpoint or f"https://bedrock-runtime.{aws_region or 'unknown-region'}.amazonaws.com")
        kwargs: dict[str, Any] = {"aws_region": aws_region, "base_url": base_url, "api_key": api_key}
        if aws_profile is not None:
            kwargs["aws_profile"] = aws_profile

        def make_client() -> anthropic.AsyncAnthropicBedrock:
            try:
                return anthropic.AsyncAnthropicBedrock(**kwargs, timeout=float(timeout_s), max_retries=max_retries)
            except ValueError as error:  # no AWS region configured, or api_key given with AWS credentials
                raise ConfigError("aws_region" if "region" in str(error) else "api_key", str(error)) from error

        llm = cls(
            model,
            max_tokens=max_tokens,
            temperature=temperature,
            timeout_s=timeout_s,
            max_retries=max_retries,
            extra_body=extra_body,
            client=make_client(),
        )
        llm._owns_client = True
        llm._make_client = make_client
        return llm

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    def _client_for_running_loop(self) -> Any:
        # An httpx connection pool belongs to the event loop that opened it; a second asyncio.run()
        # (or another thread's loop) gets a fresh client rather than "Event loop is closed".
        loop = asyncio.get_running_loop()
        if self._make_client is not None and self._client_loop is not None and self._client_loop() is not loop:
            self._client = self._make_client()
        self._client_loop = weakref.ref(loop)
        return self._client

    async def complete(
        self,
        *,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        cache_system: bool = True,
        tool_choice: str | None = None,
    ) -> ModelReply:
        params = build_request(
            system=system, messages=messages, tools=tools, cache_system=cache_system, tool_choice=tool_choice
        )
        extra_body = dict(self.extra_body)
        if self.temperature is not None:
            # SDK 2.x no longer has a `temperature` argument; older models still accept the field.
            extra_body["temperature"] = self.temperature
        client = self._client_for_running_loop()
        try:
            response = await client.messages.create(
                model=self.model,
                max_tokens=self.max_tokens,
                extra_body=extra_body or None,
                **params,
            )
        except anthropic.AnthropicError as error:
            raise map_sdk_error(
                error, timeout_s=self.timeout_s, max_retries=self.max_retries, model=self.model
            ) from error
        except _AWS_ERRORS as error:
            raise PermanentModelError(f"AWS request signing failed: {error}") from error
        except RuntimeError as error:
            if not _missing_aws_credentials(client, error):
                raise
            raise PermanentModelError(_aws_credentials_advice(client)) from error
        return checked_reply(response)

    async def aclose(self) -> None:
        """Close the HTTP connections of a client this object created."""
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> AnthropicLLM:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"AnthropicLLM(model={self.model!r}, base_url={self.base_url!r})"
