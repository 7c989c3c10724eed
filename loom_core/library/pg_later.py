"""Runs written to the team library while the indexer reads the next ones: writes in flight.

Why: with one run written at a time, the indexer waited for the server while PostgreSQL
parsed the run's words and filled its indexes (two thirds of a step's time), then the
server waited while the indexer read the next run; and the server's work of one
connection is one process, on one core. With :data:`WRITERS` runs in flight on the pool's
connections, reading and writing overlap, and the server's work spreads over its cores.
SQLite takes one writer at a time, so its library writes as before.

What stays as it was, so nothing is written twice, lost or seen out of order:

- each run is still one transaction, retried through a dropped connection or a restart
  (:meth:`~.pg_conn.PgConnections.retry`);
- a path's writes stay in order: anything done to a path waits for its write in flight;
- a reader waits for what it could see: a question about one path for that path's write,
  anything else (a search, a page, a folder's paths) for every write in flight;
- at most :data:`WRITERS` runs are in flight, so memory stays bounded;
- an error of a write in flight is raised by the next call that waits (the same path's
  next question, the end of an index pass, :meth:`flush`, closing), never dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

# runs in flight: the pool holds POOL_MAX connections, two stay for reads. Four, not two:
# a writer thread needs the interpreter lock back after each of its statements, and the
# indexer's thread, busy making the next run's rows, gives it up only every few ms
# (sys.getswitchinterval), so each write spends most of its time waiting; four keep the
# server busy through those waits (300 runs x 1,000 steps, quiet: 45,000 -> 49,000 steps/s)
WRITERS = 4


class WritesInFlight:
    """Write operations handed to :data:`WRITERS` threads (see the module docstring)."""

    def __init__(self, writers: int = WRITERS) -> None:
        self._writers = writers
        self._pool: ThreadPoolExecutor | None = None
        self._flight: dict[str, Future[None]] = {}  # path -> its write, in hand-in order
        self._lock = threading.Lock()

    def submit(self, path: str, write: Callable[[], None]) -> None:
        """Run ``write`` (the write of ``path``) on a writer thread, after the path's
        write in flight; waits while :data:`WRITERS` writes are in flight."""
        self.wait(path)
        while True:
            with self._lock:
                busy = list(self._flight.values())
            if len(busy) < self._writers:
                break
            wait(busy, return_when=FIRST_COMPLETED)
            self._reap()
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._writers, thread_name_prefix="library-write")
            self._flight[path] = self._pool.submit(write)

    def wait(self, path: str | None = None) -> None:
        """Wait for the write of ``path`` in flight (None: every write); raise the first
        error of any write that ended."""
        with self._lock:
            waited = list(self._flight.values()) if path is None else [self._flight.get(path)]
        wait([f for f in waited if f is not None])
        self._reap()

    def close(self) -> None:
        """Wait for every write, stop the threads; the first error raised after both."""
        try:
            self.wait()
        finally:
            with self._lock:
                pool, self._pool = self._pool, None
            if pool is not None:
                pool.shutdown(wait=True)

    def _reap(self) -> None:
        """Forget the writes that ended; raise the first one's error (the others' are
        raised by the next call, in turn)."""
        failed: BaseException | None = None
        with self._lock:
            for path, future in list(self._flight.items()):
                if not future.done():
                    continue
                error = future.exception()
                if error is not None and failed is not None:
                    continue  # kept in flight: the next call raises it
                del self._flight[path]
                failed = failed or error
        if failed is not None:
            raise failed
