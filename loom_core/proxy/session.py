"""Persistence of one recording: journal, exchange sidecar, periodic trace, recovery.

Why three files (all named from ``--save``, see :class:`~.config.SessionPaths`):

* ``<base>.exchanges.jsonl`` (:mod:`.sidecar`) -- every exchange, requests as deltas:
  what the context view shows, and the full-fidelity crash-recovery source.
* ``<base>.journal.jsonl`` -- the §5 journal (header, then effect lines) that the
  desktop tails live and that ``loom watch`` / ``python -m loom_core convert`` read.
* ``--save`` -- the loom trace, rewritten atomically by a background task once
  exchanges pause (:data:`QUIET` seconds without one; at most every
  ``save_interval`` seconds, and at least every :data:`STALE` seconds under
  unbroken traffic), and on close; never on the request path (loom-harness's
  rewrite-per-exchange stalls grow with the trace), each entry serialized only once
  (:mod:`.tracefile`). Why in pauses: the trace is derived (the journal and the
  sidecar hold every exchange first, and recovery rebuilds the trace from the
  sidecar), and an agent waits seconds between calls, so the rewrite costs nobody
  anything there, while in a burst it would take CPU from the exchanges.

:meth:`RecordingSession.record` is synchronous and runs on the event loop: the
sidecar line, then the journal lines, each one ``write()`` handed to the OS before it
returns. The server calls it before the client gets the response's last byte (a JSON
body, a stream's final event), so a client that holds an answer knows it is on disk
(persist before answer, as loom-harness does). A write that fails (a full disk)
takes back whatever of the exchange was written, in the files and in memory, and
raises :class:`RecordError`: the client then gets an error, not an answer the
recording lacks. Order: sidecar, then journal, so when the desktop sees an effect its
request is already readable. Written means in the OS (survives ``kill -9``); no
fsync per line (power loss may lose the last lines).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import msgspec

from loom_core.formats.journal_writer import JournalWriter
from loom_core.formats.wire import WireRecorder
from loom_core.proxy import faults
from loom_core.proxy.config import SessionPaths
from loom_core.proxy.rawreq import RawRequest
from loom_core.proxy.recovery import recover_previous, safe_url
from loom_core.proxy.scrub import scrub_value
from loom_core.proxy.sidecar_writer import Delta, SidecarWriter
from loom_core.proxy.tracefile import TraceFile

SLICE = 4  # entries serialized per event-loop turn by the trace writer (~0.2 ms)
QUIET = 0.2  # seconds without an exchange before the trace is rewritten
STALE = 30.0  # ... or this long after the change it would otherwise wait for
FREEZE_EVERY = 2.0  # seconds between gc.freeze() calls (freeze_gc)
YOUNG_GC = 10_000  # young-generation threshold of a dedicated proxy process (freeze_gc)


WITHHELD = "loom proxy could not record this exchange, so it withholds the answer"


class RecordError(Exception):
    """An exchange could not be written (disk full, I/O error); none of it was kept."""

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(f"cannot write {path}: {cause}")
        self.cause = cause


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


def young_gc() -> None:
    """Collect the young generation after :data:`YOUNG_GC` net allocations, not 700.

    Why: an exchange allocates hundreds of short-lived objects, and the few dozen
    it keeps (its effects, its response) are frozen every :data:`FREEZE_EVERY`
    seconds. At Python's default each young collection re-scanned every exchange in
    flight, about every 35 exchanges: 14 us of CPU per exchange under load, against
    3 us at this threshold (gc callbacks, ``benchmarks/proxy_cpu.py`` load). Cyclic
    garbage waits a little longer; the process is only a proxy. Process-wide."""
    young, *older = gc.get_threshold()
    if 0 < young < YOUNG_GC:
        gc.set_threshold(YOUNG_GC, *older)


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
        if freeze_gc:
            young_gc()
        self.scrub = scrub
        self.save_interval = save_interval
        self.recovered = recover_previous(self.paths)
        self.recorder = WireRecorder()
        self.workspace: dict[str, Any] | None = None
        self.dialects: set[str] = set()
        self.paths.journal.write_bytes(b"")  # a new session: no stale effects to tail
        self.journal = JournalWriter(self.paths.journal)
        self.sidecar = SidecarWriter(self.paths.exchanges, safe_url(target), scrub)
        self.tracefile = TraceFile(self.paths.save)
        self._journal_started = False
        self._journal_episodes = 0  # episodes named by the journal's last header line
        self._dirty = asyncio.Event()
        self._stop = asyncio.Event()
        self._saver: asyncio.Task[None] | None = None
        self._closed = False
        self.complete = False  # closed with the trace written and the end marker after it
        self._last_record = 0.0  # time.monotonic() of the last exchange recorded
        self._frozen = 0.0  # ... of the last gc.freeze()
        # called with a summary of each recorded exchange (the event stream, .events);
        # a listener whose ``wanted`` attribute is false is skipped (nobody subscribes)
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
        request: dict[str, Any] | RawRequest,
        response: dict[str, Any],
        events: list[dict[str, Any]],
        ms: float,
        raw: bytes | None = None,
        delta: Delta | None = None,
    ) -> bool:
        """Append one completed exchange to every file; False if it is not shaped like
        its dialect (not recorded); :class:`RecordError` if it could not be written.
        ``raw``: the response's JSON as the client gets it, stored as it is; ``delta``:
        :meth:`delta` of this request, found earlier (used if it is still current)."""
        if self._closed:
            return False
        if self.scrub:
            plain = request.value() if isinstance(request, RawRequest) else request
            request = RawRequest.of(scrub_value(plain))
            response, events, raw = scrub_value(response), scrub_value(events), None
        elif isinstance(request, dict):
            request = RawRequest.of(request)
        if delta is None or delta.request is not request or not self.sidecar.current(delta):
            delta = self.sidecar.delta(path, request)
        mark = self.recorder.mark()
        n = mark.wire
        try:
            self.recorder.record(request, response, events, delta.known)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError) as err:
            self.recorder.rollback(mark)  # not shaped like its dialect: leave no half
            print(
                f"loom proxy: exchange not recorded ({type(err).__name__}: {err})",
                file=sys.stderr,
                flush=True,
            )
            return False
        new = self.recorder.log[mark.log :]
        faults.reached("record")
        stored = response if raw is None or b"\n" in raw or b"\r" in raw else msgspec.Raw(raw)
        try:
            self.sidecar.write(n, path, dialect, delta, stored, events, ms)
            faults.reached("sidecar")
            self._journal(new)
        except OSError as err:
            self.recorder.rollback(mark)
            raise RecordError(self.paths.exchanges, err) from err
        faults.reached("journal")
        self.dialects.add(dialect)
        self._last_record = now = time.monotonic()
        if self.freeze_gc and now - self._frozen > FREEZE_EVERY:
            # What was recorded lives until the end: take it out of the cyclic GC's
            # scans, whose full passes over a long session's objects stall the loop
            # for tens of ms. Process-wide, so only for a dedicated proxy process.
            gc.freeze()
            self._frozen = now
        self._dirty.set()
        if self.otlp is not None:  # a queue put: the spans are built on the sink's thread
            self.otlp.submit(path, dialect, request.value(), response, new, ms)
        if any(getattr(listener, "wanted", True) for listener in self.listeners):
            self._announce(n, path, dialect, request, events, mark.log)
        return True

    def delta(self, path: str, request: RawRequest) -> Delta | None:
        """``request`` against the last recorded request of its conversation, for a
        later :meth:`record` (None when scrubbing: the scrubbed request differs).

        Why ahead: the proxy finds it while the upstream works, off the client's wait;
        ``record`` finds it again only if another exchange of the conversation was
        recorded in between."""
        return None if self.scrub or self._closed else self.sidecar.delta(path, request)

    def _journal(self, new: list[dict[str, Any]]) -> None:
        """The exchange's journal lines in one write; else the sidecar line is taken back."""
        recorder, journal = self.recorder, self.journal
        episodes = recorder.episodes
        try:
            if not self._journal_started:
                journal.header(recorder.model, recorder.system, episodes, prefix=new)
                self._journal_started = True
            elif len(episodes) != self._journal_episodes:  # a later user prompt: tell the viewer
                journal.amend_header(recorder.model, recorder.system, episodes, new)
            else:
                journal.effects(new)  # one write for them all
        except BaseException:
            self.sidecar.undo()
            raise
        self._journal_episodes = len(episodes)

    def _announce(
        self,
        n: int,
        path: str,
        dialect: str,
        request: RawRequest,
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
            if not getattr(listener, "wanted", True):
                continue
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
        """Write the trace when something changed and exchanges pause (module docstring)."""
        while True:
            await self._dirty.wait()
            stale = time.monotonic() + STALE
            while not self._stop.is_set():
                wait = min(self._last_record + QUIET, stale) - time.monotonic()
                if wait <= 0:
                    break
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), wait)
            if self._stop.is_set():
                return
            self._dirty.clear()
            await self._save()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.save_interval)

    async def _save(self) -> bool:
        """Write the trace as it stands; False if it could not be written."""
        if self.recorder.wire:
            data = self.trace()
            while not self.tracefile.serialize_new(data, SLICE):
                await asyncio.sleep(0)  # let requests through between slices
            try:
                await asyncio.to_thread(self.tracefile.write_chunks, *self.tracefile.chunks(data))
            except OSError as err:
                print(
                    f"loom proxy: cannot write {self.paths.save}: {err}",
                    file=sys.stderr,
                    flush=True,
                )
                return False
        return True

    async def close(self, stopped_by: dict[str, Any] | None = None) -> None:
        """Final trace write, then the end marker (with ``stopped_by``: which signal,
        from whom) only if the trace was written (else the next start with the same
        ``--save`` recovers the trace), close files. Idempotent; :attr:`complete` says
        whether the trace is whole."""
        if self._closed:
            return
        self._stop.set()
        self._dirty.set()
        if self._saver is not None:
            await self._saver  # lets an in-flight write finish: no stale write after ours
        self._closed = True
        self.complete = await self._save()
        try:
            self.sidecar.close(clean=self.complete, stopped_by=stopped_by)
        except OSError as err:  # no end marker: the next start recovers the exchanges
            print(f"loom proxy: cannot finish {self.paths.exchanges}: {err}", file=sys.stderr)
            self.complete = False
        self.journal.close()

    def abandon(self) -> None:
        """Close the files without finalizing (tests simulating a crash)."""
        self._closed = True
        self.sidecar.close(clean=False)
        self.journal.close()
