"""A big trace's effects, decoded a block of entries at a time when something asks for them.

Why: kept as one struct per effect, a big run's effects were 0.39× its file in memory
(100,000 effects: 39 MB beside the file's 99 MB; about 400 bytes in seven objects each),
on top of the file's own bytes their payloads point into. The progressive load already
cuts the log into runs of whole entries about a megabyte long and decodes each run as
one list; the timeline and the context are built from a few runs at a time while they
are decoded (:mod:`loom_core.formats.progressive`), and afterwards an effect is decoded
again, with the block of entries around it, when a view asks. A view asks for
neighbours (the step list's page, a context's newest messages), so the blocks last read
are kept.

Reads are safe from several threads (the window, the text index's worker): the blocks
kept change under a lock, and the block last read is one tuple swapped whole.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any, overload

import msgspec
import numpy as np
import numpy.typing as npt

from loom_core.formats.document import FastEffect
from loom_core.formats.entry_index import EntryIndex
from loom_core.formats.fastschema import list_of
from loom_core.formats.gc_pause import gc_paused
from loom_core.formats.mapped_file import release_pages

BLOCK = 64  # entries decoded together when a view asks for one
KEEP_BLOCKS = 160  # blocks kept decoded once read (about 10,000 effects)
RELEASE_RUNS = 16  # runs walked between two lets-go of a mapped file's pages
KEEP_CUTS = 16  # runs whose entries' places are kept (two lists of a thousand ints each)
# a run of log entries (as the progressive load decodes each in place), and one entry
log_decoder: msgspec.json.Decoder[list[Any]] = msgspec.json.Decoder(list_of(FastEffect))
entry_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(FastEffect)
_raws = msgspec.json.Decoder(list[msgspec.Raw])
# between two log entries in loom-harness's layout (entries at indent 4 inside "log")
ENTRY_SEP = b"\n    },\n    {"


Ints = npt.NDArray[np.int64]


def _separators(source: bytes, a: int, b: int) -> Ints:
    """Where :data:`ENTRY_SEP` starts in ``source[a:b]`` (relative to ``a``), found with
    numpy: a ``find`` per entry in Python was 1.9 ms a megabyte run, most of a far jump's
    decode. Every closing brace is a candidate; the separator's bytes around it decide."""
    data = np.frombuffer(source, dtype=np.uint8, count=b - a, offset=a)
    brace = ENTRY_SEP.index(b"}")
    at = np.flatnonzero(data == ord("}")) - brace
    at = at[(at >= 0) & (at <= len(data) - len(ENTRY_SEP))]
    for k, byte in enumerate(ENTRY_SEP):
        if k != brace:
            at = at[data[at + k] == byte]
    return at


def _entry_spans(source: bytes, a: int, b: int) -> tuple[Ints, Ints]:
    """Where each entry of the run ``source[a:b]`` starts and ends, for a run whose
    separators do not all stand between entries: the run split into raw entries (a copy),
    each found in the source after the one before."""
    raws = _raws.decode(b"".join((b"[", memoryview(source)[a:b], b"]")))
    starts, ends, at = [], [], a
    for raw in raws:
        entry = bytes(raw)
        at = source.find(entry, at, b)
        starts.append(at)
        at += len(entry)
        ends.append(at)
    return np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)


def _keep(kept: OrderedDict[Any, Any], key: Any, value: Any, most: int) -> None:
    """Put ``value`` in the least-recently-used cache ``kept`` of at most ``most`` items."""
    kept[key] = value
    kept.move_to_end(key)
    while len(kept) > most:
        kept.popitem(last=False)


class LazyEffects(Sequence[Any]):
    """The effects of a trace whose log :attr:`at` indexes by runs of entries in ``source``.

    The load appends each run as it decodes it (:meth:`add_run`). Afterwards an effect is
    decoded with its block (:data:`BLOCK` entries of its run) from the source's bytes: a
    far jump decodes the few blocks it shows, not megabyte runs (2.8 ms each)."""

    def __init__(self, source: bytes, keep: int = KEEP_BLOCKS) -> None:
        self._source = source
        self._keep = keep
        self.at = EntryIndex([], [])  # the runs' byte ranges and first entries (raw_entry)
        self._n = 0
        self._kept: OrderedDict[tuple[int, int], list[Any]] = OrderedDict()  # (run, block)
        self._fresh: dict[tuple[int, int], list[Any]] = {}  # added since :meth:`settle`
        self._cuts: OrderedDict[int, tuple[Ints, Ints]] = OrderedDict()
        self._lock = threading.Lock()
        self._last: tuple[list[Any], int, int] = ([], 0, 0)  # (block's effects, first, end)

    def add_run(self, span: tuple[int, int], effects: list[Any]) -> None:
        """The load's next run of entries (``span``: its bytes in ``source``), decoded;
        kept whole until :meth:`settle`, whatever their number, for the timeline to read."""
        with self._lock:
            r = len(self.at.ranges)
            self.at.ranges.append(span)
            self.at.firsts.append(self._n)
            self._n += len(effects)
            for k in range(0, len(effects), BLOCK):
                self._fresh[r, k // BLOCK] = effects[k : k + BLOCK]

    def settle(self) -> None:
        """The runs added so far have been read: keep only as many blocks as any."""
        with self._lock:
            for key, block in self._fresh.items():
                self._remember(key, block)
            self._fresh.clear()

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return self._slice(i)
        block, first, end = self._last
        if first <= i < end:
            return block[i - first]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("effect index out of range")
        block, first = self._block_of(i)
        self._last = (block, first, first + len(block))
        return block[i - first]

    def __iter__(self) -> Iterator[Any]:
        """Every effect in order; blocks not kept are decoded without being kept, so a
        walk over the whole run (the text index, an export) leaves a view's blocks alone."""
        for r in range(len(self.at.ranges)):
            for k in range(-(-self._run_len(r) // BLOCK)):
                yield from self._block(r, k, keep=False)
            if r % RELEASE_RUNS == RELEASE_RUNS - 1:
                release_pages(self._source)  # (a mapped file's pages read so far)
        release_pages(self._source)

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
        while start < stop:
            block, first = self._block_of(start)
            take = block[start - first : stop - first]
            out.extend(take)
            start += len(take)
        return out

    def _run_len(self, r: int) -> int:
        firsts = self.at.firsts
        return (firsts[r + 1] if r + 1 < len(firsts) else self._n) - firsts[r]

    def _block_of(self, i: int) -> tuple[list[Any], int]:
        """The block holding effect ``i`` (0 <= i < len) and its first effect's index."""
        r = bisect_right(self.at.firsts, i) - 1
        k = (i - self.at.firsts[r]) // BLOCK
        return self._block(r, k), self.at.firsts[r] + k * BLOCK

    def _block(self, r: int, k: int, keep: bool = True) -> list[Any]:
        with self._lock:
            block = self._kept.get((r, k))
            if block is not None:
                self._kept.move_to_end((r, k))
                return block
            block = self._fresh.get((r, k))
            if block is not None:
                return block
        starts, ends = self._cuts_of(r)
        view, decode = memoryview(self._source), entry_decoder.decode
        cut = slice(k * BLOCK, (k + 1) * BLOCK)
        spans = zip(starts[cut].tolist(), ends[cut].tolist(), strict=True)
        with gc_paused():  # each entry from a view where it lies: its payloads stay views
            block = [decode(view[a:b]) for a, b in spans]
        if keep:
            with self._lock:
                self._remember((r, k), block)
        return block

    def _remember(self, key: tuple[int, int], block: list[Any]) -> None:
        """Keep a block (the lock held), letting the least recently read go."""
        _keep(self._kept, key, block, self._keep)

    def _cuts_of(self, r: int) -> tuple[Ints, Ints]:
        """Where each entry of run ``r`` starts and ends in the source.

        Each entry is decoded from a view of the source where it lies, so its raw payloads
        stay views into the file's buffer, as the load's are, and a payload something
        keeps (the filter's text, the index being built) holds no copy. (Decoded as one
        list from a copy of its run, the kept payloads held every run's copy: the text
        index's build took the 100,000-effect window from 256 to 411 MB.) The entries are
        cut at the layout's separator, which loom-harness writes only between two
        entries (:func:`loom_core.formats.progressive._layout_chunks`); when the run holds
        more separators than entries, its entries are found one by one instead. The load
        decoded the same bytes, so no decode here can fail: a loaded document's source
        never changes."""
        with self._lock:
            cuts = self._cuts.get(r)
            if cuts is not None:
                self._cuts.move_to_end(r)
                return cuts
        a, b = self.at.ranges[r]
        seps = _separators(self._source, a, b) + a
        if len(seps) + 1 == self._run_len(r):
            starts = np.concatenate(([a], seps + 8))  # each entry's indentation
            ends = np.concatenate((seps + 6, [b]))  # after each entry's closing brace
        else:  # the separator inside an entry too (JSON allows it; hand-written): slower
            starts, ends = _entry_spans(self._source, a, b)
        with self._lock:
            _keep(self._cuts, r, (starts, ends), KEEP_CUTS)
        return starts, ends
