"""A trigram index of the filter's text: which blocks of steps can hold a text at all.

Why: a text term was a scan of the whole text column (872 MB at a million effects: 0.6 s
for a text no step holds, every time, and the column built first). Every three
consecutive bytes of a step's text (a trigram) set one bit of its block's row; a text
can only be in a block whose row has the bits of all its trigrams, so a query reads a
few rows of bits and scans only the blocks they leave. A text no step holds is then
answered without reading any step, and a rare one reads a few blocks.

The shape: steps in blocks of :data:`BLOCK_STEPS`; a trigram hashed to one of
``2 ** HASH_BITS`` rows; ``bits[row]`` is one bit per block (numpy ``packbits``, bit
``b % 8`` of byte ``b // 8``), so a query ANDs one row per trigram of the needle. A
hash shared by two trigrams only adds candidates (checked against the text anyway),
never loses a match. Built from the same lowercased text the filter searches
(:mod:`loom_core.views.step_index`), one chunk at a time in C-level numpy passes, in
the background after the first paint (``loom_desktop.document.text_index_task``), and
saved to a file a second open maps instead of building (:func:`load`, :func:`save`).
Only for a run that no longer grows: a live timeline is scanned as before.

A text most steps hold leaves every block a candidate; the frequent words' exact bits
(:mod:`loom_core.views.token_bits`) answer it instead, and the trigrams lying inside
those words are left out of the rows (the words' bits stand for them).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from array import array
from collections.abc import Callable, Iterator

import numpy as np
import numpy.typing as npt

from loom_core.views.step_index import TextChunk, step_index
from loom_core.views.timeline import Timeline
from loom_core.views.token_bits import (
    MAX_LEN,
    MAX_TOKENS,
    WORD,
    Ints,
    TokenBits,
    frequent,
    word_only,
)

BLOCK_STEPS = 16  # steps per block: what one bit stands for
HASH_BITS = 14  # rows: 16,384 (2 KiB of bits per block, 128 bytes per step)
ROWS = 1 << HASH_BITS
KEEP_BYTES = 2 << 30  # the kept indexes, together, at most (the least recently used go)
MAGIC = b"LOOMTRI2"  # the saved file's first bytes; a new layout gets a new magic
_HEADER = len(MAGIC) + 16  # the magic, the step count, the frequent words' (uint64 each)
SAMPLE_CHUNKS = 4  # chunks of text the frequent words are counted in
PIECE_BYTES = 512 << 10  # the text indexed at a time (see _pieces)
BoolArray = npt.NDArray[np.bool_]


def _width(steps: int) -> int:
    """Bytes of one row: a bit per block of steps."""
    return -(-steps // (BLOCK_STEPS * 8))


def _hashes(data: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint32]:
    """The row of each trigram of ``data`` (one per byte but the last two)."""
    a = data.astype(np.uint32)
    tri = (a[:-2] << 16) | (a[1:-1] << 8) | a[2:]
    rows = (tri * np.uint32(0x9E3779B1)) >> np.uint32(32 - HASH_BITS)
    return rows.astype(np.uint32, copy=False)  # Fibonacci hashing: the product's top bits


class TextIndex:
    """The trigram bits of a run's ``steps`` steps (see the module docstring), and the
    exact bits of its frequent words (:mod:`loom_core.views.token_bits`)."""

    def __init__(
        self, steps: int, bits: npt.NDArray[np.uint8] | None = None, tokens: TokenBits | None = None
    ) -> None:
        self.steps = steps
        self.blocks = -(-steps // BLOCK_STEPS)
        self.bits = np.zeros((ROWS, _width(steps)), np.uint8) if bits is None else bits
        self.tokens = TokenBits(steps, []) if tokens is None else tokens

    def add(self, chunk: TextChunk, pause: Callable[[], object] = lambda: None) -> None:
        """Set the bits of the trigrams of ``chunk``'s steps (a trigram across two steps
        sets a bit too: one more candidate, never a lost match), but for those lying wholly
        inside a frequent word: the word's own bits stand for them. ``pause`` is called
        between the steps of the work (a build in the window's process yields to the user
        there too). The chunk is indexed a piece at a time (:func:`_pieces`)."""
        for piece in _pieces(chunk):
            self._add(piece, pause)
            pause()

    def _add(self, chunk: TextChunk, pause: Callable[[], object]) -> None:
        data = np.frombuffer(chunk.blob, np.uint8)
        if len(data) < 3:
            return
        starts = np.frombuffer(chunk.starts, np.int64)
        inside = self.tokens.add(chunk.blob, starts, chunk.first)
        pause()
        rows = _hashes(data)
        rows[inside[: len(rows)]] = ROWS  # a row no query reads
        first = (chunk.first // BLOCK_STEPS) & ~7  # from a whole byte of blocks: ORed in
        steps = np.arange(first * BLOCK_STEPS, chunk.stop + BLOCK_STEPS, BLOCK_STEPS)
        at = np.clip(steps - chunk.first, 0, len(chunk.starts) - 1)
        cuts = starts[at].tolist()  # each block's bytes
        seen = np.zeros((-(-(len(cuts) - 1) // 8) * 8, ROWS + 1), np.bool_)
        for block, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False)):
            if b > a:
                seen[block, rows[a:b]] = True  # (the last block's two fewer: the slice stops)
        packed = np.packbits(seen, axis=0, bitorder="little")  # (bytes of blocks, ROWS + 1)
        self.bits[:, first // 8 : first // 8 + len(packed)] |= packed.T[:ROWS]

    def narrow(self, groups: list[list[bytes]]) -> tuple[BoolArray | None, BoolArray | None]:
        """For terms ``groups`` (each: its spellings): the steps known to hold every term
        (None: none known), and the steps that can hold every term, those included (None:
        no term can be narrowed, no needle being long enough to tell)."""
        knowns, possible = [], None
        for group in groups:
            known, can = self._term(group)
            knowns.append(known)
            if can is not None:
                possible = can if possible is None else possible & can
        sure = [k for k in knowns if k is not None]
        certain = np.logical_and.reduce(sure) if sure and len(sure) == len(knowns) else None
        return certain, possible

    def _term(self, group: list[bytes]) -> tuple[BoolArray | None, BoolArray | None]:
        """One term's known and possible steps (see :meth:`narrow`)."""
        known: BoolArray | None = None
        can = np.zeros(self.steps, np.bool_)
        for needle in group:
            sure = self.tokens.certain(needle)
            if sure is not None:
                known = sure if known is None else known | sure
            blocks = self._blocks(needle)
            if blocks is None:
                return known, None  # this spelling can be anywhere
            can |= np.repeat(blocks, BLOCK_STEPS)[: self.steps]
            if sure is not None:
                can |= sure
        return known, can

    def _blocks(self, needle: bytes) -> BoolArray | None:
        """The blocks whose bits allow ``needle``: by all its trigrams when it is made of
        word bytes, else by those holding another byte (never inside a word); None when
        it has none."""
        data = np.frombuffer(needle, np.uint8)
        rows = _hashes(data) if len(data) >= 3 else np.zeros(0, np.uint32)
        if len(rows) and not word_only(needle):
            word = WORD[data]
            rows = rows[~(word[:-2] & word[1:-1] & word[2:])]
        if not len(rows):
            return None
        hits = np.bitwise_and.reduce(self.bits[np.unique(rows)], axis=0)
        return np.unpackbits(hits, bitorder="little", count=self.blocks).view(np.bool_)


def _pieces(chunk: TextChunk) -> Iterator[TextChunk]:
    """``chunk`` cut between steps into pieces of about :data:`PIECE_BYTES` of text.

    Why: the work arrays are several times the text they are made from (four bytes a
    byte for the trigrams, more for the words). Made for whole 4 MB chunks, and for the
    frequent words' whole sample chunks, they took the 100,000-effect window to 313 MB
    while its index was built; in pieces of 512 KB, 292 MB, for the same build CPU
    (smaller pieces cost more CPU for little less memory). No trigram a query needs is
    lost at a cut: each lies within one step's text; only those across two steps' texts
    (holding the separator no needle holds) are not set, and the bits of a piece are
    ORed in where they belong as a chunk's are."""
    starts = np.frombuffer(chunk.starts, np.int64)
    steps, total = len(starts) - 1, int(starts[-1])
    if total <= PIECE_BYTES or steps <= 1:
        yield chunk
        return
    at = np.searchsorted(starts, np.arange(PIECE_BYTES, total, PIECE_BYTES))
    cuts = np.unique(np.concatenate(([0], np.clip(at, 1, steps - 1), [steps]))).tolist()
    for i, j in zip(cuts, cuts[1:], strict=False):
        a, b = int(starts[i]), int(starts[j])
        rebased = array("q", (starts[i : j + 1] - a).tobytes())
        yield TextChunk(chunk.first + i, rebased, chunk.blob[a:b], chunk.full)


def build(tl: Timeline, cancelled: Callable[[], bool] = lambda: False) -> TextIndex | None:
    """The index of every step of ``tl`` (None when cancelled). The text is built a
    chunk at a time and dropped after (unless the filter keeps it already); the frequent
    words are counted first in :data:`SAMPLE_CHUNKS` chunks spread over the run. Before
    that each chunk's unjoined texts are made and kept (the scan before the index,
    :mod:`loom_core.views.raw_scan`, reads them; the joins below reuse them)."""
    index = step_index(tl)
    for first, stop in index.bounds(tl, len(tl)):
        if cancelled():  # (first the chunks' unjoined texts, kept: a text filter until the
            return None  # index is there scans them, 0.25 s at 1,000,000 effects, not 17)
        index.kept_parts(tl, first, stop)
    out = TextIndex(len(tl), tokens=TokenBits(len(tl), frequent(_samples(tl, cancelled))))
    for chunk in index.text_chunks(tl, len(tl), cancelled, keep=False):
        out.add(chunk, cancelled)
    return None if cancelled() else out


def _samples(tl: Timeline, cancelled: Callable[[], bool]) -> Iterator[tuple[bytes, Ints]]:
    """:data:`SAMPLE_CHUNKS` chunks' text spread over the run, a piece at a time (none more
    once cancelled: a closed tab's run is freed when this thread lets go of it)."""
    index = step_index(tl)
    bounds = list(index.bounds(tl, len(tl)))
    for first, stop in bounds[:: max(1, len(bounds) // SAMPLE_CHUNKS)][:SAMPLE_CHUNKS]:
        if cancelled():
            return
        for piece in _pieces(index.chunk(tl, first, stop, keep=False)):
            yield piece.blob, np.frombuffer(piece.starts, np.int64)


def save(index: TextIndex, path: str) -> None:
    """Write ``index`` to ``path`` atomically (a reader never sees half a file)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    tokens = index.tokens.tokens
    with open(tmp, "wb") as fh:
        fh.write(MAGIC + index.steps.to_bytes(8, "little") + len(tokens).to_bytes(8, "little"))
        fh.write(b"".join(t.ljust(MAX_LEN, b"\0") for t in tokens))
        fh.write(np.ascontiguousarray(index.bits).data)
        fh.write(np.ascontiguousarray(index.tokens.bits).data)
    os.replace(tmp, path)


def load(path: str, steps: int) -> TextIndex | None:
    """The index saved at ``path`` for a run of ``steps`` steps, mapped (its pages read as
    queries touch them); None when there is none, or it is of another layout or run."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEADER)
            count = int.from_bytes(head[len(MAGIC) + 8 :], "little")
            table = fh.read(MAX_LEN * min(count, MAX_TOKENS))
        if head[: len(MAGIC)] != MAGIC or int.from_bytes(head[len(MAGIC) : -8], "little") != steps:
            return None
        shape, at = (ROWS, _width(steps)), _HEADER + len(table)
        size = at + ROWS * shape[1] + count * -(-steps // 8)
        if count > MAX_TOKENS or os.path.getsize(path) != size or not steps:
            return None
        tokens = [table[i : i + MAX_LEN].rstrip(b"\0") for i in range(0, len(table), MAX_LEN)]
        bits = np.memmap(path, np.uint8, "r", at, shape)
        words = None
        if count:  # (an empty mapping is an error)
            words = np.memmap(path, np.uint8, "r", at + bits.nbytes, (count, -(-steps // 8)))
        return TextIndex(steps, bits, TokenBits(steps, tokens, words))
    except OSError:
        return None


def index_file(folder: str, path: str, steps: int) -> str | None:
    """Where the index of the run at ``path`` (of ``steps`` steps) is kept in ``folder``:
    named by the file's place, size and time, so a changed file is indexed anew; None
    when the file cannot be looked at."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = f"{os.path.abspath(path)}\0{st.st_size}\0{st.st_mtime_ns}\0{steps}"
    return os.path.join(folder, hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest())


def ensure(
    tl: Timeline, folder: str | None, cancelled: Callable[[], bool] = lambda: False
) -> TextIndex | None:
    """The index of ``tl``'s run, mapped from ``folder`` when it was kept there, else built
    and kept (a failed write only means the next open builds it again); from then on
    the filter uses it (:attr:`~loom_core.views.step_index.StepIndex.text_index`)."""
    target = None if folder is None else index_file(folder, tl.doc.path, len(tl))
    index = None if target is None else load(target, len(tl))
    if index is None:
        index = build(tl, cancelled)
        if index is None:
            return None
        if target is not None and target == index_file(folder or "", tl.doc.path, len(tl)):
            try:  # (only when the file is still the one indexed)
                save(index, target)
                prune(os.path.dirname(target), keep=target)
                index = load(target, len(tl)) or index  # mapped: clean pages, not heap
            except OSError:
                pass
    elif target is not None:
        with contextlib.suppress(OSError):
            os.utime(target)  # used now: the last to go when the folder is pruned
    step_index(tl).text_index = index
    return index


def prune(folder: str, keep: str, limit: int = KEEP_BYTES) -> None:
    """Delete the least recently used indexes in ``folder`` past ``limit`` bytes in all
    (never ``keep``): they are a cache, and every run opened would otherwise add one."""
    entries = []
    for entry in os.scandir(folder):
        with contextlib.suppress(OSError):
            st = entry.stat()
            entries.append((st.st_mtime_ns, st.st_size, entry.path))
    total = sum(size for _t, size, _p in entries)
    for _time, size, path in sorted(entries):
        if total <= limit:
            break
        if path != keep:
            with contextlib.suppress(OSError):
                os.remove(path)
                total -= size
