"""Columns the step filter scans, built once per timeline and kept while it lives.

Why: the filter asked each of a million steps, in Python, for its kind name and
its payload (lowercased anew on every keystroke); that is seconds per query. Here
each step's kind name is a small integer in one array, so ``tool:bash`` is a few
vectorised comparisons, and the searchable text of each step (its raw payload
plus its kind name, lowercased: what the filter always searched) is kept in
chunks of consecutive steps, joined by ``\\xff``, so a text term is a C-level
``bytes.find`` over a few megabytes at a time. ``\\xff`` never occurs in UTF-8, so
no match can span two steps. The text column costs about the payloads' size in
memory and is built only when a text term is first searched (in the filter's
worker, a chunk at a time, so results stream in while it is built).

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from loom_core.views.timeline import Timeline

CHUNK_STEPS = 2048  # steps per text chunk at most…
CHUNK_BYTES = 4 << 20  # …and about this many bytes: one find holds the GIL only briefly
SEP = b"\xff"  # between steps in a chunk: not a byte of any UTF-8 text
IntArray = npt.NDArray[np.int64]


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
        self._chunks: list[TextChunk] = []
        self._lower: dict[str, bytes] = {}
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
                effects, ids = tl.doc.effects, self._ids
                episode = ids.setdefault("episode", len(ids))
                kinds = [
                    episode if e < 0 else ids.setdefault(effects[e].kind or "", len(ids))
                    for e in tl.effect_of[done:upto]
                ]
                self._name_of.extend(kinds)
                self.names = list(ids)
            return np.frombuffer(self._name_of[:upto], np.uint32)

    def text_chunks(
        self, tl: Timeline, upto: int, cancelled: Callable[[], bool]
    ) -> Iterator[TextChunk]:
        """The text chunks covering steps ``0 .. upto - 1``, built where missing."""
        i, first = 0, 0
        while first < upto and not cancelled():
            with self._lock:
                chunk = self._chunk(tl, i, first, upto)
            yield chunk
            i, first = i + 1, chunk.stop

    def _chunk(self, tl: Timeline, i: int, first: int, upto: int) -> TextChunk:
        """Chunk ``i`` (starting at step ``first``); a short one is rebuilt with more steps."""
        if i < len(self._chunks):
            known = self._chunks[i]
            if known.full or known.stop >= upto:
                return known
            del self._chunks[i:]
        chunk = self._build(tl, first, min(first + CHUNK_STEPS, upto))
        self._chunks.append(chunk)
        return chunk

    def _build(self, tl: Timeline, first: int, stop: int) -> TextChunk:
        """Steps ``first .. stop - 1`` (fewer when their payloads pass ``CHUNK_BYTES``) as
        one chunk. Whole lists at a time: a million steps are built in seconds, not tens."""
        sizes = np.frombuffer(tl.size[first:stop], np.int64)  # payload bytes (about, for users)
        over = np.flatnonzero(np.cumsum(sizes) >= CHUNK_BYTES)
        if len(over):
            stop = first + int(over[0]) + 1
        effects = tl.doc.effects
        steps = tl.effect_of[first:stop].tolist()
        items = [effects[e] if e >= 0 else None for e in steps]
        payloads: list[Any] = [b"" if x is None or x.result is None else x.result for x in items]
        names = [b"" if x is None else self._name(x.kind or "") for x in items]
        users = [i for i, e in enumerate(steps) if e < 0]
        if users:
            episodes = tl.doc.episodes
            for i in users:
                text = episodes[tl.episode_of[first + i]].lower()
                payloads[i] = text.encode("utf-8", "surrogatepass")
        n = len(steps)
        lengths = np.fromiter(map(len, payloads), np.int64, n)
        lengths += np.fromiter(map(len, names), np.int64, n) + 1
        starts = array("q", np.concatenate(([0], np.cumsum(lengths))).astype(np.int64).tobytes())
        parts: list[Any] = [SEP] * (3 * n)
        parts[0::3], parts[1::3] = payloads, names
        full = n >= CHUNK_STEPS or starts[-1] >= CHUNK_BYTES
        return TextChunk(first, starts, b"".join(parts).lower(), full)

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


def find_steps(chunk: TextChunk, needles: list[bytes]) -> list[int]:
    """Steps of ``chunk`` whose text holds any of ``needles``, ascending.

    After a hit the search goes on at the next step's start: the cost follows the
    number of matching steps, not the number of occurrences.
    """
    blob, starts, found = chunk.blob, chunk.starts, set()
    for needle in needles:
        at = blob.find(needle)
        while at >= 0:
            i = bisect_right(starts, at) - 1
            found.add(i)
            at = blob.find(needle, starts[i + 1])
    return [chunk.first + i for i in sorted(found)]


def holds(chunk: TextChunk, step: int, needles: list[bytes]) -> bool:
    """Whether ``step``'s text (in ``chunk``) holds any of ``needles``."""
    i = step - chunk.first
    start, end = chunk.starts[i], chunk.starts[i + 1] - 1
    return any(chunk.blob.find(n, start, end) >= 0 for n in needles)
