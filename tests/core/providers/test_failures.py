"""Retries, errors, cancellation and credentials, through the real SDK clients."""

from __future__ import annotations

import pytest

from loom_core.providers import make_provider
from loom_core.providers.base import Cancelled, CancelToken, ProviderError
from tests.core.providers.rig import DIALECTS, Upstream, Worker, request, wait_for
from tests.core.proxy.fake_upstream import api_error
from tests.core.proxy.fake_wire import Reply


class RecordingToken(CancelToken):
    """Records each back-off instead of sleeping it: retry timing without a clock."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        return False


@pytest.mark.parametrize("name", DIALECTS)
def test_429_then_success_is_retried(upstream: Upstream, name: str) -> None:
    upstream.fake.script(
        api_error(429, "rate_limit_error", "slow down"),
        api_error(529, "overloaded_error", "busy"),
        Reply(text="finally"),
    )
    token = RecordingToken()
    reply = upstream.provider(name, backoff=0.01).complete(request(), token)
    assert reply.text == "finally"
    assert len(upstream.seen) == 3
    assert len(token.waits) == 2
    assert 0.005 <= token.waits[0] <= 0.01 and 0.01 <= token.waits[1] <= 0.02  # doubled, jittered


def test_retry_after_is_respected_and_capped(upstream: Upstream) -> None:
    upstream.fake.script(
        Reply(status=429, error={"error": {"message": "wait"}}, headers={"retry-after": "7"}),
        Reply(status=503, error={"error": {"message": "x"}}, headers={"retry-after": "600"}),
        Reply(status=429, error={"error": {"message": "y"}}, headers={"retry-after-ms": "250"}),
        Reply(text="ok"),
    )
    token = RecordingToken()
    reply = upstream.provider("openai", backoff=0.01, max_backoff=60.0).complete(request(), token)
    assert reply.text == "ok"
    assert token.waits == [7.0, 60.0, 0.25]


@pytest.mark.parametrize("name", DIALECTS)
def test_400_fails_at_once_with_a_clear_error(upstream: Upstream, name: str) -> None:
    upstream.fake.script(
        api_error(400, "invalid_request_error", "messages: roles must alternate"),
        Reply(text="never"),
    )
    with pytest.raises(ProviderError) as err:
        upstream.provider(name).complete(request())
    assert str(err.value) == f"{name} fake-model: HTTP 400: messages: roles must alternate"
    assert len(upstream.seen) == 1


@pytest.mark.parametrize("name", DIALECTS)
def test_5xx_exhausted(upstream: Upstream, name: str) -> None:
    upstream.fake.script(*[api_error(503, "api_error", "upstream down")] * 3, Reply(text="late"))
    with pytest.raises(ProviderError) as err:
        upstream.provider(name, max_retries=2).complete(request(), RecordingToken())
    assert str(err.value) == (
        f"{name} fake-model: HTTP 503: upstream down (gave up after 3 attempts)"
    )
    assert len(upstream.seen) == 3


@pytest.mark.parametrize("name", DIALECTS)
def test_connection_lost_mid_stream_is_retried(upstream: Upstream, name: str) -> None:
    upstream.fake.script(Reply(text="half of a long answer", drop_after=3), Reply(text="whole"))
    reply = upstream.provider(name).complete(request(), RecordingToken())
    assert reply.text == "whole"
    assert len(upstream.seen) == 2


def test_timeout_is_retried(upstream: Upstream) -> None:
    upstream.fake.script(Reply(text="too late", stall=3.0), Reply(text="in time"))
    reply = upstream.provider("anthropic", timeout=1.0, stream=False).complete(
        request(), RecordingToken()
    )
    assert reply.text == "in time"
    assert len(upstream.seen) == 2


def test_cancel_during_back_off_returns_promptly(upstream: Upstream) -> None:
    upstream.fake.script(api_error(503, "api_error", "down"), Reply(text="never asked"))
    provider = upstream.provider("anthropic", backoff=30.0, max_backoff=30.0)
    token = CancelToken()
    worker = Worker(lambda: provider.complete(request(), token))
    wait_for(lambda: len(upstream.seen) == 1)
    token.cancel()
    assert isinstance(worker.join(timeout=10.0), Cancelled)  # a 15-30 s sleep if ignored
    assert len(upstream.seen) == 1


@pytest.mark.parametrize("name", DIALECTS)
def test_cancel_mid_stream_closes_it(upstream: Upstream, name: str) -> None:
    upstream.fake.script(
        Reply(text="a slow and long answer", calls=[("c1", "x", {"a": 1})], pace=0.5)
    )
    provider = upstream.provider(name)
    token = CancelToken()
    worker = Worker(lambda: provider.complete(request(), token))
    wait_for(lambda: len(upstream.seen) == 1)
    token.cancel()
    assert isinstance(worker.join(timeout=10.0), Cancelled)
    wait_for(lambda: upstream.fake.hung_up == 1)  # the stream was closed, not read to its end
    assert upstream.fake.finished_streams == 0
    assert len(upstream.seen) == 1  # cancel is not a retry


def test_cancelled_before_the_call_sends_nothing(upstream: Upstream) -> None:
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        upstream.provider("openai").complete(request(), token)
    assert upstream.seen == []


@pytest.mark.parametrize("name", ["openai", "openai-responses"])
def test_base_url_without_key(upstream: Upstream, name: str) -> None:
    upstream.fake.script(Reply(text="local model here"))
    provider = upstream.own(make_provider(name, "llama3", upstream.base_url(name), backoff=0.01))
    assert provider.available() == (True, "")
    assert provider.complete(request()).text == "local model here"
    assert upstream.seen[0].headers["authorization"] == "Bearer not-needed"
    assert upstream.seen[0].body["model"] == "llama3"


def test_key_and_base_url_from_environment(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.fake.url)
    upstream.fake.script(Reply(text="hi"))
    assert upstream.own(make_provider("anthropic", "m")).complete(request()).text == "hi"
    assert "sk-ant-from-env" in upstream.seen[0].headers.get("authorization", "") + upstream.seen[
        0
    ].headers.get("x-api-key", "")


@pytest.mark.parametrize(
    "name,var",
    [
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("openai", "OPENAI_API_KEY"),
        ("openai-responses", "OPENAI_API_KEY"),
    ],
)
def test_missing_key_is_reported(name: str, var: str, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = make_provider(name)
    ok, why = provider.available()
    assert not ok and var in why
    with pytest.raises(ProviderError, match=var):
        provider.complete(request())
    monkeypatch.setenv(var, "sk-test")
    assert make_provider(name).available() == (True, "")
