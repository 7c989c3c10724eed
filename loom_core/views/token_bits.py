"""Exact per-step bits of a run's frequent words: a common text answered without a scan.

Why: a text most steps hold (``gamma delta`` in 82% of a million steps) leaves every block
of the trigram index (:mod:`loom_core.views.text_index`) a candidate, so the filter read
the whole 872 MB text column per needle and did Python work per matching step (2-3 s).
Here a word (a maximal run of :data:`WORD` bytes) that a sample shows in more than
1/:data:`DENSITY` of the steps gets one bit per step: set when the step's text holds
that word. Such a bit is exact, not a candidate: a step holding the word holds every
text inside it, so a needle inside a frequent word is known to be in every step whose
bit is set, at a cost of 125 KB per word at a million steps.

What makes the rest exact too: the trigram index leaves out the trigrams lying wholly
inside an occurrence of a frequent word (:meth:`TokenBits.inside`). A needle made of
word bytes only lies, wherever it occurs, inside one maximal run of word bytes; if that
run is a frequent word, the step's bit says so; if not, all its trigrams are in the
index, so the step stays a candidate and is searched as before. A needle with another
byte (a space, a dot) is narrowed by its trigrams that hold such a byte, which never lie
inside a word. Words are matched byte for byte (packed into two integers, at most
:data:`MAX_LEN` bytes), never by a hash, so no bit is set for a step without its word.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

MIN_LEN, MAX_LEN = 3, 16  # a word's bytes: shorter ones hold no trigram, longer ones are rare
MAX_TOKENS = 256  # words with bits at most (32 MB at a million steps)
DENSITY = 64  # a word in more than 1/DENSITY of the sampled steps gets bits
WORD = np.zeros(256, np.bool_)
for _lo, _hi in ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A), (0x80, 0xFE)):
    WORD[_lo : _hi + 1] = (
        True  # digits, letters, UTF-8's multibyte bytes (not the 0xff between steps)
    )
WORD[ord("_")] = True
_IS_WORD = WORD.astype(np.uint8).tobytes()  # a bytes.translate table: 1 for a word byte
_KEEP = np.array(  # by a word's size: the bits of its bytes in each of its two integers
    [[(1 << 8 * min(n, 8)) - 1, (1 << 8 * max(n - 8, 0)) - 1] for n in range(MAX_LEN + 1)],
    np.uint64,
)
U8 = npt.NDArray[np.uint8]
U64 = npt.NDArray[np.uint64]
Ints = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
_MIX = np.uint64(0x9E3779B97F4A7C15)
_STEP = np.uint64(0xC2B2AE3D27D4EB4F)


def word_only(needle: bytes) -> bool:
    """Whether every byte of ``needle`` is a word byte (so it lies inside one word)."""
    return bool(needle) and bool(WORD[np.frombuffer(needle, np.uint8)].all())


def words(blob: bytes) -> tuple[Ints, Ints, U64, U64]:
    """The words of ``blob`` of :data:`MIN_LEN` to :data:`MAX_LEN` bytes: where each
    starts and ends, and its bytes packed into two integers (byte ``k`` at bits ``8k``)."""
    word = np.frombuffer(b"\0" + blob.translate(_IS_WORD) + b"\0", np.uint8)  # 1: a word byte
    edges = np.flatnonzero(word[1:] != word[:-1])  # where a word starts, then where it ends
    starts, ends = edges[0::2], edges[1::2]
    sizes = ends - starts
    fit = (sizes >= MIN_LEN) & (sizes <= MAX_LEN)
    starts, ends, sizes = starts[fit], ends[fit], sizes[fit]
    padded = blob + bytes(MAX_LEN + 8)
    at = np.ndarray((len(blob) + MAX_LEN,), "<u8", padded, strides=(1,))  # 8 bytes from each
    lo = at[starts] & _KEEP[sizes, 0]  # (the bytes past the word's end: zero)
    hi = at[starts + 8] & _KEEP[sizes, 1]
    return starts, ends, lo.astype(np.uint64), hi.astype(np.uint64)


def _pack(token: bytes) -> tuple[int, int]:
    """``token``'s two integers, as :func:`words` packs them."""
    padded = token.ljust(MAX_LEN, b"\0")
    return int.from_bytes(padded[:8], "little"), int.from_bytes(padded[8:], "little")


def _unpack(lo: int, hi: int) -> bytes:
    return (lo.to_bytes(8, "little") + hi.to_bytes(8, "little")).rstrip(b"\0")


def _mix(lo: U64, hi: U64) -> U64:
    """One integer to look a word up by, its top bits well mixed (the exact check
    compares both halves after)."""
    return (lo ^ (hi * _MIX)) * _STEP


def frequent(samples: Iterable[tuple[bytes, Ints]]) -> list[bytes]:
    """The words in more than 1/DENSITY of the sampled steps (each sample: a chunk's text
    and where its steps start), most frequent first, at most :data:`MAX_TOKENS`. Each
    sample is cut to its words once per step before the next is read: its word arrays
    are several times its text, and four samples' at once raised a 100,000-effect
    window's peak memory by about 50 MB."""
    los, his, total = [], [], 0
    for blob, starts in samples:
        first, _end, lo, hi = words(blob)
        step = np.searchsorted(starts, first, "right").astype(np.uint64)
        _keys, once = np.unique(_mix(lo, hi) ^ (step * _MIX), return_index=True)  # per step
        los.append(lo[once])  # (a clash of two keys: a count off)
        his.append(hi[once])
        total += len(starts) - 1
    if not los or not total:
        return []
    lo, hi = np.concatenate(los), np.concatenate(his)
    _words, at, counts = np.unique(_mix(lo, hi), return_index=True, return_counts=True)
    keep = np.flatnonzero(counts * DENSITY > total)
    keep = keep[np.argsort(-counts[keep], kind="stable")][:MAX_TOKENS]
    return [_unpack(int(lo[at[i]]), int(hi[at[i]])) for i in keep]


class TokenBits:
    """One bit per step for each of ``tokens`` (see the module docstring)."""

    def __init__(self, steps: int, tokens: list[bytes], bits: U8 | None = None) -> None:
        packed = [_pack(t) for t in tokens]
        self.steps, self.tokens = steps, tokens
        self._lo = np.array([p[0] for p in packed] + [0], np.uint64)  # the last: no word
        self._hi = np.array([p[1] for p in packed] + [0], np.uint64)
        mixed = _mix(self._lo[:-1], self._hi[:-1])
        for size in range(8, 21):  # a table with a slot of its own for each token
            self._shift = np.uint64(64 - size)
            slots = mixed >> self._shift
            if len(np.unique(slots)) == len(slots):
                break
        self._table = np.full(1 << size, len(tokens), np.int32)
        self._table[slots[::-1]] = np.arange(len(tokens), dtype=np.int32)[::-1]  # (a clash:
        width = -(-steps // 8)  # the first token's, the other's words never found: no bits)
        self.bits = np.zeros((len(tokens), width), np.uint8) if bits is None else bits

    def _find(self, lo: U64, hi: U64) -> Ints:
        """The row of each word's token, or -1 for a word that is not one of them."""
        row = self._table[_mix(lo, hi) >> self._shift]
        same = (self._lo[row] == lo) & (self._hi[row] == hi)
        return np.where(same, row, -1)

    def add(self, blob: bytes, starts: Ints, first: int) -> BoolArray:
        """Set the bits of the chunk of steps from ``first`` (text ``blob``, steps starting
        at ``starts``); returns, per byte, whether it begins a trigram lying wholly inside
        a frequent word (what the trigram index leaves out)."""
        begin, end, lo, hi = words(blob)
        row = self._find(lo, hi)
        hit = row >= 0
        begin, end, row = begin[hit], end[hit], row[hit]
        base = first & ~7  # whole bytes of steps: ORed in
        step = np.searchsorted(starts, begin, "right") - 1 + (first - base)
        span = -(-(first + len(starts) - 1 - base) // 8) * 8
        seen = np.zeros((len(self.tokens), span), np.bool_)
        seen[row, step] = True
        packed = np.packbits(seen, axis=1, bitorder="little")
        self.bits[:, base // 8 : base // 8 + packed.shape[1]] |= packed
        marks = np.zeros(len(blob) + 1, np.int8)  # +1 where a word starts, -1 past its last
        marks[begin] = 1  # trigram (words are at least MIN_LEN long; no two share a place)
        marks[end - 2] = -1
        return np.cumsum(marks[: len(blob)], dtype=np.int8) > 0

    def certain(self, needle: bytes) -> BoolArray | None:
        """The steps known to hold ``needle``: those holding a frequent word it lies in
        (None when it is in none of them)."""
        rows = [i for i, token in enumerate(self.tokens) if needle in token]
        if not rows:
            return None
        hits = np.bitwise_or.reduce(self.bits[rows], axis=0)
        return np.unpackbits(hits, bitorder="little", count=self.steps).view(np.bool_)
