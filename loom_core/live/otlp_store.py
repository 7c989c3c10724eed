"""Where received spans go: one ``<trace_id>.otlp.jsonl`` file per trace, appended per batch.

Why one file per trace: a trace is one agent run, and a run is what the app opens as a tab
and follows as it grows. Why append (one OTLP JSON request per line, written in one call
and flushed): a reader tailing the file sees whole batches as they arrive, and a crash
loses at most the batch being written. A file that was already there when a trace first
arrived is never touched: the trace gets the next free name (``<trace_id>-2.otlp.jsonl``),
so we only ever append to files this store created.

One exception to one-file-per-trace: an agent whose only instrumentation is its SDK
client (OpenInference or OpenLLMetry around ``openai``, with no span around the loop)
makes every model call a trace of its own, whose root is the model call itself. Such a
"bare" trace is filed with the bare traces that came before it from the same resource
(the same service and SDK) if the last one came less than :data:`GROUP_GAP` seconds ago,
so the agent's calls are one run in one file (the OTLP reader reads bare traces in one
file as one run) instead of a tab per call.

Log records (``POST /v1/logs``: GenAI content in OpenLLMetry's event mode) go into the
file of their trace, as ``resourceLogs`` lines the OTLP reader joins to the spans. Records
of a trace whose spans have not come yet wait in memory, and are written with its first
spans (a log batch is usually sent before the batch of the spans it belongs to). Records
with no trace id (emitted with no span current) go with the spans that come next, or into
the file that last got spans if that was less than :data:`GROUP_GAP` ago: only a bare run,
which has no span around its calls, emits them. What still waits when the store closes is
written to ``<trace_id>.logs.otlp.jsonl`` (``untraced.logs.otlp.jsonl``), never dropped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loom_core.formats.otlp_decode import OtlpDecodeError, from_json_value
from loom_core.formats.otlp_genai import role_of

SUFFIX = ".otlp.jsonl"
GROUP_GAP = 120.0  # seconds: bare traces further apart than this start a new run


def bare_key(request: dict[str, Any]) -> str | None:
    """The resource a bare trace came from (as canonical JSON), or None when the request's
    spans hold no root that is itself a model or tool call (see the module docstring)."""
    try:
        spans = from_json_value(request)
    except OtlpDecodeError:
        return None
    roots = [s for s in spans if not s.parent_id and role_of(s) in ("model", "tool")]
    if not roots:
        return None
    return json.dumps(roots[0].resource, sort_keys=True, default=str)


class TraceStore:
    """Appends per-trace OTLP JSON requests under ``folder``; not thread-safe (the
    receiver's event loop is its only caller)."""

    def __init__(self, folder: str | Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.folder = Path(folder)
        self.paths: dict[str, Path] = {}  # trace id -> the file it is appended to
        self.files: list[Path] = []  # the files this store created, in order
        self._bare: dict[str, tuple[Path, float]] = {}  # resource -> (its bare run, last seen)
        self._clock = clock
        self.spans = 0
        self.on_new_trace: Callable[[str, Path], None] | None = None
        self.on_append: Callable[[str, Path, int], None] | None = None
        self._waiting: dict[str, list[bytes]] = {}  # trace id ("": none) -> log lines
        self._last: tuple[Path, float] | None = None  # the file that last got spans, when

    def prepare(self) -> None:
        """Create the folder; an OSError (not a folder, no permission) names the cause."""
        self.folder.mkdir(parents=True, exist_ok=True)

    def append(self, trace_id: str, request: dict[str, Any], spans: int) -> Path:
        """Write ``request`` (one trace's spans) as one line of that trace's file."""
        path = self.paths.get(trace_id)
        new = False
        if path is None:
            path, new = self._file_for(trace_id, request)
        waiting = self._waiting.pop(trace_id, []) + self._waiting.pop("", [])
        with open(path, "ab") as out:  # O_APPEND: each batch lands whole at the end
            out.write(b"".join([_line(request), *waiting]))
        self._last = (path, self._clock())
        self.spans += spans
        if new and self.on_new_trace is not None:
            self.on_new_trace(trace_id, path)
        if self.on_append is not None:
            self.on_append(trace_id, path, spans)
        return path

    def append_logs(self, trace_id: str, request: dict[str, Any]) -> Path | None:
        """Write ``request`` (one trace's log records; ``trace_id`` "" for records with
        none) into the trace's file, or keep it until that file exists (module docstring).
        Returns the file written, or None when the records wait."""
        path = self.paths.get(trace_id) if trace_id else None
        recent = self._last is not None and self._clock() - self._last[1] < GROUP_GAP
        if path is None and not trace_id and recent and self._last is not None:
            path = self._last[0]
        if path is None:
            self._waiting.setdefault(trace_id, []).append(_line(request))
            return None
        with open(path, "ab") as out:
            out.write(_line(request))
        return path

    def close(self) -> list[Path]:
        """Write the log records still waiting for their spans to files of their own."""
        written = []
        for trace_id, lines in self._waiting.items():
            path = self._create(trace_id or "untraced", ".logs.otlp.jsonl", own=False)
            with open(path, "ab") as out:
                out.write(b"".join(lines))
            written.append(path)
        self._waiting.clear()
        return written

    def _file_for(self, trace_id: str, request: dict[str, Any]) -> tuple[Path, bool]:
        """The file a trace's first batch goes to, and whether it is a new one."""
        key = bare_key(request)
        now = self._clock()
        if key is not None and key in self._bare and now - self._bare[key][1] < GROUP_GAP:
            path, new = self._bare[key][0], False
            self.paths[trace_id] = path
        else:
            path, new = self._create(trace_id), True
        if key is not None:
            self._bare[key] = (path, now)
        return path, new

    def _create(self, trace_id: str, suffix: str = SUFFIX, own: bool = True) -> Path:
        """A new, empty file for ``trace_id`` under a name nothing else has (``x`` mode:
        an existing file is never opened for writing); ``own``: the trace's run file."""
        for n in range(1, 10_000):
            path = self.folder / (f"{trace_id}{suffix}" if n == 1 else f"{trace_id}-{n}{suffix}")
            try:
                with open(path, "xb"):
                    pass
            except FileExistsError:
                continue
            if own:
                self.paths[trace_id] = path
            self.files.append(path)
            return path
        raise OSError(f"{self.folder}: no free file name for trace {trace_id}")


def _line(request: dict[str, Any]) -> bytes:
    """One request as one line of OTLP JSON."""
    return json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
