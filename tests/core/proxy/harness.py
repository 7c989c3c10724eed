"""Test rig: fake upstream + our proxy on one background event loop, real SDK clients.

Why a loop in a thread: the SDK clients under test are the ordinary blocking ones
(what agents use); they block the test's thread, so the servers they talk to must
run elsewhere. The rig owns the thread, the loop and both servers, and stops all of
them (bounded joins) whatever the test did.
"""

from __future__ import annotations

import asyncio
import json
import threading
import warnings
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anthropic
import openai
from loom import Run

from loom_core.proxy.config import ProxyConfig
from loom_core.proxy.runner import RunningProxy, start_proxy
from tests.core.clis import loom
from tests.core.proxy.fake_upstream import FakeUpstream
from tests.core.proxy.fake_wire import Reply

T = TypeVar("T")
# Bounds, not expectations (CI shares two cores): a timeout that is not what a test is
# about must never fire before the events the test waits for, however loaded the machine.
# Both lie beyond the test's own limit (pytest-timeout, 300 s), which reports a stuck test
# with every thread's stack. (A CLI command took 9-11 s to start on the loaded CI machine.)
NEVER_S = 3600.0  # the confirm timeout of a test that decides each held call itself
CLIENT_S = 600.0  # an SDK client's read timeout: its call may be held while the test acts
ANTHROPIC_KEY = "sk-ant-api03-" + "K3yF0rT3sts" * 4
OPENAI_KEY = "sk-proj-" + "0penAiT3stK3y" * 4
KEYS = (ANTHROPIC_KEY, OPENAI_KEY)


class LoopThread:
    """An asyncio loop running in a daemon thread, stopped and joined by :meth:`close`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="proxy-test-loop", daemon=True
        )
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 20.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        assert not self.thread.is_alive(), "test loop did not stop"
        self.loop.close()


@contextmanager
def running_upstream(
    responder: Callable[[str, dict[str, Any]], Reply] | None = None,
) -> Iterator[FakeUpstream]:
    """A fake model API on 127.0.0.1, on its own loop thread; both stopped on exit.
    ``responder`` answers every unscripted call (a deterministic model)."""
    lt = LoopThread()
    fake = FakeUpstream()
    fake.responder = responder
    try:
        lt.run(fake.start())
        yield fake
    finally:
        try:
            lt.run(fake.stop())
        finally:
            lt.close()


@dataclass
class Rig:
    lt: LoopThread
    upstream: FakeUpstream
    proxy: RunningProxy
    tmp: Path

    @property
    def url(self) -> str:
        return self.proxy.url

    @property
    def save(self) -> Path:
        return Path(self.proxy.config.save)

    def anthropic(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            base_url=self.url, api_key=ANTHROPIC_KEY, max_retries=0, timeout=CLIENT_S
        )

    def openai(self) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=self.url + "/v1", api_key=OPENAI_KEY, max_retries=0, timeout=CLIENT_S
        )

    def stop(self) -> dict[str, Any]:
        """Finalize the proxy (as SIGINT would) and return the written trace."""
        self.lt.run(self.proxy.close())
        return json.loads(self.save.read_text())

    def close(self) -> None:
        try:
            self.lt.run(self.proxy.close())
            self.lt.run(self.upstream.stop())
        finally:
            self.lt.close()

    def __enter__(self) -> Rig:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def start_rig(tmp: Path, screen: Any = None, **overrides: Any) -> Rig:
    """Fake upstream + proxy (free port, fast background saves) on a new loop thread;
    ``overrides`` set :class:`ProxyConfig` fields, ``screen`` plugs a shield hook in."""
    lt = LoopThread()
    upstream = FakeUpstream()
    try:
        target = lt.run(upstream.start())
        config = ProxyConfig(
            port=0,
            target=target,
            save=str(tmp / "session.loom.json"),
            save_interval=0.2,
            upstream_timeout=5.0,
        )
        for name, value in overrides.items():
            setattr(config, name, value)
        proxy = lt.run(start_proxy(config, screen=screen))
    except BaseException:
        lt.run(upstream.stop())
        lt.close()
        raise
    return Rig(lt, upstream, proxy, tmp)


def loom_verifies(path: Path) -> Run:
    """loom-harness's checks: ``Run.load`` without warnings, ``trace verify``, ``timeline``."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = Run.load(str(path))
    verify = loom("trace", "verify", path)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    shown = loom("timeline", path)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    return run


def loom_accepts(path: Path) -> Run:
    """:func:`loom_verifies`, and ``loom replay`` prints the run's output."""
    run = loom_verifies(path)
    replayed = loom("replay", path)
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.strip() == run.output.strip()
    return run


def anthropic_agent(
    client: anthropic.Anthropic,
    messages: list[dict[str, Any]],
    results: dict[str, str],
    turns: int,
    **create: Any,
) -> None:
    """A tool loop as an agent runs it with the real client: each tool call is answered
    from ``results`` (by id) until a reply calls no tool; more than ``turns`` replies
    fail the test. ``create`` is passed to ``messages.create``."""
    for _ in range(turns):
        message = client.messages.create(messages=messages, **create)
        calls = [b for b in message.content if b.type == "tool_use"]
        if not calls:
            return
        messages.append(
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in message.content],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": c.id, "content": results[c.id]}
                    for c in calls
                ],
            }
        )
    raise AssertionError("agent did not finish")


def model_results(trace: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["result"] for e in trace["log"] if e["kind"] == "model"]


def grep_keys(folder: Path) -> list[str]:
    """Every file under ``folder`` that contains one of the test API keys."""
    hits = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path}: {key[:12]}…" for key in KEYS if key.encode() in data]
    return hits
