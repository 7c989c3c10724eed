"""Earliest near-duplicate of each word set, without comparing every pair.

loom-harness compares each item with every earlier one (quadratic: hours on a
100,000-effect run). The answer must stay identical: for each set of 5+ words,
the *earliest* earlier set whose Jaccard similarity is >= 9/10. Exact
reductions make it fast whatever the vocabulary:

* two sets with Jaccard >= 9/10 differ in at most ``min(|a|, |b|) / 9`` words
  (their symmetric difference is at most a tenth of their union, and the union
  is at most 10/9 of either set);
* pigeonhole: hash words into ``P`` partitions with ``P`` greater than that
  difference, and the two sets agree *exactly* on at least one partition. So
  each set is indexed by a fingerprint of each partition (under the scheme for
  its size) and a later set looks up its own partitions under the schemes of
  every size a match could have; only sets met that way are compared;
* identical sets: only the first holder of a set can be the earliest match.

Candidates are visited in index order and the first verified one wins; the
threshold is compared in integers (9/10 exactly, as the harness's float test).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Iterator, Sequence

NUM, DEN = 9, 10  # Jaccard >= 9/10
MIN_WORDS = 5


def _schemes(limit: int = 1 << 31) -> list[int]:
    """Partition counts, growing by at least 12% a step (so a size range of ratio
    10/9 needs at most three schemes)."""
    out, p = [1], 1
    while p < limit:
        p = max(p + 1, -(-p * 112 // 100))
        out.append(p)
    return out


_SCHEMES = _schemes()


def _scheme(size: int) -> int:
    """The fewest partitions that separate the differences of any match of ``size`` words."""
    return _SCHEMES[bisect_left(_SCHEMES, size // NUM + 1)]


def _hashed(s: frozenset[str]) -> list[int]:
    return [hash(w) for w in s]


def _keys(hashed: list[int], parts: int) -> list[tuple[int, int, int]]:
    """One key per partition of the set under ``parts`` partitions: the XOR of its words'
    hashes (empty partitions too: two sets may agree only where both have nothing).
    Equal partitions give equal keys; a rare chance collision only adds a candidate,
    which the exact comparison then rejects."""
    acc = [0] * parts
    for h in hashed:
        acc[h % parts] ^= h
    return [(parts, p, a) for p, a in enumerate(acc)]


def similar(a: frozenset[str], b: frozenset[str]) -> bool:
    """Jaccard(a, b) >= 9/10, exactly (harness: ``len(a & b) / len(a | b) >= 0.9``)."""
    inter = len(a & b)
    return DEN * inter >= NUM * (len(a) + len(b) - inter)


def _merged(lists: list[list[int]]) -> Iterator[int]:
    """Distinct indices of several ascending lists, ascending."""
    last = -1
    for k in heapq.merge(*lists):
        if k != last:
            last = k
            yield k


def earliest_matches(sets: Sequence[frozenset[str] | None]) -> list[int | None]:
    """For each set (``None``: not a candidate), the index of the earliest earlier set
    with Jaccard >= 9/10, or ``None``. Sets under 5 words never match (a match of
    a 5+ word set has 5+ words itself)."""
    first_holder: dict[frozenset[str], int] = {}
    postings: dict[tuple[int, int, int], list[int]] = {}
    out: list[int | None] = [None] * len(sets)
    for k, s in enumerate(sets):
        if s is None or len(s) < MIN_WORDS:
            continue
        holder = first_holder.get(s)
        hashed = _hashed(s)
        out[k] = _first_match(s, hashed, sets, postings, holder)
        if holder is None:
            first_holder[s] = k
            for key in _keys(hashed, _scheme(len(s))):
                postings.setdefault(key, []).append(k)
    return out


def _first_match(
    s: frozenset[str],
    hashed: list[int],
    sets: Sequence[frozenset[str] | None],
    postings: dict[tuple[int, int, int], list[int]],
    holder: int | None,
) -> int | None:
    """The earliest indexed set similar to ``s``; an identical earlier set bounds the search."""
    size = len(s)
    lo, hi = -(-NUM * size // DEN), DEN * size // NUM  # sizes a match can have
    first, last = bisect_left(_SCHEMES, _scheme(lo)), bisect_left(_SCHEMES, _scheme(hi))
    lists = []
    for parts in _SCHEMES[first : last + 1]:
        for key in _keys(hashed, parts):
            found = postings.get(key)
            if found:
                lists.append(found)
    for j in _merged(lists):
        if holder is not None and j >= holder:
            return holder
        other = sets[j]
        assert other is not None
        if lo <= len(other) <= hi and similar(s, other):
            return j
    return holder
