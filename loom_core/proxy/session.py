"""Persistence of one recording: journal, exchange sidecar, periodic trace, recovery.

Why three files (all named from ``--save``, see :class:`~.config.SessionPaths`):

* ``<base>.exchanges.jsonl`` (:mod:`.sidecar`) -- every exchange, requests as deltas:
  what the context view shows, and the full-fidelity crash-recovery source.
* ``<base>.journal.jsonl`` -- the §5 journal (header, then effect lines) that the
  desktop tails live and that ``loom watch`` / ``python -m loom_core convert`` read.
* ``--save`` -- the loom trace, rewritten atomically by a background task at most
  every ``save_interval`` seconds while exchanges arrive, and on close; never on
  the request path (loom-harness's rewrite-per-exchange stalls grow with the trace),
  and each entry serialized only once (:mod:`.tracefile`).

:meth:`RecordingSession.record` is synchronous and runs on the event loop: both
lines are appended and flushed before it returns. The server calls it before a
stream's final event reaches the client, and right after a JSON answer's last byte
was handed to the kernel (off the client's wait), in the same handler step, so a
clean stop, which lets handlers finish, has every exchange it answered on disk
(a ``kill -9`` landing between that send and the record can lose that one
exchange). Order: sidecar, then journal, so when the desktop sees an effect its
request is already readable. Flushed means in the OS (survives ``kill -9``); no
fsync per line (power loss may lose the last lines).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from loom_core.formats.journal_writer import JournalWriter
from loom_core.formats.save import save_dict
from loom_core.formats.wire import WireRecorder
from loom_core.proxy.config import SessionPaths
from loom_core.proxy.scrub import scrub_value
from loom_core.proxy.sidecar import SidecarWriter, read_sidecar
from loom_core.proxy.tracefile import TraceFile

SLICE = 4  # entries serialized per event-loop turn by the trace writer (~0.2 ms)


class ExchangeSink(Protocol):
    """Takes each recorded exchange after it is on disk (:class:`.otlp_export.OtlpExport`);
    called on the event loop, so it must return at once."""

    def submit(
        self,
        path: str,
        dialect: str,
        request: dict[str, Any],
        response: dict[str, Any],
        effects: list[dict[str, Any]],
        ms: float,
    ) -> None: ...


class RecordingSession:
    """Turns completed exchanges into effects and keeps every file up to date."""

    def __init__(
        self,
        save: str | Path,
        target: str = "",
        scrub: bool = False,
        save_interval: float = 2.0,
        freeze_gc: bool = False,
    ) -> None:
        self.paths = SessionPaths.of(save)
        self.freeze_gc = freeze_gc
        self.scrub = scrub
        self.save_interval = save_interval
        self.recovered = recover_previous(self.paths)
        self.recorder = WireRecorder()
        self.workspace: dict[str, Any] | None = None
        self.dialects: set[str] = set()
        self.paths.journal.write_bytes(b"")  # a new session: no stale effects to tail
        self.journal = JournalWriter(self.paths.journal)
        self.sidecar = SidecarWriter(self.paths.exchanges, _safe_url(target), scrub)
        self.tracefile = TraceFile(self.paths.save)
        self._journal_started = False
        self._journal_episodes = 0  # episodes named by the journal's last header line
        self._dirty = asyncio.Event()
        self._stop = asyncio.Event()
        self._saver: asyncio.Task[None] | None = None
        self._closed = False
        # called with a summary of each recorded exchange (the event stream, .events)
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        # --otlp-endpoint (.otlp_export): gets each recorded exchange, builds spans elsewhere
        self.otlp: ExchangeSink | None = None

    @property
    def exchanges(self) -> int:
        return len(self.recorder.wire)

    def start(self) -> None:
        """Start the background trace writer (needs a running loop)."""
        if self._saver is None:
            self._saver = asyncio.get_running_loop().create_task(self._save_loop())

    def record(
        self,
        path: str,
        dialect: str,
        request: dict[str, Any],
        response: dict[str, Any],
        events: list[dict[str, Any]],
        ms: float,
    ) -> bool:
        """Append one completed exchange to every file; False if it could not be recorded."""
        if self._closed:
            return False
        if self.scrub:
            request, response, events = (
                scrub_value(request),
                scrub_value(response),
                scrub_value(events),
            )
        first_new = len(self.recorder.log)
        n = len(self.recorder.wire)
        try:
            self.recorder.record(request, response, events)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError) as err:
            del self.recorder.log[first_new:]  # not shaped like its dialect: leave no half
            print(
                f"loom proxy: exchange not recorded ({type(err).__name__}: {err})",
                file=sys.stderr,
                flush=True,
            )
            return False
        self.dialects.add(dialect)
        self.sidecar.exchange(n, path, dialect, request, response, events, ms)
        episodes = self.recorder.episodes
        if not self._journal_started:
            self._journal_started = True
            self.journal.header(self.recorder.model, self.recorder.system, episodes)
        elif len(episodes) != self._journal_episodes:  # a later user prompt: tell the viewer
            self.journal.amend_header(self.recorder.model, self.recorder.system, episodes)
        self._journal_episodes = len(episodes)
        self.journal.effects(self.recorder.log[first_new:])  # one write for them all
        self._dirty.set()
        if self.otlp is not None:  # a queue put: the spans are built on the sink's thread
            self.otlp.submit(path, dialect, request, response, self.recorder.log[first_new:], ms)
        if self.listeners:
            self._announce(n, path, dialect, request, events, first_new)
        return True

    def _announce(
        self,
        n: int,
        path: str,
        dialect: str,
        request: dict[str, Any],
        events: list[dict[str, Any]],
        first_new: int,
    ) -> None:
        """Tell listeners about a recorded exchange; a failing listener never undoes it."""
        total = len(self.recorder.log)
        summary = {
            "n": n,
            "path": path,
            "dialect": dialect,
            "model": str(request.get("model") or self.recorder.model or ""),
            "shield_events": events,
            "effects": total,
            "new_effects": total - first_new,
            "exchanges": n + 1,
        }
        for listener in list(self.listeners):
            try:
                listener(summary)
            except Exception as err:  # noqa: BLE001 - the exchange is on disk already
                print(
                    f"loom proxy: exchange listener failed ({type(err).__name__}: {err})",
                    file=sys.stderr,
                    flush=True,
                )

    def trace(self) -> dict[str, Any]:
        """The trace as it stands (a snapshot: later exchanges do not change it)."""
        data = self.recorder.to_trace()
        if self.workspace is not None:
            data["workspace"] = dict(self.workspace)
        return data

    async def _save_loop(self) -> None:
        """Write the trace when something changed, at most every ``save_interval`` s."""
        while True:
            await self._dirty.wait()
            if self._stop.is_set():
                return
            self._dirty.clear()
            await self._save()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.save_interval)

    async def _save(self) -> None:
        if self.recorder.wire:
            data = self.trace()
            while not self.tracefile.serialize_new(data, SLICE):
                await asyncio.sleep(0)  # let requests through between slices
            if self.freeze_gc:
                # What was recorded lives until the end: take it out of the cyclic GC's
                # scans, whose full passes over a long session's objects stall the loop
                # for tens of ms. Process-wide, so only for a dedicated proxy process.
                gc.freeze()
            try:
                await asyncio.to_thread(self.tracefile.write_chunks, *self.tracefile.chunks(data))
            except OSError as err:
                print(
                    f"loom proxy: cannot write {self.paths.save}: {err}",
                    file=sys.stderr,
                    flush=True,
                )

    async def close(self, stopped_by: dict[str, Any] | None = None) -> None:
        """Final trace write, end marker (with ``stopped_by``: which signal, from whom),
        close files. Idempotent."""
        if self._closed:
            return
        self._stop.set()
        self._dirty.set()
        if self._saver is not None:
            await self._saver  # lets an in-flight write finish: no stale write after ours
        self._closed = True
        await self._save()
        self.sidecar.close(clean=True, stopped_by=stopped_by)
        self.journal.close()

    def abandon(self) -> None:
        """Close the files without finalizing (tests simulating a crash)."""
        self._closed = True
        self.sidecar.close(clean=False)
        self.journal.close()


def check_save(paths: SessionPaths, force: bool) -> None:
    """ValueError when ``--save`` names an existing trace, unless ``force``: a new session
    would replace it. A crashed session's trace is the exception: recovery first saves
    its exchanges aside (``.recovered``), so restarting with the same ``--save`` loses nothing."""
    if force or not paths.save.exists() or _crashed(paths):
        return
    raise ValueError(
        f"{paths.save}: already exists; nothing was written (pass --force to "
        "replace it, or choose another --save)"
    )


def _crashed(paths: SessionPaths) -> bool:
    try:
        previous = read_sidecar(paths.exchanges) if paths.exchanges.exists() else None
    except OSError:
        return False
    return previous is not None and not previous.ended and bool(previous.exchanges)


def recover_previous(paths: SessionPaths) -> Path | None:
    """A crashed session with the same ``--save`` -> ``<base>.recovered.loom.json``."""
    if not paths.exchanges.exists():
        return None
    try:
        previous = read_sidecar(paths.exchanges)
    except OSError:
        return None
    if previous.ended or not previous.exchanges:
        return None
    recorder = WireRecorder()
    for x in previous.exchanges:
        with contextlib.suppress(TypeError, AttributeError, KeyError, IndexError, ValueError):
            recorder.record(x.request, x.response, x.shield_events)
    target = _unused(paths.recovered)
    save_dict(recorder.to_trace(), target)
    print(
        f"loom: recovered a crashed session's {len(recorder.wire)} exchange(s) -> {target}",
        file=sys.stderr,
        flush=True,
    )
    return target


def _unused(path: Path) -> Path:
    """``path``, or ``name-2``, ``name-3``… when it exists (never clobber a recovery)."""
    if not path.exists():
        return path
    stem, suffix = (
        (str(path)[: -len(".loom.json")], ".loom.json")
        if str(path).endswith(".loom.json")
        else (str(path), "")
    )
    for i in range(2, 10_000):
        candidate = Path(f"{stem}-{i}{suffix}")
        if not candidate.exists():
            return candidate
    raise FileExistsError(path)


def _safe_url(url: str) -> str:
    """The target without userinfo or query (they may hold credentials)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
