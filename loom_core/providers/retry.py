"""Calling a model API reliably: credentials, retries with back-off, cancellation.

Why our own retry loop rather than the SDKs' (which run with ``max_retries=0``):
a fork is cancelled from the GUI, and the SDKs sleep between retries with
``time.sleep`` -- uninterruptible. Here every back-off sleeps through
:meth:`CancelToken.wait`, so Cancel is immediate whether a call is streaming or
waiting to retry. Both official SDKs (Stainless-generated) raise the same family
of exceptions, so one classifier serves both; the SDK module is passed in so this
file imports neither.
"""

from __future__ import annotations

import email.utils
import os
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from loom_core.providers.base import Cancelled, CancelToken, ModelReply, ModelRequest, ProviderError

T = TypeVar("T")
RETRY_STATUS = frozenset({408, 409, 429})  # plus every 5xx (529 = Anthropic overloaded)
RETRY_ERROR_TYPES = frozenset(
    {"overloaded_error", "api_error", "rate_limit_error", "server_error", "rate_limit_exceeded"}
)
NO_KEY = "not-needed"  # what OpenAI-compatible local servers get when no key is set


@dataclass
class CallPolicy:
    """How one call is made: streamed or not, how often and how patiently retried."""

    stream: bool = True
    max_retries: int = 4  # retries after the first attempt
    backoff: float = 0.5  # first back-off in seconds, doubled per retry (tests: 0.01)
    max_backoff: float = 30.0  # cap on one sleep, ``retry-after`` included
    timeout: float = 120.0  # the SDK's per-request timeout

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds before retry number ``retry`` (0-based): the server's ``retry-after``
        when it gave one, else exponential back-off with jitter; always capped."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_backoff)
        return min(self.max_backoff, self.backoff * 2.0**retry) * random.uniform(0.5, 1.0)


@dataclass
class Endpoint:
    """Where a provider sends requests and with which key (resolved once, at construction)."""

    key_var: str
    api_key: str | None
    base_url: str | None

    def usable(self) -> tuple[bool, str]:
        """A key is needed unless a base URL points at a server that may not want one."""
        if self.api_key or self.base_url:
            return True, ""
        return False, f"{self.key_var} is not set (and no base URL was given)"

    @property
    def key(self) -> str:
        return self.api_key or NO_KEY


def resolve_endpoint(
    key_var: str, url_var: str, api_key: str | None, base_url: str | None
) -> Endpoint:
    """Explicit arguments first, then the usual environment variables (empty = unset)."""
    return Endpoint(
        key_var,
        api_key or os.environ.get(key_var) or None,
        base_url or os.environ.get(url_var) or None,
    )


class CallFailed(Exception):
    """A failure a provider detected itself (e.g. a stream that ended early or an
    in-stream error event), already classified as retryable or not."""

    def __init__(self, message: str, retryable: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message, self.retryable, self.retry_after = message, retryable, retry_after


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return float(ms) / 1000.0
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return when.timestamp() - time.time()
    except (TypeError, ValueError, OverflowError):
        return None


def _api_message(exc: Any) -> tuple[str, str]:
    """(message, error type) from an SDK error's body, whichever nesting it uses."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message") or getattr(exc, "message", "")
            return str(message), str(inner.get("type") or inner.get("code") or "")
    if isinstance(body, str) and body:
        return body, ""
    return str(getattr(exc, "message", "") or exc), ""


def classify(
    exc: BaseException, sdk: Any, transport: tuple[type[BaseException], ...] = ()
) -> CallFailed | None:
    """An exception from ``sdk`` (the ``anthropic`` or ``openai`` module) or from the
    HTTP transport mid-stream, as a classified failure; ``None`` = not ours (a bug)."""
    if isinstance(exc, CallFailed):
        return exc
    if isinstance(exc, sdk.APIStatusError):
        message, kind = _api_message(exc)
        status = exc.status_code
        if status < 400:  # an error event inside a 200 stream
            return CallFailed(f"stream error {kind or '?'}: {message}", kind in RETRY_ERROR_TYPES)
        return CallFailed(
            f"HTTP {status}: {message}",
            status in RETRY_STATUS or status >= 500,
            retry_after(exc.response.headers),
        )
    if isinstance(exc, sdk.APITimeoutError):
        return CallFailed("request timed out", True)
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc
        return CallFailed(f"connection error: {cause}", True)
    if transport and isinstance(exc, transport):
        return CallFailed(f"connection lost: {exc or type(exc).__name__}", True)
    if isinstance(exc, sdk.APIResponseValidationError):
        return CallFailed(f"unexpected response: {exc}", False)
    if isinstance(exc, sdk.APIError):  # the OpenAI SDK's in-stream error event
        message, kind = _api_message(exc)
        return CallFailed(f"stream error {kind or '?'}: {message}", kind in RETRY_ERROR_TYPES)
    return None


def call_with_retries(
    attempt: Callable[[], T],
    *,
    label: str,
    policy: CallPolicy,
    cancel: CancelToken,
    classify: Callable[[BaseException], CallFailed | None],
) -> T:
    """Run ``attempt`` until it succeeds, fails for good, or ``cancel`` is set.

    Raises :class:`Cancelled` on cancel and ``ProviderError("<label>: <cause>")``
    for a non-retryable failure or after the last retry.
    """
    retry = 0
    while True:
        cancel.check()
        try:
            return attempt()
        except (Cancelled, ProviderError):
            raise
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            if not failure.retryable:
                raise ProviderError(f"{label}: {failure.message}") from exc
            if retry >= policy.max_retries:
                raise ProviderError(
                    f"{label}: {failure.message} (gave up after {retry + 1} attempts)"
                ) from exc
        if cancel.wait(policy.delay(retry, failure.retry_after)):
            raise Cancelled(f"{label}: cancelled while waiting to retry")
        retry += 1


class SdkClient(Protocol):
    """What the base needs of an SDK client (``anthropic.Anthropic``, ``openai.OpenAI``)."""

    def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=SdkClient)


class SdkProvider(Generic[ClientT]):
    """What the SDK-backed providers share: model choice, credentials, the retry loop.

    A subclass sets ``name``, ``key_var``, ``url_var``, ``default_model`` and
    implements :meth:`_params`, :meth:`_create` (one non-streamed call),
    :meth:`_stream` (one streamed call that checks ``cancel`` between events and
    closes the stream when it is set) and :meth:`_classify`.
    """

    name = ""
    key_var = ""
    url_var = ""
    default_model = ""

    def __init__(
        self,
        model: str = "",
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        stream: bool = True,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        timeout: float = 120.0,
    ) -> None:
        self.model = model
        self.endpoint = resolve_endpoint(self.key_var, self.url_var, api_key, base_url)
        self.policy = CallPolicy(stream, max_retries, backoff, max_backoff, timeout)
        self._client: ClientT | None = None

    def available(self) -> tuple[bool, str]:
        return self.endpoint.usable()

    def close(self) -> None:
        """Release the SDK client's pooled connections (the owner calls this when done)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def model_for(self, request: ModelRequest) -> str:
        """The model the user picked for this provider wins; then the request's; then ours."""
        return self.model or request.model or self.default_model

    def complete(self, request: ModelRequest, cancel: CancelToken | None = None) -> ModelReply:
        cancel = cancel or CancelToken()
        model = self.model_for(request)
        label = f"{self.name} {model}"
        ok, why = self.available()
        if not ok:
            raise ProviderError(f"{label}: {why}")
        params = self._params(request, model)
        once = self._stream if self.policy.stream else self._create
        return call_with_retries(
            lambda: once(params, cancel),
            label=label,
            policy=self.policy,
            cancel=cancel,
            classify=self._classify,
        )

    def _params(self, request: ModelRequest, model: str) -> dict[str, Any]:
        raise NotImplementedError

    def _create(self, params: dict[str, Any], cancel: CancelToken) -> ModelReply:
        raise NotImplementedError

    def _stream(self, params: dict[str, Any], cancel: CancelToken) -> ModelReply:
        raise NotImplementedError

    def _classify(self, exc: BaseException) -> CallFailed | None:
        raise NotImplementedError
