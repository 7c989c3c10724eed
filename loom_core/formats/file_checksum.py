"""A trace file's checksum state from its mapped bytes, without loading the run.

Why: the window checks a run's checksum in a process of its own right after the run
opens (``loom_core checksum PATH``). That process loaded the whole run first -- every
effect decoded into a struct, a second full load of a big run beside the window's --
although the checksum is a function of the file's bytes alone
(:func:`loom_core.formats.fastcheck.parallel_checksum`). Here a big loom trace in
ASCII (as loom writes them) is mapped, its top level split into raw members (for the
stored checksum) and its bytes hashed. Anything else -- another format, a small file,
text that is not ASCII, a document the fast checksum cannot
canonicalise -- takes the full load as before, so what it says (and the error it
names) stays the full load's.
"""

from __future__ import annotations

import mmap
from pathlib import Path

import msgspec

from loom_core.formats.fastcheck import parallel_checksum
from loom_core.formats.loader import TRACE, load_opened, opened
from loom_core.formats.trace import checksum_state

MAP_BYTES = 4 << 20  # below this a full load is as quick as anything
_STRIDE = 8 << 20  # bytes checked per slice for ASCII
_top = msgspec.json.Decoder(dict[str, msgspec.Raw])


def file_checksum_state(path: str | Path) -> str:
    """``valid`` / ``mismatch`` / ``absent`` of the file at ``path``, as :func:`checksum_state`
    says of its loaded document."""
    opening = opened(path)
    if opening.reader is TRACE and opening.stat.st_size >= MAP_BYTES:
        with (
            open(opening.path, "rb") as fh,
            mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m,
        ):
            state = _mapped_state(m, opening.path)
        if state is not None:
            return state
    return checksum_state(load_opened(opening))


def _ascii(data: mmap.mmap) -> bool:
    return all(data[i : i + _STRIDE].isascii() for i in range(0, len(data), _STRIDE))


def _mapped_state(data: mmap.mmap, path: str) -> str | None:
    """The state from the mapped bytes, or None when the full load must decide."""
    if not _ascii(data):
        return None
    try:
        top = _top.decode(data)
        stored = msgspec.json.decode(top["checksum"]) if "checksum" in top else None
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    if stored is None or stored == "":
        return "absent"
    if not isinstance(stored, str):
        return None
    computed = parallel_checksum(data)  # type: ignore[arg-type]  # (a buffer: it is decoded)
    if computed is None:
        return None
    return "valid" if computed == stored else "mismatch"
