"""Whether a run's load fits in the memory this process may still use, decided before it is read.

Why: a file too big for the memory left was read and decoded until an allocation failed
somewhere inside (a 10 GB trace under a 12 GB limit): the command line printed a
``MemoryError`` traceback, the window a dialog that said only "MemoryError:", and where
nothing limits the process the kernel's out-of-memory killer ends it (or a neighbour).
The whole load is read into memory (or mapped, and then what it builds stays), so its
peak is known from the file's size before a byte is read: a file that cannot fit is
refused at once, naming the file and the cause, and an allocation that fails anyway
becomes the same kind of error.

The peaks per byte of file are lower bounds (measured on the loom traces of
``benchmarks/synth.py``, docs/PERFORMANCE.md): a refusal means the load surely cannot fit;
a load that passes may still fail, and then says so in the same words.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from loom_core.errors import LoadError

T = TypeVar("T")

# peak memory ÷ file size of a whole load, lower bounds: a loom trace (or any JSON document)
# decoded whole measured at 1.96x resident, 2.1x of address space at 1,000,000 effects (the
# command line's summary of a 10,000,000-effect trace: 1.85x); line-based files are read
# whole at least
JSON_PEAK_PER_BYTE = 1.75
LINES_PEAK_PER_BYTE = 1.0
# a big loom trace in loom-harness's layout as the window opens it (formats.progressive: the
# log decoded a run of entries at a time into the timeline's columns, the effects left as
# views into the file's buffer): 1.18x resident at 1,000,000 effects, 1.21x (1.22x of
# address space) at 10,000,000. Refused at 1.75x, a 10 GB run was turned away with
# "needs about 18.2 GB" on machines where it opened in 12.5 GB.
LAYOUT_PEAK_PER_BYTE = 1.15
# the same, mapped instead of read (formats.mapped_file, the window on Linux): the file's
# pages are let go as the load passes them, so what stays resident is what it builds,
# 0.28x at 1,000,000 effects; the mapping still takes the file's size of address space
MAPPED_PEAK_PER_BYTE = 0.25
_JSON_START = (b"{", b"\xef\xbb\xbf{")
GB = 1e9


def peak_per_byte(head: bytes) -> float:
    """The load's peak memory per byte of a file that starts with ``head``."""
    return JSON_PEAK_PER_BYTE if head.lstrip().startswith(_JSON_START) else LINES_PEAK_PER_BYTE


def available_bytes() -> int | None:
    """Memory this process may still take: the smaller of what its address-space limit
    leaves (``ulimit -v``, ``prlimit --as``) and what the system has available (Linux's
    ``MemAvailable`` plus free swap); None where neither is known (then nothing is refused)."""
    bounds = [b for b in (_limit_left(), _system_available()) if b is not None]
    return min(bounds) if bounds else None


def _limit_left() -> int | None:
    try:
        import resource  # POSIX only (Windows has no address-space limit to read)
    except ImportError:
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:  # the process's present virtual size: the limit counts it
        pages = int(Path("/proc/self/statm").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(0, soft - pages * os.sysconf("SC_PAGE_SIZE"))


def _system_available() -> int | None:
    try:
        lines = Path("/proc/meminfo").read_text().splitlines()
    except OSError:
        return None
    fields = {k: v.split() for k, _, v in (line.partition(":") for line in lines)}
    try:
        kib = int(fields["MemAvailable"][0]) + int(fields.get("SwapFree", ["0"])[0])
    except (KeyError, ValueError, IndexError):
        return None
    return kib * 1024


def check_room(
    path: str | Path, size: int, head: bytes, per_byte: float | None = None, mapped: bool = False
) -> None:
    """Refuse (:class:`LoadError`) a file whose load cannot fit in the memory left;
    ``per_byte``: the load's own peak per byte where its caller knows it (else the
    format's, from ``head``). ``mapped``: the file is mapped, not read, so the memory
    the system has must hold what the load builds, and the address-space limit that
    and the mapping."""
    need = int(size * (per_byte or peak_per_byte(head)))
    if mapped:
        _refuse_over(path, size, need, _system_available())
        _refuse_over(path, size, need + size, _limit_left())
    else:
        _refuse_over(path, size, need, available_bytes())


def _refuse_over(path: str | Path, size: int, need: int, available: int | None) -> None:
    if available is not None and need > available:
        raise LoadError(path, f"too big for the memory left: {_needs(size, need, available)}")


def _needs(size: int, need: int, available: int) -> str:
    return (
        f"opening this {size / GB:.1f} GB file needs about {need / GB:.1f} GB of memory, "
        f"{available / GB:.1f} GB available"
    )


def out_of_memory(path: str | Path, size: int, load: Callable[[], T]) -> T:
    """``load()``, its ``MemoryError`` (an allocation the check above let through)
    turned into a :class:`LoadError` naming the file, once what the load held is freed
    (the error's frames hold the buffers until the ``except`` clause ends)."""
    try:
        return load()
    except MemoryError:
        pass
    available = available_bytes()
    known = f", {available / GB:.1f} GB available" if available is not None else ""
    raise LoadError(path, f"ran out of memory opening this {size / GB:.1f} GB file{known}")
