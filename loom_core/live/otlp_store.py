"""Where received spans go: one ``<trace_id>.otlp.jsonl`` file per trace, appended per batch.

Why one file per trace: a trace is one agent run, and a run is what the app opens as a tab
and follows as it grows. Why append (one OTLP JSON request per line, written in one call
and flushed): a reader tailing the file sees whole batches as they arrive, and a crash
loses at most the batch being written. A file that was already there when a trace first
arrived is never touched: the trace gets the next free name (``<trace_id>-2.otlp.jsonl``),
so we only ever append to files this store created.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

SUFFIX = ".otlp.jsonl"


class TraceStore:
    """Appends per-trace OTLP JSON requests under ``folder``; not thread-safe (the
    receiver's event loop is its only caller)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.paths: dict[str, Path] = {}  # trace id -> the file this store created for it
        self.spans = 0
        self.on_new_trace: Callable[[str, Path], None] | None = None
        self.on_append: Callable[[str, Path, int], None] | None = None

    def prepare(self) -> None:
        """Create the folder; an OSError (not a folder, no permission) names the cause."""
        self.folder.mkdir(parents=True, exist_ok=True)

    def append(self, trace_id: str, request: dict[str, Any], spans: int) -> Path:
        """Write ``request`` (one trace's spans) as one line of that trace's file."""
        line = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        path = self.paths.get(trace_id)
        new = path is None
        if path is None:
            path = self._create(trace_id)
        with open(path, "ab") as out:  # O_APPEND: each batch lands whole at the end
            out.write(line)
        self.spans += spans
        if new and self.on_new_trace is not None:
            self.on_new_trace(trace_id, path)
        if self.on_append is not None:
            self.on_append(trace_id, path, spans)
        return path

    def _create(self, trace_id: str) -> Path:
        """A new, empty file for ``trace_id`` under a name nothing else has (``x`` mode:
        an existing file is never opened for writing)."""
        for n in range(1, 10_000):
            path = self.folder / (f"{trace_id}{SUFFIX}" if n == 1 else f"{trace_id}-{n}{SUFFIX}")
            try:
                with open(path, "xb"):
                    pass
            except FileExistsError:
                continue
            self.paths[trace_id] = path
            return path
        raise OSError(f"{self.folder}: no free file name for trace {trace_id}")
