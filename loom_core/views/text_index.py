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
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from loom_core.views.step_index import TextChunk, step_index
from loom_core.views.timeline import Timeline

BLOCK_STEPS = 16  # steps per block: what one bit stands for
HASH_BITS = 14  # rows: 16,384 (2 KiB of bits per block, 128 bytes per step)
ROWS = 1 << HASH_BITS
KEEP_BYTES = 2 << 30  # the kept indexes, together, at most (the least recently used go)
MAGIC = b"LOOMTRI1"  # the saved file's first bytes; a new layout gets a new magic
_HEADER = len(MAGIC) + 8  # the magic, then the step count (little-endian uint64)
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
    """The trigram bits of a run's ``steps`` steps (see the module docstring)."""

    def __init__(self, steps: int, bits: npt.NDArray[np.uint8] | None = None) -> None:
        self.steps = steps
        self.blocks = -(-steps // BLOCK_STEPS)
        self.bits = np.zeros((ROWS, _width(steps)), np.uint8) if bits is None else bits

    def add(self, chunk: TextChunk) -> None:
        """Set the bits of the trigrams of ``chunk``'s steps (a trigram across two steps
        sets a bit too: one more candidate, never a lost match)."""
        data = np.frombuffer(chunk.blob, np.uint8)
        if len(data) < 3:
            return
        rows = _hashes(data)
        first = (chunk.first // BLOCK_STEPS) & ~7  # from a whole byte of blocks: ORed in
        steps = np.arange(first * BLOCK_STEPS, chunk.stop + BLOCK_STEPS, BLOCK_STEPS)
        at = np.clip(steps - chunk.first, 0, len(chunk.starts) - 1)
        cuts = np.frombuffer(chunk.starts, np.int64)[at].tolist()  # each block's bytes
        seen = np.zeros((-(-(len(cuts) - 1) // 8) * 8, ROWS), np.bool_)
        for block, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False)):
            if b > a:
                seen[block, rows[a:b]] = True  # (the last block's two fewer: the slice stops)
        packed = np.packbits(seen, axis=0, bitorder="little")  # (bytes of blocks, ROWS)
        self.bits[:, first // 8 : first // 8 + len(packed)] |= packed.T

    def candidates(self, groups: list[list[bytes]]) -> BoolArray | None:
        """Which steps can hold every group (a term) in one of its spellings; None when no
        needle is long enough to tell (shorter than a trigram)."""
        blocks: BoolArray | None = None
        for group in groups:
            rows = [np.unique(_hashes(np.frombuffer(n, np.uint8))) for n in group]
            if any(len(r) == 0 for r in rows):
                continue  # a spelling shorter than three bytes: anywhere
            found = np.zeros(self.blocks, np.bool_)
            for r in rows:
                hits = np.bitwise_and.reduce(self.bits[r], axis=0)
                found |= np.unpackbits(hits, bitorder="little", count=self.blocks).view(np.bool_)
            blocks = found if blocks is None else blocks & found
        return None if blocks is None else np.repeat(blocks, BLOCK_STEPS)[: self.steps]


def build(tl: Timeline, cancelled: Callable[[], bool] = lambda: False) -> TextIndex | None:
    """The index of every step of ``tl`` (None when cancelled). The text is built a
    chunk at a time and dropped after (unless the filter keeps it already)."""
    index = TextIndex(len(tl))
    for chunk in step_index(tl).text_chunks(tl, len(tl), cancelled, keep=False):
        index.add(chunk)
    return None if cancelled() else index


def save(index: TextIndex, path: str) -> None:
    """Write ``index`` to ``path`` atomically (a reader never sees half a file)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(MAGIC + index.steps.to_bytes(8, "little"))
        fh.write(np.ascontiguousarray(index.bits).data)
    os.replace(tmp, path)


def load(path: str, steps: int) -> TextIndex | None:
    """The index saved at ``path`` for a run of ``steps`` steps, mapped (its pages read as
    queries touch them); None when there is none, or it is of another layout or run."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEADER)
        if head[: len(MAGIC)] != MAGIC or int.from_bytes(head[len(MAGIC) :], "little") != steps:
            return None
        shape = (ROWS, _width(steps))
        if os.path.getsize(path) != _HEADER + ROWS * shape[1] or not steps:
            return None
        return TextIndex(steps, np.memmap(path, np.uint8, "r", _HEADER, shape))
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
