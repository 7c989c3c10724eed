"""Helpers for the live-journal tests: synthetic lines, a consumer mirror, bounded waits.

Why a mirror: the tailer's contract is the *stream of updates*, so the tests apply
the updates the way the desktop will (drop everything on ``rewritten``, append
``new_entries``, take ``header`` / ``unfinished`` as current) and compare the
result with a full ``load()`` of the file. Comparing the tailer's own state from
another thread would race and would not test the protocol.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loom_core.formats.loader import load
from loom_core.live.follow import JournalUpdate


def header(*episodes: str, model: str = "scripted", system: str = "You test.") -> bytes:
    return (
        json.dumps(
            {
                "type": "header",
                "version": 1,
                "model": model,
                "system": system,
                "episodes": list(episodes),
            }
        )
        + "\n"
    ).encode()


def intent(seq: int, kind: str, depth: int = 0) -> bytes:
    return (
        json.dumps(
            {"type": "intent", "seq": seq, "kind": kind, "key": f"{seq:012x}", "depth": depth}
        )
        + "\n"
    ).encode()


def effect(seq: int, kind: str, result: Any, depth: int = 0) -> bytes:
    return (
        json.dumps(
            {
                "type": "effect",
                "seq": seq,
                "kind": kind,
                "key": f"{seq:012x}",
                "result": result,
                "depth": depth,
            }
        )
        + "\n"
    ).encode()


def model_result(text: str, calls: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "text": text,
        "tool_calls": [{"id": f"c{i}", "name": n, "input": {}} for i, n in enumerate(calls)],
        "stop_reason": "tool_use" if calls else "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }


def tool_pairs(start: int, count: int, name: str = "tick") -> list[bytes]:
    """``count`` tool effects from seq ``start``, each preceded by its intent."""
    out = []
    for seq in range(start, start + count):
        out += [intent(seq, f"tool:{name}"), effect(seq, f"tool:{name}", f"{name} {seq} ok")]
    return out


class Mirror:
    """A consumer that applies updates like the desktop's model does (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: list[bytes] = []
        self.header: dict[str, Any] | None = None
        self.unfinished: list[tuple[int, str, int]] = []
        self.statuses: list[str] = []
        self.updates: list[JournalUpdate] = []
        self.rewrites = 0
        self.torn = False
        self.exists = False
        self.error: str | None = None
        self.problems: list[str] = []

    def __call__(self, update: JournalUpdate) -> None:
        with self.lock:
            if update.rewritten:
                self.entries.clear()
                self.rewrites += 1
            self.entries += [bytes(raw) for raw in update.new_entries]
            if len(self.entries) != update.total_effects:
                self.problems.append(f"out of step: {len(self.entries)} != {update.total_effects}")
            self.header = update.header
            self.unfinished = [(u.seq, u.kind, u.depth) for u in update.unfinished]
            self.statuses.append(update.status)
            self.updates.append(update)
            self.torn, self.exists, self.error = update.torn, update.exists, update.error

    @property
    def status(self) -> str | None:
        with self.lock:
            return self.statuses[-1] if self.statuses else None

    def matches(self, path: Path) -> bool:
        """Whether the mirror holds exactly what a full load of ``path`` holds."""
        try:
            doc = load(path)
        except Exception:  # mid-write or missing: not (yet) comparable
            return False
        with self.lock:
            return (
                self.entries == [bytes(raw) for raw in doc.entries]
                and self.unfinished == [(u.seq, u.kind, u.depth) for u in doc.unfinished]
                and self.header is not None
                and self.header.get("episodes") == doc.episodes
                and self.header.get("model") == doc.header.model
            )


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    """Poll ``condition`` (at most ``timeout`` seconds and 3,000 times); fail naming ``what``."""
    deadline = time.monotonic() + timeout
    for _ in range(3000):
        if condition():
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.005)
    raise AssertionError(f"timed out waiting for: {what}")


class WriterThread:
    """A thread that performs write steps handed to it, one at a time (the test owns it)."""

    def __init__(self) -> None:
        self._steps: list[Callable[[], None]] = []
        self._ready = threading.Condition()
        self._done = 0
        self._closed = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="test-writer", daemon=True)
        self._thread.start()

    def run(self, step: Callable[[], None], timeout: float = 15.0) -> None:
        """Hand ``step`` to the writer and wait until it is done."""
        with self._ready:
            self._steps.append(step)
            target = self._done + len(self._steps)
            self._ready.notify_all()
            if not self._ready.wait_for(
                lambda: self._done >= target or self._error is not None, timeout
            ):
                raise AssertionError("writer step timed out")
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify_all()
        self._thread.join(15)

    def _run(self) -> None:
        for _ in range(10_000):  # bounded; ends on close() or after 30 s without a step
            with self._ready:
                self._ready.wait_for(lambda: self._steps or self._closed, 30)
                if not self._steps:
                    return
                step = self._steps.pop(0)
            try:
                step()
            except BaseException as err:  # reported to the test thread
                self._error = err
            with self._ready:
                self._done += 1
                self._ready.notify_all()
