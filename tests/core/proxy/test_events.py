"""The proxy's event stream ``GET /loom/events`` (ours), driven by real SDK clients.

Why these pieces: agents are the real ``anthropic``/``openai`` SDK clients through the
test rig, subscribers are our :meth:`ControlClient.events` in worker threads (what
the desktop runs), decisions go through the real control plane. Every wait is
bounded; every subscriber thread is cancelled and joined.
"""

from __future__ import annotations

import http.client
import json
import queue
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from loom_core.proxy.config import ShieldFlags
from loom_core.proxy.control_client import ControlClient, ControlError, NoEventStream
from tests.core.proxy.fake_wire import Reply
from tests.core.proxy.hangup import HangingUpAgent
from tests.core.proxy.harness import NEVER_S, Rig, start_rig
from tests.core.proxy.procs import wait_for

TOOLS = [{"name": "deploy", "description": "deploy", "input_schema": {"type": "object"}}]
WAIT = 60.0  # a bound for an event to arrive, not an expectation


@pytest.fixture(autouse=True)
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "runtime"
    monkeypatch.setenv("LOOM_RUNTIME_DIR", str(folder))
    return folder


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(2, thread_name_prefix="agent") as p:
        yield p


def shielded(tmp: Path, **shield: Any) -> Rig:
    shield.setdefault("confirm_timeout", NEVER_S)
    return start_rig(tmp, shield=ShieldFlags(**shield))


class Subscriber:
    """One ``ControlClient.events`` reader in a thread; events land in a queue."""

    def __init__(self, port: int, token: str | None = None) -> None:
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.cancel = threading.Event()
        self.ended: str | None = None  # "closed" or the error that ended the stream
        client = ControlClient(port) if token is None else ControlClient(port, token=token)
        self.thread = threading.Thread(
            target=self._run, args=(client,), daemon=True, name="events-subscriber"
        )
        self.thread.start()

    def _run(self, client: ControlClient) -> None:
        try:
            for event in client.events(self.cancel):
                self.events.put(event)
            self.ended = "closed"
        except ControlError as exc:
            self.ended = repr(exc)

    def next(self, name: str | None = None) -> dict[str, Any]:
        """The next event (skipping none): it must be ``name`` when given."""
        event = self.events.get(timeout=WAIT)
        self.seen.append(event)
        assert name is None or event["event"] == name, (name, event)
        return event["data"]

    def stop(self) -> None:
        self.cancel.set()
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "the subscriber did not stop"


@pytest.fixture
def subscribers() -> Iterator[list[Subscriber]]:
    made: list[Subscriber] = []
    yield made
    for sub in made:
        sub.stop()


def subscribe(rig: Rig, subscribers: list[Subscriber]) -> Subscriber:
    """A reader of ``rig``'s event stream, kept in ``subscribers`` so teardown stops it."""
    sub = Subscriber(rig.proxy.port)
    subscribers.append(sub)
    return sub


def ask(rig: Rig, pool: ThreadPoolExecutor, timeout: float = WAIT, **extra: Any) -> Future[Any]:
    client = rig.anthropic().with_options(timeout=timeout)
    return pool.submit(
        lambda: client.messages.create(
            model="fake-1",
            max_tokens=64,
            tools=TOOLS,
            messages=[{"role": "user", "content": "ship it"}],
            **extra,
        )
    )


def test_hello_pending_decided_exchange_in_order(
    tmp_path: Path, pool: ThreadPoolExecutor, subscribers: list[Subscriber]
) -> None:
    with shielded(tmp_path, confirm=["deploy*"]) as rig:
        first = subscribe(rig, subscribers)
        hello = first.next("hello")
        assert (hello["proxy"], hello["shield"], hello["pending"]) == ("loom_core", True, [])
        rig.upstream.script(Reply(text="Deploying.", calls=[("t1", "deploy", {"env": "prod"})]))
        answer = ask(rig, pool)
        held = first.next("pending")
        listed = [p.model_dump(exclude_none=True) for p in ControlClient(rig.proxy.port).pending()]
        assert list(held) == ["id", "tool", "input", "rule", "age_s"]  # /pending's object
        assert [(c["id"], c["tool"], c["input"]) for c in listed] == [
            (held["id"], "deploy", {"env": "prod"})
        ]
        late = subscribe(rig, subscribers)  # a second subscriber learns of it in its hello
        assert [p["id"] for p in late.next("hello")["pending"]] == [held["id"]]
        assert not answer.done()
        ControlClient(rig.proxy.port).decide(held["id"], True, by="alice")
        answer.result(WAIT)
        for sub in (first, late):
            decided = sub.next("decided")
            exchange = sub.next("exchange")
        trace = rig.stop()
        [entry] = trace["shield_events"]
        assert (decided["id"], decided["decision"], decided["via"], decided["by"]) == (
            held["id"],
            "approve",
            "operator",
            "alice",
        )
        assert decided["shield_event"] == entry  # exactly what the trace recorded
        assert exchange == {
            "n": 0,
            "path": "/v1/messages",
            "dialect": "anthropic",
            "model": "fake-1",
            "shield_events": [entry],
            "effects": 1,
            "new_effects": 1,
            "exchanges": 1,
        }
        assert [e["event"] for e in first.seen] == ["hello", "pending", "decided", "exchange"]
        first.thread.join(WAIT)  # the proxy stopped: the stream ended cleanly
        assert first.ended == "closed" and late.ended == "closed"


def test_deny_reason_timeout_and_client_gone(
    tmp_path: Path, pool: ThreadPoolExecutor, subscribers: list[Subscriber]
) -> None:
    with shielded(tmp_path, confirm=["deploy*"]) as rig:
        sub = subscribe(rig, subscribers)
        sub.next("hello")
        rig.upstream.script(Reply(text="", calls=[("t1", "deploy", {"env": "prod"})]))
        answer = ask(rig, pool)
        held = sub.next("pending")
        ControlClient(rig.proxy.port).decide(held["id"], False, reason="frozen")
        answer.result(WAIT)
        decided = sub.next("decided")
        assert (decided["decision"], decided["reason"]) == ("deny", "frozen")
        assert decided["shield_event"]["reason"] == "frozen"
        assert sub.next("exchange")["shield_events"] == [decided["shield_event"]]

        rig.upstream.script(Reply(text="", calls=[("t2", "deploy", {"env": "dev"})]))
        with HangingUpAgent(rig.url) as agent:  # this agent gives up while the call is held
            held = sub.next("pending")
            agent.hang_up()
            decided = sub.next("decided")
        assert (decided["id"], decided["decision"], decided["shield_event"]) == (
            held["id"],
            "client-gone",
            None,
        )
        assert ControlClient(rig.proxy.port).pending() == []


def test_timeout_is_decided(
    tmp_path: Path, pool: ThreadPoolExecutor, subscribers: list[Subscriber]
) -> None:
    with shielded(tmp_path, confirm=["deploy*"], confirm_timeout=0.3) as rig:
        sub = subscribe(rig, subscribers)
        sub.next("hello")
        rig.upstream.script(Reply(text="", calls=[("t1", "deploy", {"env": "prod"})]))
        ask(rig, pool).result(WAIT)
        sub.next("pending")
        decided = sub.next("decided")
        assert (decided["decision"], decided["via"]) == ("timeout", "timeout")
        assert decided["shield_event"]["via"] == "timeout"


def _raw_get(port: int, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        conn.putrequest("GET", "/loom/events", skip_host="Host" in headers)
        for key, value in headers.items():
            conn.putheader(key, value)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def test_token_and_host_are_checked(tmp_path: Path) -> None:
    with shielded(tmp_path, confirm=["deploy*"]) as rig:
        port = rig.proxy.port
        token = ControlClient(port).token or ""
        assert _raw_get(port, {}) == (403, {"error": "missing or wrong x-loom-token header"})
        assert _raw_get(port, {"x-loom-token": "0" * 32})[0] == 403
        status, body = _raw_get(port, {"x-loom-token": token, "Host": "evil.example:80"})
        assert status == 403 and "loopback" in body["error"]
        with pytest.raises(NoEventStream) as refused:
            next(ControlClient(port, token="wrong").events())
        assert refused.value.status == 403


def test_without_a_shield_exchanges_stream_to_loopback(
    tmp_path: Path, subscribers: list[Subscriber]
) -> None:
    with start_rig(tmp_path) as rig:
        status, body = _raw_get(rig.proxy.port, {"Host": "attacker.test"})
        assert status == 403 and "loopback" in body["error"]
        sub = subscribe(rig, subscribers)
        assert sub.next("hello")["shield"] is False
        rig.upstream.script(Reply(text="hi"))
        rig.openai().chat.completions.create(
            model="gpt-fake", messages=[{"role": "user", "content": "hello"}]
        )
        exchange = sub.next("exchange")
        assert (exchange["dialect"], exchange["model"], exchange["shield_events"]) == (
            "openai",
            "gpt-fake",
            [],
        )


def test_keep_alive_comments_while_quiet(tmp_path: Path, subscribers: list[Subscriber]) -> None:
    with start_rig(tmp_path) as rig:
        rig.proxy.server.events.keepalive = 0.05
        sub = subscribe(rig, subscribers)  # comments are skipped by the client...
        sub.next("hello")
        with socket.create_connection(("127.0.0.1", rig.proxy.port), timeout=WAIT) as raw:
            raw.sendall(b"GET /loom/events HTTP/1.0\r\n\r\n")
            data = b""
            for _ in range(200):  # ...and sent on the wire while nothing happens
                data += raw.recv(4096)
                if data.count(b": keep-alive\n\n") >= 2:
                    break
            assert data.startswith(b"HTTP/1.0 200") and b"event: hello\n" in data
            assert data.count(b": keep-alive\n\n") >= 2
        rig.upstream.script(Reply(text="hi"))
        rig.anthropic().messages.create(
            model="fake-1", max_tokens=8, messages=[{"role": "user", "content": "x"}]
        )
        assert sub.next("exchange")["n"] == 0


def test_a_subscriber_that_never_reads_is_dropped(
    tmp_path: Path, subscribers: list[Subscriber]
) -> None:
    rig = shielded(tmp_path, deny=["bulk*"])
    hub = rig.proxy.server.events
    token = ControlClient(rig.proxy.port).token or ""
    healthy = subscribe(rig, subscribers)  # a reader with the default queue
    healthy.next("hello")
    hub.queue_size = 4  # subscribers from here on
    stuck = socket.socket()
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        stuck.connect(("127.0.0.1", rig.proxy.port))
        stuck.sendall(f"GET /loom/events HTTP/1.0\r\nx-loom-token: {token}\r\n\r\n".encode())
        wait_for(lambda: len(hub.subscribers) == 2, WAIT, "the stuck subscriber")
        client = rig.anthropic()
        blob = {"blob": "x" * 512_000}  # each deny event carries the call's input
        sent = 0
        while not hub.dropped and sent < 60:  # buffers fill, then its queue: dropped
            rig.upstream.script(Reply(text="", calls=[("t", "bulk", blob)]))
            client.messages.create(
                model="fake-1",
                max_tokens=8,
                tools=TOOLS,
                messages=[{"role": "user", "content": "go"}],
            )
            sent += 1
        assert hub.dropped == 1 and len(hub.subscribers) == 1
        got = [healthy.next("exchange")["n"] for _ in range(sent)]
        assert got == list(range(sent))  # the reader missed nothing meanwhile
    finally:
        stuck.close()
        rig.close()


def test_cancel_ends_the_stream_and_a_plain_server_has_none(tmp_path: Path) -> None:
    with start_rig(tmp_path) as rig:
        sub = Subscriber(rig.proxy.port)
        sub.next("hello")
        sub.stop()  # cancelled: the reader returns within a poll
        assert sub.ended == "closed"
        upstream_port = int(rig.upstream.url.rsplit(":", 1)[1])
        with pytest.raises(NoEventStream) as answer:  # loom-harness forwards it: a 404
            next(ControlClient(upstream_port, token="t").events())
        assert answer.value.status == 404
