"""Write loom traces exactly as loom-harness lays them out (§4.1), atomically.

Layout: ``json.dump(indent=2)`` with ASCII escapes, members in the writer's
order, no trailing newline, ``checksum`` stamped last. Atomic: a temporary file
in the same directory is flushed, fsynced and renamed over the target, so a
crash never leaves a half-written trace where a good one was.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from loom_core.formats.canonical import checksum, harness_sys_hash
from loom_core.formats.document import Document
from loom_core.formats.exchanges import with_wire
from loom_core.formats.gc_pause import gc_paused
from loom_core.formats.structs import HARNESS_ORDER
from loom_core.formats.tolerant import decode_value
from loom_core.formats.trace import source_dict


def _journal_dict(doc: Document) -> dict[str, Any]:
    h = doc.header
    log = []
    assert doc.entries is not None  # a journal document always keeps its raw lines
    for raw in doc.entries:
        entry = decode_value(raw)  # an out-of-range number reads as Python does (inf)
        entry.pop("type", None)
        log.append(entry)
    pending_depth = next((u.depth for u in doc.unfinished if u.kind == "human"), 0)
    data: dict[str, Any] = {
        "version": 2,
        "model": h.model,
        "system": h.system or "",
        "prompt": h.prompt,
        "episodes": doc.episodes,
        "output": h.output or "",
        "truncated": h.truncated,
        "paused": h.paused,
        "pending": None,
        "pending_depth": pending_depth,
        "stop_reason": "",
        "log": log,
    }
    if h.system and any(
        isinstance(e.get("meta"), dict) and e["meta"].get("sys_hash") == harness_sys_hash(h.system)
        for e in log
    ):
        data["systems"] = {harness_sys_hash(h.system): h.system}
    return {k: data[k] for k in HARNESS_ORDER if k in data}


def document_dict(doc: Document) -> dict[str, Any]:
    """The trace a document becomes when saved; a loaded trace round-trips losslessly."""
    if doc.format == "journal":
        return _journal_dict(doc)
    data = source_dict(doc)
    data.pop("checksum", None)
    return data


def stamp(data: dict[str, Any]) -> dict[str, Any]:
    """Return ``data`` with a fresh checksum as its last member."""
    body = {k: v for k, v in data.items() if k != "checksum"}
    body["checksum"] = checksum(body)
    return body


def atomic_write_bytes(path: str | Path, payload: bytes, shared: bool = False) -> None:
    """Write ``payload`` to ``path`` via temp file + fsync + rename.

    The temporary file is private (0600). ``shared`` (a trace, an exported page: files
    the user shows others, as loom-harness's own writes are) gives the result the mode a
    plain write would: a replaced file keeps its mode, a new one gets 0666 less the umask.
    """
    target = Path(path)
    mode = _plain_mode(target) if shared else None
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _plain_mode(target: Path) -> int:
    """The mode ``open(target, "w")`` would leave: the old file's, else 0666 & ~umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process umask, read without changing it where the platform tells (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (a moment's window, at save time)
    os.umask(mask)
    return mask


def save_dict(data: dict[str, Any], path: str | Path) -> dict[str, Any]:
    """Stamp and write a trace dict; returns what was written."""
    with gc_paused():
        stamped = stamp(data)
        payload = json.dumps(stamped, indent=2).encode("ascii")
    atomic_write_bytes(path, payload, shared=True)
    return stamped


def save_document(
    doc: Document, path: str | Path, notes: list[str] | None = None
) -> dict[str, Any]:
    """Write any loaded document as a loom-compatible trace; a proxy journal with its
    exchange sidecar beside it keeps the raw exchanges. ``notes`` gets what to tell the
    user about that sidecar (kept, or why not)."""
    data = document_dict(doc)
    if doc.format == "journal":
        data, note = with_wire(doc.path, data)
        if note is not None and notes is not None:
            notes.append(note)
    return save_dict(data, path)
