"""The filter's text terms searched where the steps' bytes lie, before any text column.

Why: with no trigram index yet (a plain open, before the background build ends) a text
term built the lowercased text column first: every payload copied, joined and
lowercased, 87 MB at 100,000 effects, 872 MB at 1,000,000 (1.4-1.6 s for a rare text
there, and the column kept). Here a chunk's step texts are handed to Hyperscan as they
are (:meth:`loom_core.views.step_index.StepIndex.parts`: each step's payload, a view into
the run's bytes, its kind name and the separator), in its vectored mode: one SIMD pass
over the buffers, no copy, nothing kept. A match's end maps to its step through the same
starts the joined column would have (``searchsorted``).

Why the answer is the column's, byte for byte: the bytes and the step boundaries are the
same, a match cannot cross the separator (``\\xff``: no needle holds it), and
Hyperscan's caseless matching folds ASCII letters only, which is what ``bytes.lower``
does to the column (a needle is lowercase already; a byte >= 0x80 must be equal). Each
needle is compiled as escaped bytes followed by the rest of its step up to the
separator, so a step is reported once per term however often it holds it (Hyperscan
reports a pattern once per end offset), and a NUL byte never reaches the bindings' C
strings. Where Hyperscan is not installed (it has no build for Linux on ARM) the column
answers as before (:func:`scanner` gives ``None``).
"""

from __future__ import annotations

from array import array
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

MAX_GROUPS = 64  # a match is kept as one int: its end times 64 plus its term
COMMON = 0.25  # of a chunk's steps (matches of all terms counted): a common text


class Scanner:
    """The compiled terms of one query (each term: its spellings); one per search, since
    a Hyperscan database's scratch space must not be shared by two threads at once."""

    def __init__(self, hyperscan: ModuleType, groups: list[list[bytes]]) -> None:
        # each spelling as escaped bytes, then the rest of its step up to the separator
        self._patterns = [
            b"".join(b"\\x%02x" % c for c in n) + rb"[^\xff]*\xff" for g in groups for n in g
        ]
        self._ids = [i for i, g in enumerate(groups) for _n in g]
        self._groups, self.common = len(groups), False
        self._hs, self._db = hyperscan, None

    def _compiled(self) -> Any:
        """The database, compiled on the first chunk scanned (about a millisecond: a query
        the index answers, or the column, never pays it). Raises ``hyperscan.error``."""
        if self._db is None:
            db = self._hs.Database(mode=self._hs.HS_MODE_VECTORED)
            db.compile(
                expressions=self._patterns,
                ids=self._ids,
                elements=len(self._patterns),
                flags=self._hs.HS_FLAG_CASELESS,
            )
            self._db = db
        return self._db

    def steps(
        self,
        parts: list[Any],
        starts: array[int],
        first: int,
        local: npt.NDArray[np.bool_] | None,
    ) -> list[int] | None:
        """The steps (``first`` + their place in ``starts``) whose text holds every term;
        only those ``local`` marks, when given. ``None`` once a term is common (in more
        than :data:`COMMON` of a chunk's steps), for this chunk and every later one: each
        step found costs a call into Python here, more than the column's search per step
        once the column is built, so a common text is left to the column."""
        if self.common:
            return None
        n = len(starts) - 1
        ends: list[int] = []
        add, most = ends.append, max(64, int(n * COMMON))

        def found(term: int, _start: int, end: int, _flags: int, _context: object) -> bool:
            add(end * 64 + term)
            return len(ends) > most  # True: stop the scan

        try:
            db = self._compiled()
        except self._hs.error:  # e.g. "Pattern length exceeds limit" (a pasted page)
            self.common = True  # (the column answers it, as it does a common text)
            return None
        try:
            db.scan(parts, match_event_handler=found)  # vectored: a list of buffers
        except self._hs.ScanTerminated:
            self.common = True
            return None
        if not ends:
            return []
        hits = np.asarray(ends, np.int64)
        # a match ends at its step's separator, the byte before the next step's start
        step = np.searchsorted(np.frombuffer(starts, np.int64), hits >> 6, "left") - 1
        held = np.zeros((self._groups, n), np.bool_)
        held[hits & 63, step] = True
        every = np.logical_and.reduce(held, axis=0)
        if local is not None:
            every &= local
        return (np.flatnonzero(every) + first).tolist()


@cache
def _hyperscan() -> ModuleType | None:
    """Hyperscan, imported on the first text search, not with the window (7 ms)."""
    try:
        import hyperscan
    except ImportError:  # pragma: no cover - the app's dependencies install it where it builds
        return None
    return hyperscan


def scanner(groups: list[list[bytes]]) -> Scanner | None:
    """A scanner for ``groups``, or ``None`` where the column must answer (no Hyperscan,
    more terms than a match's int can tell apart)."""
    hyperscan = _hyperscan()
    if hyperscan is None or not groups or len(groups) > MAX_GROUPS:
        return None
    return Scanner(hyperscan, groups)
