"""Write durable-run journals in loom-harness's exact shape (loom-format.md §5.1).

Why our own writer: runs recorded by our side (the proxy, tests, benchmarks) must
be files that loom-harness's ``Run.recover`` and ``loom watch`` read like their
own, and that our tailer follows live. So every line is what loom-harness's
``Journal`` writes: one compact ``json.dumps`` object (default ``", "`` / ``": "``
separators, ASCII escapes, members in the harness's order), ``\\n``-terminated and
flushed before the call returns -- the intent *before* a side effect runs, the
effect *after* it completed, so a crash in between leaves the unfinished intent
that recovery refuses to silently re-execute. ``fsync=True`` also forces each line
to the disk (survives power loss, costs a disk flush per line). A write that fails
(a full disk) raises ``OSError`` and leaves the journal as it was, no torn line
(:mod:`.append_file`); :attr:`JournalWriter.size` and :meth:`JournalWriter.cut`
let a caller that wrote other files too take its lines back.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any

from loom_core.formats.append_file import AppendFile
from loom_core.formats.fastdumps import dumps
from loom_core.formats.structs import JOURNAL_VERSION

_EFFECT_ORDER = ("seq", "kind", "key", "result", "depth")


def effect_line(entry: Mapping[str, Any]) -> dict[str, Any]:
    """An effect entry as a journal line: ``type, seq, kind, key, result, depth[, meta]``.

    Missing members get loom-harness's reader defaults; ``meta`` is omitted when empty,
    as ``EffectEntry.to_dict`` does; members loom does not know are kept, last.
    """
    if "seq" not in entry or "kind" not in entry:
        raise ValueError("an effect needs at least 'seq' and 'kind'")
    line: dict[str, Any] = {
        "type": "effect",
        "seq": entry["seq"],
        "kind": entry["kind"],
        "key": entry.get("key", ""),
        "result": entry.get("result"),
        "depth": entry.get("depth", 0),
    }
    if entry.get("meta"):
        line["meta"] = entry["meta"]
    line.update(
        (k, v) for k, v in entry.items() if k not in _EFFECT_ORDER and k not in ("meta", "type")
    )
    return line


class JournalWriter:
    """Appends one run's journal; :meth:`header` starts (truncates) it.

    Thread-safe: lines from several threads never interleave. A context manager;
    :meth:`close` is idempotent.
    """

    def __init__(self, path: str | os.PathLike[str], fsync: bool = False) -> None:
        self.path = os.fspath(path)
        self.fsync = fsync
        self._file: AppendFile | None = None
        self._closed = False
        self._lock = threading.Lock()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def header(
        self,
        model: Any,
        system: str,
        episodes: Iterable[str],
        prefix: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        """(Re)start the journal: truncate, write the header and any replayed prefix.

        loom-harness does this at the start of every live run (run, ask, resume,
        recover, fork); the prefix effects get no intents (they are not executed again).
        """
        head = _header(model, system, episodes)
        with self._lock:
            if self._closed:
                raise ValueError(f"{self.path}: journal writer is closed")
            if self._file is not None:
                self._file.close()
            self._file = AppendFile(self.path, truncate=True, fsync=self.fsync)
            lines = [head, *(effect_line(e) for e in prefix)]
            self._file.append(b"".join(_encode(line) for line in lines))

    def amend_header(
        self,
        model: Any,
        system: str,
        episodes: Iterable[str],
        effects: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        """Append a newer header (say, with a later user prompt) without truncating,
        then ``effects`` (all in one write).

        Why not :meth:`header`: a recording proxy learns episodes as the run goes and
        must not lose the effects already on disk. Readers keep the last header they
        read and every effect line (loom-harness's reader does the same), so a live
        viewer picks the new episodes up while nothing recorded is rewritten.
        """
        head = _header(model, system, episodes)
        self._append_bytes(_encode(head) + b"".join(_encode(effect_line(e)) for e in effects))

    def intent(self, seq: int, kind: str, key: str, depth: int = 0) -> None:
        """Declare that effect ``seq`` is about to run; on disk before this returns."""
        self._append({"type": "intent", "seq": seq, "kind": kind, "key": key, "depth": depth})

    def effect(self, entry: Mapping[str, Any]) -> None:
        """Record a completed effect (an EffectEntry as a dict); on disk before this returns."""
        self._append(effect_line(entry))

    def effects(self, entries: Iterable[Mapping[str, Any]]) -> None:
        """Record several completed effects with one write (one system call, not one
        per line -- a recording proxy's exchange often adds a tool result and a model
        call); the same bytes as :meth:`effect` per entry, all on disk before this returns."""
        data = b"".join(_encode(effect_line(entry)) for entry in entries)
        if data:
            self._append_bytes(data)

    @property
    def size(self) -> int:
        """Bytes of complete lines written so far (a mark for :meth:`cut`)."""
        with self._lock:
            return self._file.size if self._file is not None else 0

    def cut(self, size: int) -> None:
        """Take back every line written after :attr:`size` was ``size``."""
        with self._lock:
            if self._file is not None:
                self._file.cut(size)

    def close(self) -> None:
        """Release the file; every line is already flushed, so nothing changes on disk."""
        with self._lock:
            self._closed = True
            if self._file is not None:
                self._file.close()
                self._file = None

    def _append(self, line: dict[str, Any]) -> None:
        self._append_bytes(_encode(line))

    def _append_bytes(self, data: bytes) -> None:
        with self._lock:
            if self._file is None:
                raise ValueError(
                    f"{self.path}: write the header first"
                    if not self._closed
                    else f"{self.path}: journal writer is closed"
                )
            self._file.append(data)


def _header(model: Any, system: str, episodes: Iterable[str]) -> dict[str, Any]:
    """A header line, members in loom-harness's order."""
    return {
        "type": "header",
        "version": JOURNAL_VERSION,
        "model": model,
        "system": system,
        "episodes": list(episodes),
    }


def _encode(line: dict[str, Any]) -> bytes:
    """``json.dumps`` with its defaults (what loom-harness writes), plus the newline
    (:func:`.fastdumps.dumps`: the same bytes, in C where the line allows)."""
    return dumps(line) + b"\n"
