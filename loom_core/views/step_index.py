"""Columns the step filter scans, built once per timeline and kept while it lives.

Why: the filter asked each of a million steps, in Python, for its kind name and
its payload (lowercased anew on every keystroke); that is seconds per query. Here
each step's kind name is a small integer in one array, so ``tool:bash`` is a few
vectorised comparisons, and the searchable text of each step (its raw payload
plus its kind name, lowercased: what the filter always searched) is kept in
chunks of consecutive steps, joined by ``\\xff``, so a text term is a C-level
``bytes.find`` over a few megabytes at a time. ``\\xff`` never occurs in UTF-8, so
no match can span two steps. The text column costs about the payloads' size in
memory and is built only when a text term needs it (in the filter's worker, a chunk
at a time, so results stream in while it is built): a common text, since a rarer one
is searched in the chunk's unjoined texts (:meth:`StepIndex.parts`) without a copy.

Where a chunk ends follows from the payload sizes alone (:meth:`StepIndex.bounds`), so a
chunk the trigram index (:mod:`loom_core.views.text_index`) rules out is never built.

Timelines of live runs grow: every column extends to the steps present when it is
asked, and the short last text chunk of a growing run is rebuilt when more steps
come. Two filter workers may overlap (a cancelled one still finishing), so
extending is done under a lock.
"""

from __future__ import annotations

import threading
import weakref
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from loom_core.formats.mapped_file import release_pages
from loom_core.views.timeline import Timeline

CHUNK_STEPS = 2048  # steps per text chunk at most…
CHUNK_BYTES = 4 << 20  # …and about this many bytes: one find holds the GIL only briefly
SEP = b"\xff"  # between steps in a chunk: not a byte of any UTF-8 text
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class TextChunk:
    """Steps ``first .. first + len(starts) - 2``: their lowercased text in ``blob``;
    step ``first + i`` spans ``blob[starts[i] : starts[i + 1] - 1]``."""

    first: int
    starts: array[int]
    blob: bytes
    full: bool  # holds CHUNK_STEPS steps or CHUNK_BYTES bytes: never rebuilt longer

    @property
    def stop(self) -> int:
        return self.first + len(self.starts) - 1


class StepIndex:
    """The filter's columns of one timeline (see the module docstring)."""

    def __init__(self) -> None:
        self.names: list[str] = []  # kind name by id
        self._ids: dict[str, int] = {}
        self._name_of = array("I")  # step -> kind-name id
        self._chunks: dict[int, TextChunk] = {}  # by first step
        # a chunk's unjoined texts (:meth:`parts`) as the scan before the index reads them,
        # by first step: two references and a start per step, not the text's bytes
        self._parts: dict[int, tuple[list[Any], array[int]]] = {}
        self._lower: dict[str, bytes] = {}
        # the trigram index of the run's text, once built or loaded (loom_core.views.text_index)
        # a loom_core.views.text_index.TextIndex once built (that module builds on this
        # one, so it is not imported here, even for the annotation)
        self.text_index: Any = None
        self._lock = threading.Lock()

    @property
    def named_steps(self) -> int:
        """How many steps the kind-name column covers so far."""
        return len(self._name_of)

    def name_ids(self, tl: Timeline, upto: int) -> npt.NDArray[np.uint32]:
        """Kind-name id of steps ``0 .. upto - 1`` (``episode`` for user steps)."""
        with self._lock:
            done = len(self._name_of)
            if done < upto:
                ids, names, kind_of = self._ids, tl.kind_names, tl.effect_kind
                episode = ids.setdefault("episode", len(ids))
                kinds = [
                    episode if e < 0 else ids.setdefault(names[kind_of[e]], len(ids))
                    for e in tl.effect_of[done:upto]
                ]
                self._name_of.extend(kinds)
                self.names = list(ids)
            return np.frombuffer(self._name_of[:upto], np.uint32)

    def text_chunks(
        self, tl: Timeline, upto: int, cancelled: Callable[[], bool], keep: bool = True
    ) -> Iterator[TextChunk]:
        """The text chunks covering steps ``0 .. upto - 1``, built where missing;
        ``keep=False`` builds without keeping what was not kept already (the index builder
        reads the whole run once, and the column would otherwise hold all of it)."""
        for first, stop in self.bounds(tl, upto):
            if cancelled():
                return
            yield self.chunk(tl, first, stop, keep)

    def chunk(self, tl: Timeline, first: int, stop: int, keep: bool = True) -> TextChunk:
        """The chunk of steps ``first .. stop - 1`` (a pair :meth:`bounds` gave)."""
        with self._lock:
            chunk = self._chunks.get(first)
            if chunk is None or chunk.stop != stop:
                chunk = self._build(tl, first, stop)
                if keep:
                    self._chunks[first] = chunk
            return chunk

    def built(self, first: int, stop: int) -> bool:
        """Whether the chunk of steps ``first .. stop - 1`` is kept already."""
        chunk = self._chunks.get(first)
        return chunk is not None and chunk.stop == stop

    def step_texts(self, tl: Timeline, steps: list[int]) -> list[bytes]:
        """The text of each of ``steps`` as a chunk holds it (see :meth:`steps_chunk`)."""
        chunk = self.steps_chunk(tl, steps)
        starts = chunk.starts
        return [chunk.blob[starts[i] : starts[i + 1] - 1] for i in range(len(steps))]

    def steps_chunk(self, tl: Timeline, steps: list[int]) -> TextChunk:
        """The text of ``steps`` (any steps, ascending) as one chunk whose step ``i`` is
        ``steps[i]``: for the few steps of a chunk the trigram index leaves, searched with
        one ``find`` over their joined text instead of a Python step each (at a million
        effects a rare text leaves about 80,000 such steps: 0.4 s step by step)."""
        parts, starts = self._parts_of(tl, list(map(tl.effect_of.__getitem__, steps)), steps)
        blob = b"".join(parts).lower()
        release_pages(tl.doc.source)
        return TextChunk(0, starts, blob, False)

    def bounds(self, tl: Timeline, upto: int) -> Iterator[tuple[int, int]]:
        """Where the chunks of steps ``0 .. upto - 1`` begin and end: from the payload sizes
        alone, so a chunk can be found (or skipped) without building the ones before it."""
        # a copy: a view would keep a live timeline's array from growing (BufferError)
        sizes = np.frombuffer(tl.size[:upto], np.int64)
        first = 0
        while first < upto:
            stop = min(first + CHUNK_STEPS, upto)
            over = np.flatnonzero(np.cumsum(sizes[first:stop]) >= CHUNK_BYTES)
            stop = first + int(over[0]) + 1 if len(over) else stop
            yield first, stop
            first = stop

    def _build(self, tl: Timeline, first: int, stop: int) -> TextChunk:
        """Steps ``first .. stop - 1`` as one chunk (:meth:`bounds` says where chunks end).
        Whole lists at a time: a million steps are built in seconds, not tens."""
        kept = self._parts.get(first)  # (the caller holds the lock)
        parts, starts = (
            kept if kept and len(kept[1]) == stop - first + 1 else self.parts(tl, first, stop)
        )
        full = len(starts) - 1 >= CHUNK_STEPS or starts[-1] >= CHUNK_BYTES
        blob = b"".join(parts).lower()
        release_pages(tl.doc.source)  # (a mapped run's pages just read: the copy holds them)
        return TextChunk(first, starts, blob, full)

    def kept_parts(self, tl: Timeline, first: int, stop: int) -> tuple[list[Any], array[int]]:
        """:meth:`parts` of the chunk ``first .. stop - 1``, kept for the next query."""
        with self._lock:
            kept = self._parts.get(first)
            if kept is None or len(kept[1]) != stop - first + 1:
                kept = self._parts[first] = self.parts(tl, first, stop)
            return kept

    def parts(self, tl: Timeline, first: int, stop: int) -> tuple[list[Any], array[int]]:
        """The bytes of a chunk's text before they are joined and lowercased: per step its
        payload (a view into the run's bytes), then its kind name and :data:`SEP` as one;
        and where each step starts once joined. The filter's scan before the index
        (:mod:`.raw_scan`) searches these where they lie, without the copy."""
        return self._parts_of(tl, tl.effect_of[first:stop].tolist(), range(first, stop))

    def _parts_of(
        self, tl: Timeline, effect_of: list[int], steps: Sequence[int]
    ) -> tuple[list[Any], array[int]]:
        """:meth:`parts` of ``steps``, whose effects (-1: a user step) are ``effect_of``."""
        n = len(effect_of)
        payloads: list[Any] = [b""] * n
        names: list[bytes] = [SEP] * n
        if tl.results:  # C-level maps (a user step's -1 picks some effect: replaced below)
            payloads = list(map(tl.results.__getitem__, effect_of))
            if None in payloads:
                payloads = [b"" if x is None else x for x in payloads]
            kinds = list(map(tl.effect_kind.__getitem__, effect_of))
            ends = {k: self._name(tl.kind_names[k]) + SEP for k in set(kinds)}
            names = list(map(ends.__getitem__, kinds))
        if min(effect_of, default=0) < 0:
            episodes = tl.doc.episodes
            for i in np.flatnonzero(np.array(effect_of) < 0).tolist():
                text = episodes[tl.episode_of[steps[i]]].lower()
                payloads[i], names[i] = text.encode("utf-8", "surrogatepass"), SEP
        lengths = np.fromiter(map(len, payloads), np.int64, n)
        lengths += np.fromiter(map(len, names), np.int64, n)
        starts = array("q", np.concatenate(([0], np.cumsum(lengths))).astype(np.int64).tobytes())
        parts: list[Any] = [SEP] * (2 * n)
        parts[0::2], parts[1::2] = payloads, names
        return parts, starts

    def _name(self, kind: str) -> bytes:
        """A kind name lowercased as the filter always compared it (``str.lower``)."""
        name = self._lower.get(kind)
        if name is None:
            name = self._lower[kind] = kind.lower().encode("utf-8", "surrogatepass")
        return name


_INDEXES: dict[int, StepIndex] = {}
_INDEXES_LOCK = threading.Lock()


def step_index(tl: Timeline) -> StepIndex:
    """The index of ``tl``, made on first use and dropped with the timeline."""
    with _INDEXES_LOCK:
        index = _INDEXES.get(id(tl))
        if index is None:
            index = _INDEXES[id(tl)] = StepIndex()
            weakref.finalize(tl, _INDEXES.pop, id(tl), None)
        return index


def find_steps(
    chunk: TextChunk, needles: list[bytes], within: BoolArray | None = None
) -> list[int]:
    """Steps of ``chunk`` whose text holds any of ``needles``, ascending; only the steps
    ``within`` marks (one flag per step of the chunk) are searched, when given.

    After a hit the search goes on at the next step's start: the cost follows the
    number of matching steps, not the number of occurrences.
    """
    blob, starts, found = chunk.blob, chunk.starts, set()
    spans = [(0, len(starts) - 1)] if within is None else _runs(within)
    for needle in needles:
        for a, b in spans:
            end = starts[b]
            at = blob.find(needle, starts[a], end)
            while at >= 0:
                i = bisect_right(starts, at) - 1
                found.add(i)
                at = blob.find(needle, starts[i + 1], end)
    return [chunk.first + i for i in sorted(found)]


def _runs(flags: BoolArray) -> list[tuple[int, int]]:
    """The runs of consecutive True in ``flags``: (first, stop) each."""
    edges = np.diff(np.concatenate(([0], flags.view(np.int8), [0])))
    firsts, stops = np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()
    return list(zip(firsts, stops, strict=True))


def holds(chunk: TextChunk, step: int, needles: list[bytes]) -> bool:
    """Whether ``step``'s text (in ``chunk``) holds any of ``needles``."""
    i = step - chunk.first
    start, end = chunk.starts[i], chunk.starts[i + 1] - 1
    return any(chunk.blob.find(n, start, end) >= 0 for n in needles)
