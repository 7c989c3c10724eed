"""Verify a big trace's checksum on two cores (loom-format.md §2).

The checksum needs the whole document decoded and re-serialised canonically
(sorted keys, Python's separators and escapes): on a 130 MB trace that is most
of a second of single-threaded work. The canonical text of a list is its items'
canonical texts joined by ``", "``, so the bulky lists (``log``, ``wire``) are
split in half: a forked child serialises the second halves while the parent does
the first halves and the small members, and the pieces are hashed in order.
Where ``fork`` is unavailable, or a file needs Python's own JSON reader (NaN),
the plain serial check runs instead; both give identical answers.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import threading
from collections.abc import Mapping
from typing import Any

import msgspec

from loom_core.formats.canonical import CHECKSUM_PREFIX
from loom_core.formats.fastcanon import FastCanonError, canonical_text
from loom_core.formats.gc_pause import gc_paused

_top = msgspec.json.Decoder(dict[str, msgspec.Raw])
_items = msgspec.json.Decoder(list[msgspec.Raw])
_generic = msgspec.json.Decoder()
_BULKY = ("log", "wire")
MIN_PARALLEL_BYTES = 8 << 20


def _canon(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True).encode("ascii")


def _bracketed(raws: list[msgspec.Raw]) -> bytes:
    """``[item,item,…]`` in one copy (``b"[" + joined + b"]"`` would copy it three times)."""
    if len(raws) == 1:
        return b"[" + bytes(raws[0]) + b"]"
    return b",".join([b"[" + bytes(raws[0]), *raws[1:-1], bytes(raws[-1]) + b"]"])


def _canon_items(raws: list[msgspec.Raw]) -> bytes:
    """Canonical text of some list items, joined by ", " (no brackets): msgspec's fast
    path (:mod:`.fastcanon`), else Python's encoder."""
    if not raws:
        return b""
    data = _bracketed(raws)
    try:
        return canonical_text(data)[1:-1]
    except FastCanonError:
        return _canon(_generic.decode(data))[1:-1]


def _child(write_fd: int, halves: list[list[msgspec.Raw]]) -> None:
    """In the forked child: write each second half's canonical text, length-prefixed."""
    with os.fdopen(write_fd, "wb") as out:
        for raws in halves:
            text = _canon_items(raws)
            out.write(len(text).to_bytes(8, "big") + text)


def _read_halves(read_fd: int, count: int) -> list[bytes]:
    parts = []
    with os.fdopen(read_fd, "rb") as src:
        for _ in range(count):
            size = int.from_bytes(src.read(8), "big")
            parts.append(src.read(size))
    return parts


def _split(
    data: bytes, child_share: float
) -> tuple[dict[str, msgspec.Raw], dict[str, tuple[list[msgspec.Raw], list[msgspec.Raw]]]]:
    """Top-level members and each bulky list cut at the same place in both processes."""
    top = _top.decode(data)
    bulky = {k: _items.decode(top[k]) for k in _BULKY if k in top}
    cut = {k: int(len(v) * (1 - child_share)) for k, v in bulky.items()}
    return top, {k: (v[: cut[k]], v[cut[k] :]) for k, v in bulky.items()}


class ParallelChecksum:
    """A checksum whose bulk is being computed by a forked child while the caller works.

    :meth:`start` forks at once; the child splits the document itself and serialises
    ``child_share`` of every bulky list, while the caller goes on (loading, say);
    :meth:`result` then splits it the same way, does the rest and joins.
    """

    def __init__(self, data: bytes, child_share: float, pid: int, read_fd: int) -> None:
        self.data, self.child_share, self.pid, self.read_fd = data, child_share, pid, read_fd

    @classmethod
    def start(cls, data: bytes, child_share: float = 0.5) -> ParallelChecksum | None:
        """Fork the child, or None when this process should use the serial path."""
        if (
            not hasattr(os, "fork")
            or len(data) < MIN_PARALLEL_BYTES
            or threading.active_count() > 1
        ):
            return None  # forking a threaded process is unsafe; small files are fast anyway
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child never returns from here, whatever happens
            code = 1  # e.g. not a trace this reader can split: the parent goes serial
            try:
                os.close(read_fd)
                gc.disable()
                _top_unused, splits = _split(data, child_share)
                _child(write_fd, [second for _first, second in splits.values()])
                code = 0
            finally:
                os._exit(code)
        os.close(write_fd)
        return cls(data, child_share, pid, read_fd)

    def result(self) -> str | None:
        """``sha256:…`` of the trace without its checksum, or None (use the serial path)."""
        with gc_paused():
            try:
                top, splits = _split(self.data, self.child_share)
                firsts = {k: _canon_items(first) for k, (first, _second) in splits.items()}
                small = _small_members(top, splits)
            except (msgspec.DecodeError, msgspec.ValidationError):
                os.close(self.read_fd)  # the child's writes now fail and it exits
                os.waitpid(self.pid, 0)
                return None
            seconds = dict(zip(splits, _read_halves(self.read_fd, len(splits)), strict=True))
            _, status = os.waitpid(self.pid, 0)
        if status != 0:
            return None
        return _digest(top, small, firsts, seconds)


def _small_members(top: dict[str, msgspec.Raw], splits: Mapping[str, object]) -> dict[str, bytes]:
    """Canonical text of every member but the bulky lists and the checksum."""
    return {
        k: _canon(_generic.decode(v)) for k, v in top.items() if k not in splits and k != "checksum"
    }


def _digest(
    top: dict[str, msgspec.Raw],
    small: dict[str, bytes],
    firsts: dict[str, bytes],
    seconds: dict[str, bytes],
) -> str:
    """Hash the members in sorted order, each bulky list as its two halves joined."""
    digest = hashlib.sha256(b"{")
    for n, key in enumerate(sorted(k for k in top if k != "checksum")):
        digest.update((", " if n else "").encode() + _canon(key) + b": ")
        if key in firsts:
            first, second = firsts[key], seconds[key]
            digest.update(b"[" + first + (b", " if first and second else b"") + second + b"]")
        else:
            digest.update(small[key])
    digest.update(b"}")
    return CHECKSUM_PREFIX + digest.hexdigest()


def serial_checksum(data: bytes) -> str | None:
    """The same checksum in this process alone (no fork), or None (use Python's reader)."""
    with gc_paused():
        try:
            top, splits = _split(data, 0.0)
            whole = {k: _canon_items(first) for k, (first, _second) in splits.items()}
            small = _small_members(top, splits)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None
    return _digest(top, small, whole, dict.fromkeys(whole, b""))


def parallel_checksum(data: bytes) -> str | None:
    """``sha256:…`` of ``data`` (a trace) without its checksum, or None to use Python's
    reader: on two cores when it pays, else in this process."""
    job = ParallelChecksum.start(data)
    return job.result() if job is not None else serial_checksum(data)
