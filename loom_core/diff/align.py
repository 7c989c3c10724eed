"""Align two runs' steps by what they did (kind and depth), not only by position.

Why not a textbook LCS: the alphabet of step tokens is tiny (``model``, a few
``tool:<name>``, two depths), so an LCS over 100,000 tokens is both quadratic and
meaningless (it can match almost anything with anything). What a user means by
"aligned" is local: an inserted or dropped step shifts the rest, everything else
lines up by position. So the alignment is

1. the common prefix and the common suffix of the token lists, paired by position
   (this also makes the first divergence agree with loom-harness's positional
   ``loom diff``: it is always at the first position where the logs differ);
2. in between, when it is small, an exact edit-distance alignment (unit costs for
   a substituted, inserted or dropped step);
3. when it is large, a greedy walk that pairs equal tokens and, at a mismatch, looks for
   the nearest offsets ``(di, dj)`` (within ``window``) where the next ``gram``
   tokens agree again; skipped steps become only-a / only-b, overlapping skips are
   paired by position (a substituted step). When nothing resyncs the steps are
   paired by position, and the next few mismatches skip the search, which bounds
   the cost on unrelated runs to a small constant per step.

The same aligner serves the word diff (``substitution=2``: a longest common
subsequence) and list items in the structural diff.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Iterable, Sequence

Pair = tuple[int | None, int | None]

WINDOW = 64  # how far ahead a resync may be found (steps per side)
GRAM = 6  # how many following tokens must agree to accept a resync
STRIDE = 8  # after a failed search, this many mismatches are paired without searching
EXACT_CELLS = 100_000  # middles up to this many (rows x columns) get the exact alignment
_END = -1  # sentinel token past the end of a region (tokens are >= 0)


def intern_tokens(a: Iterable[Hashable], b: Iterable[Hashable]) -> tuple[list[int], list[int]]:
    """Map hashable step descriptions onto small ints shared by both sides."""
    ids: dict[Hashable, int] = {}
    ta = [ids.setdefault(t, len(ids)) for t in a]
    tb = [ids.setdefault(t, len(ids)) for t in b]
    return ta, tb


def common_prefix(ta: Sequence[int], tb: Sequence[int]) -> int:
    """Length of the longest common prefix."""
    n = min(len(ta), len(tb))
    if ta[:n] == tb[:n]:
        return n
    i = 0
    while ta[i] == tb[i]:
        i += 1
    return i


def common_suffix(ta: Sequence[int], tb: Sequence[int], limit: int) -> int:
    """Length of the longest common suffix, at most ``limit``."""
    k = 0
    na, nb = len(ta), len(tb)
    while k < limit and ta[na - 1 - k] == tb[nb - 1 - k]:
        k += 1
    return k


def align(
    ta: Sequence[int],
    tb: Sequence[int],
    window: int = WINDOW,
    gram: int = GRAM,
    substitution: int = 1,
) -> list[Pair]:
    """Pairs ``(i, j)``, ``(i, None)`` (only in A) and ``(None, j)`` (only in B), in order.

    Tokens must be non-negative ints (see :func:`intern_tokens`). Every index of
    each side appears exactly once, in increasing order. ``substitution`` is the
    exact path's cost of pairing two different tokens: 1 for steps (a changed step
    stays one row), 2 for words (a longest-common-subsequence diff).
    """
    na, nb = len(ta), len(tb)
    p = common_prefix(ta, tb)
    s = common_suffix(ta, tb, min(na, nb) - p)
    out: list[Pair] = [(i, i) for i in range(p)]
    ma, mb = ta[p : na - s], tb[p : nb - s]
    if (len(ma) + 1) * (len(mb) + 1) <= EXACT_CELLS:
        out.extend(_edit_alignment(ma, mb, p, p, substitution))
    else:
        _Middle(list(ma), list(mb), window, gram).walk(out, p, p)
    out.extend((na - s + k, nb - s + k) for k in range(s))
    return out


def _edit_alignment(
    ta: Sequence[int], tb: Sequence[int], a0: int, b0: int, sub: int = 1
) -> list[Pair]:
    """Minimal edit script (drop, insert: cost 1; substitute: ``sub``) as pairs, by dynamic
    programming.

    On ties the walk back prefers a match; then, with ``sub == 1``, a substitution (a
    changed step pairs with its counterpart instead of splitting in two rows), else a
    dropped or inserted token (so words that stayed are kept as matches).
    """
    na, nb = len(ta), len(tb)
    cost = [list(range(nb + 1))]
    for i in range(1, na + 1):
        prev, row, x = cost[-1], [i], ta[i - 1]
        for j in range(1, nb + 1):
            row.append(
                min(prev[j - 1] + (sub if x != tb[j - 1] else 0), prev[j] + 1, row[j - 1] + 1)
            )
        cost.append(row)
    out: list[Pair] = []
    i, j = na, nb
    while i or j:
        here = cost[i][j]
        same = i > 0 and j > 0 and ta[i - 1] == tb[j - 1]
        diagonal = i > 0 and j > 0 and here == cost[i - 1][j - 1] + (0 if same else sub)
        if diagonal and (same or sub == 1):
            i, j = i - 1, j - 1
            out.append((a0 + i, b0 + j))
        elif i and here == cost[i - 1][j] + 1:
            i -= 1
            out.append((a0 + i, None))
        elif j and here == cost[i][j - 1] + 1:
            j -= 1
            out.append((None, b0 + j))
        else:  # a substitution costing as much as a drop plus an insert
            i, j = i - 1, j - 1
            out.append((a0 + i, b0 + j))
    out.reverse()
    return out


class _Middle:
    """The greedy resync walk over the part between the common prefix and suffix."""

    def __init__(self, ta: list[int], tb: list[int], window: int, gram: int) -> None:
        self.ta, self.tb = ta, tb
        self.window, self.gram = window, max(1, gram)
        self.pa = ta + [_END] * self.gram
        self.pb = tb + [_END] * self.gram
        self.ga = self._grams(self.pa, len(ta))
        gb = self._grams(self.pb, len(tb))
        self.where: dict[tuple[int, ...], list[int]] = {}
        for j, g in enumerate(gb):
            self.where.setdefault(g, []).append(j)

    def _grams(self, padded: list[int], n: int) -> list[tuple[int, ...]]:
        """The ``gram`` tokens starting at each position 0..n (n: the end itself)."""
        g = self.gram
        return [tuple(padded[k : k + g]) for k in range(n + 1)]

    def resync(self, i: int, j: int) -> tuple[int, int] | None:
        """The nearest ``(di, dj)`` after which ``gram`` tokens agree, or None."""
        best: tuple[int, int] | None = None
        best_cost = (self.window + 1, 0)
        ga, where, window = self.ga, self.where, self.window
        for di in range(min(window, len(ga) - 1 - i) + 1):
            if di > best_cost[0]:
                break
            spots = where.get(ga[i + di])
            if not spots:
                continue
            k = bisect_left(spots, j)
            if k == len(spots):
                continue
            dj = spots[k] - j
            cost = (max(di, dj), di + dj)
            if dj <= window and (di or dj) and cost < best_cost:
                best, best_cost = (di, dj), cost
        return best

    def walk(self, out: list[Pair], a0: int, b0: int) -> None:
        """Append the middle's pairs to ``out``; ``a0``/``b0`` offset indices to the full runs."""
        ta, tb = self.ta, self.tb
        na, nb = len(ta), len(tb)
        i = j = 0
        quiet = 0
        while i < na and j < nb:
            if ta[i] == tb[j]:
                out.append((a0 + i, b0 + j))
                i += 1
                j += 1
                continue
            found = None if quiet else self.resync(i, j)
            if found is None:
                quiet = STRIDE if not quiet else quiet - 1
                out.append((a0 + i, b0 + j))
                i += 1
                j += 1
                continue
            di, dj = found
            both = min(di, dj)
            out.extend((a0 + i + k, b0 + j + k) for k in range(both))
            out.extend((a0 + i + k, None) for k in range(both, di))
            out.extend((None, b0 + j + k) for k in range(both, dj))
            i += di
            j += dj
        out.extend((a0 + k, None) for k in range(i, na))
        out.extend((None, b0 + k) for k in range(j, nb))
