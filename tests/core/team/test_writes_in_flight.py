"""The team library writes runs while the indexer reads the next ones (loom_core/library/pg_later.py).

A run's write is held inside its transaction (its steps' insert waits on an event) to see,
without timing anything, that :meth:`Indexer.store` returned before it was committed, that
the next run's write went on meanwhile, and that nothing is lost, reordered or hidden:
``flush`` waits for both, a path's writes stay in order, an error in flight is raised.
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg
import pytest

from loom_core.library import pg_runtext
from loom_core.library.extract import RunFacts, StepText
from loom_core.library.index import Indexer
from loom_core.library.pg_later import WritesInFlight
from loom_core.library.search import Library

WAIT_S = 30.0


def _run(word: str) -> tuple[RunFacts, list[StepText]]:
    rows = [StepText(0, f"asked about {word}", "bash", "main", "kmodel")]
    return RunFacts(format="trace", title=word, steps=1), rows


def _listed(url: str) -> dict[str, int]:
    """path -> id of the runs another connection sees (committed ones only)."""
    with psycopg.connect(url) as conn:
        return {str(p): int(i) for i, p in conn.execute("SELECT id, path FROM runs").fetchall()}


def _search(url: str, words: str) -> list[Any]:
    with Library(url) as lib:
        return lib.search(words)


class Gate:
    """Holds the steps' copy of the runs named in ``held`` until :meth:`open`."""

    def __init__(self, held: set[int]) -> None:
        self.held, self.started, self.calls = held, threading.Event(), 0
        self.second = threading.Event()  # a later run's insert began (the first is held)
        self._open = threading.Event()
        self._real = pg_runtext.send_steps

    def __call__(self, conn: Any, run: int, chunks: Any) -> Any:
        self.calls += 1
        if self.calls > 1:
            self.second.set()
        if self.calls in self.held:
            self.started.set()
            self._open.wait(WAIT_S)  # bounded: the old, one-at-a-time code goes on after it
        return self._real(conn, run, chunks)

    def open(self) -> None:
        self._open.set()


def test_a_run_is_written_while_the_next_is_handed_in_and_flush_waits_for_both(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(held={1})
    monkeypatch.setattr(pg_runtext, "send_steps", gate)
    indexer = Indexer(pg_url)
    try:
        indexer.store("/runs/a.loom.json", 1, 1_000_000_000, *_run("alpha"))
        assert gate.started.wait(WAIT_S)
        assert "/runs/a.loom.json" not in _listed(pg_url)  # returned before its commit
        indexer.store("/runs/b.loom.json", 1, 2_000_000_000, *_run("beta"))
        assert gate.second.wait(WAIT_S)  # b's write runs while a's is held
        gate.open()
        indexer.flush()
        listed = _listed(pg_url)
        assert listed["/runs/a.loom.json"] < listed["/runs/b.loom.json"]  # hand-in order
        assert [h.path for h in _search(pg_url, "alpha")] == ["/runs/a.loom.json"]
    finally:
        gate.open()
        indexer.close()


def test_a_write_that_fails_in_flight_is_raised_and_leaves_no_half_run(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = pg_runtext.send_steps

    def broken(conn: Any, run: int, chunks: Any) -> Any:
        if "beta" in chunks[0]:
            raise ValueError("a bug in the steps' copy")
        return real(conn, run, chunks)

    monkeypatch.setattr(pg_runtext, "send_steps", broken)
    indexer = Indexer(pg_url)
    try:
        with pytest.raises(ValueError, match="a bug"):
            indexer.store("/runs/a.loom.json", 1, 1_000_000_000, *_run("alpha"))
            indexer.store("/runs/b.loom.json", 1, 2_000_000_000, *_run("beta"))
            indexer.flush()
        indexer.flush()  # raised once
    finally:
        indexer.close()
    assert set(_listed(pg_url)) == {"/runs/a.loom.json"}  # b's transaction rolled back


def test_a_paths_writes_stay_in_order_and_at_most_writers_are_in_flight() -> None:
    flight = WritesInFlight(writers=2)
    done: list[str] = []
    running, most = [0], [0]
    lock, first_held = threading.Lock(), threading.Event()

    def write(name: str, hold: bool = False) -> Any:
        def run() -> None:
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            if hold:
                first_held.wait(WAIT_S)
            with lock:
                running[0] -= 1
                done.append(name)

        return run

    flight.submit("p", write("p1", hold=True))
    flight.submit("q", write("q1"))
    first_held.set()
    flight.submit("p", write("p2"))  # after p1, whatever the threads do
    for n in range(6):
        flight.submit(f"r{n}", write(f"r{n}"))
    flight.close()
    assert done.index("p1") < done.index("p2")
    assert sorted(done) == sorted(["p1", "p2", "q1", *(f"r{n}" for n in range(6))])
    assert most[0] <= 2
