"""A big trace's effects, decoded a run of entries at a time when something asks for them.

Why: kept as one struct per effect, a big run's effects were 0.39× its file in memory
(100,000 effects: 39 MB beside the file's 99 MB; about 400 bytes in seven objects each),
on top of the file's own bytes their payloads point into. The progressive load already
cuts the log into runs of whole entries about a megabyte long and decodes each run as
one list; the timeline and the context are built from each run while it is decoded
(:mod:`loom_core.formats.progressive`), and afterwards an effect is decoded again from its
run's bytes when a view asks. A view asks for neighbours (the step list's page, a
context's newest messages), so the last few runs decoded are kept.

Reads are safe from several threads (the window, the text index's worker): the runs kept
change under a lock, and the run last read is one tuple swapped whole.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any, overload

import msgspec

from loom_core.formats.document import FastEffect
from loom_core.formats.entry_index import EntryIndex
from loom_core.formats.fastschema import list_of
from loom_core.formats.gc_pause import gc_paused

KEEP_RUNS = 8  # runs kept decoded (about a megabyte of the file each)
# a run of log entries (as the progressive load decodes each in place)
log_decoder: msgspec.json.Decoder[list[Any]] = msgspec.json.Decoder(list_of(FastEffect))


class LazyEffects(Sequence[Any]):
    """The effects of a trace whose log :attr:`at` indexes by runs of entries in ``source``.

    The load appends each run as it decodes it (:meth:`add_run`); an effect not in a kept
    run is decoded with its run from a copy of the run's bytes (a megabyte), so the
    structs of a run let go are freed with that copy."""

    def __init__(self, source: bytes, keep: int = KEEP_RUNS) -> None:
        self._source = source
        self._keep = keep
        self.at = EntryIndex([], [])  # the runs' byte ranges and first entries (raw_entry)
        self._n = 0
        self._kept: OrderedDict[int, list[Any]] = OrderedDict()
        self._lock = threading.Lock()
        self._last: tuple[list[Any], int, int] = ([], 0, 0)  # (run's effects, first, end)

    def add_run(self, span: tuple[int, int], effects: list[Any]) -> None:
        """The load's next run of entries (``span``: its bytes in ``source``), decoded."""
        with self._lock:
            self.at.ranges.append(span)
            self.at.firsts.append(self._n)
            self._n += len(effects)
            self._remember(len(self.at.ranges) - 1, effects)

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return self._slice(i)
        run, first, end = self._last
        if first <= i < end:
            return run[i - first]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("effect index out of range")
        r = bisect_right(self.at.firsts, i) - 1
        run = self._run(r)
        first = self.at.firsts[r]
        self._last = (run, first, first + len(run))
        return run[i - first]

    def __iter__(self) -> Iterator[Any]:
        """Every effect in order; runs not kept are decoded without being kept, so a
        walk over the whole run (the text index, an export) leaves a view's runs alone."""
        for r in range(len(self.at.ranges)):
            with self._lock:
                kept = self._kept.get(r)
            yield from kept if kept is not None else self._decode(r)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(other) == self._n and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # compared by value, like a list

    def __repr__(self) -> str:
        return f"LazyEffects({self._n} effects in {len(self.at.ranges)} runs)"

    def _slice(self, s: slice) -> list[Any]:
        start, stop, step = s.indices(self._n)
        if step != 1:
            return [self[i] for i in range(start, stop, step)]
        out: list[Any] = []
        firsts = self.at.firsts
        r = bisect_right(firsts, start) - 1
        while start < stop:
            run = self._run(r)
            first = firsts[r]
            take = run[start - first : stop - first]
            out.extend(take)
            start += len(take)
            r += 1
        return out

    def _run(self, r: int) -> list[Any]:
        with self._lock:
            run = self._kept.get(r)
            if run is not None:
                self._kept.move_to_end(r)
                return run
        run = self._decode(r)
        with self._lock:
            self._remember(r, run)
        return run

    def _remember(self, r: int, run: list[Any]) -> None:
        """Keep run ``r`` (the lock held), letting the least recently read go."""
        self._kept[r] = run
        self._kept.move_to_end(r)
        while len(self._kept) > self._keep:
            self._kept.popitem(last=False)

    def _decode(self, r: int) -> list[Any]:
        """Run ``r`` decoded from a copy of its bytes: the load decoded the same bytes, so
        this cannot fail unless the source changed, which a loaded document's never does."""
        a, b = self.at.ranges[r]
        data = b"".join((b"[", memoryview(self._source)[a:b], b"]"))
        with gc_paused():
            return log_decoder.decode(data)
