"""Index a big run in a child process, so the app that asked pays neither its memory nor its CPU.

Why: indexing loads the run a second time to extract its text. Inside the desktop's process
that doubled the memory of a 1 GB run and held the interpreter lock for seconds while the
user scrubbed (a 1M-effect run's scrub p99 went from 0.25 s to 1.2 s). A child process runs
``loom_core runs --library DB index PATH`` instead and writes the same database (SQLite's
busy timeout serialises it with this process's writer, which waits for the child anyway).

Ownership: the worker thread that calls :meth:`ChildIndexing.__call__` owns the child;
:meth:`ChildIndexing.stop` (from any thread) makes it terminate the child and return.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable

OFFLOAD_BYTES = 16 << 20  # runs at least this big are indexed in a child
CHILD_LIMIT_S = 1800.0  # a child indexing longer than this is stopped and the run marked

# (database path, run path) -> the child's argv; the desktop builds it (frozen or not)
Spawn = Callable[[str, str], list[str]]


class ChildIndexing:
    """``Indexer.offload``: index ``path`` in a child when it is big (see the module docstring)."""

    def __init__(self, spawn: Spawn, db: str, min_bytes: int = OFFLOAD_BYTES) -> None:
        self.spawn, self.db, self.min_bytes = spawn, db, min_bytes
        self.children = 0  # how many runs went to a child (tests, progress)
        self._stopping = threading.Event()

    def stop(self) -> None:
        self._stopping.set()

    def __call__(self, path: str, size: int) -> str | None:
        """None: small, index it here; "": the child indexed it; else why it could not."""
        if size < self.min_bytes or self._stopping.is_set():
            return None
        try:
            child = subprocess.Popen(
                self.spawn(self.db, path),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except OSError as err:
            return f"cannot start the indexing process ({err.strerror or err})"
        self.children += 1
        return self._wait(child)

    def _wait(self, child: subprocess.Popen[bytes]) -> str:
        waited = 0.0
        try:
            while child.poll() is None:  # bounded: CHILD_LIMIT_S, or stop()
                if self._stopping.is_set() or waited >= CHILD_LIMIT_S:
                    child.terminate()
                    try:
                        child.wait(10)
                    except subprocess.TimeoutExpired:
                        child.kill()
                        child.wait(10)
                    return "" if self._stopping.is_set() else "indexing took too long"
                try:
                    child.wait(0.2)
                except subprocess.TimeoutExpired:
                    waited += 0.2
            assert child.stderr is not None
            err = child.stderr.read().decode("utf-8", "replace").strip().splitlines()
        finally:
            if child.stderr is not None:
                child.stderr.close()
        if child.returncode == 0:
            return ""
        return (err[-1] if err else "") or f"the indexing process failed (exit {child.returncode})"
