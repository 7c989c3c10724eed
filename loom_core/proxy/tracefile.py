"""Rewrite a growing proxy trace cheaply: each log/wire entry is serialized once.

Why: the trace file must stay a complete, checksummed loom trace while the run goes
on, but re-serializing the whole (ever longer) trace on every save is what makes
loom-harness's proxy stall. A proxy trace only grows at the end of ``log`` and
``wire``, so this writer keeps, per growing member, the canonical JSON of its
entries so far (for the checksum, §2.1) and their pretty form (the §4.1 layout)
in two append-only buffers. A save serializes only the new entries (pure Python:
the session does it on the event loop in small slices), then hashes and writes
the buffers in a worker thread -- C calls that release the GIL, so the request
path is not starved. The bytes are exactly what :func:`loom_core.formats.save.save_dict`
writes.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from loom_core.formats.canonical import CHECKSUM_PREFIX
from loom_core.formats.fastdumps import exact, python_text, sorted_text

_GROWING = ("log", "wire")
Chunk = bytes | bytearray


def _pretty(value: Any, depth: int) -> bytes:
    """``json.dumps(value, indent=2)`` as it appears nested ``depth`` levels deep."""
    return _forms(value, depth)[1]


def _forms(value: Any, depth: int) -> tuple[bytes, bytes]:
    """``value``'s canonical JSON (for the checksum) and its pretty form, nested
    ``depth`` levels deep: Python's bytes, made from one msgspec encoding.

    ``indent`` makes :mod:`json` use its pure-Python encoder, and a trace entry is
    serialized both ways: msgspec encodes it once, sorts it for the checksum and lays
    it out (it only moves whitespace outside strings), with :mod:`json`'s escapes
    (:mod:`loom_core.formats.fastdumps`). What msgspec cannot spell as Python does
    (floats, ``NaN``...) takes the plain :mod:`json` path.
    """
    fast = exact(value)
    if fast is not None:
        compact, back = fast
        canon, text = sorted_text(back), python_text(compact, indent=2)
    else:
        canon = json.dumps(value, sort_keys=True, default=str).encode("ascii")
        try:
            text = msgspec.json.format(json.dumps(value).encode("ascii"), indent=2)
        except msgspec.DecodeError:
            text = json.dumps(value, indent=2).encode("ascii")
    return canon, text.replace(b"\n", b"\n" + b"  " * depth) if depth else text


class TraceFile:
    """One trace path and the serialized form of what was already written to it.

    Not thread-safe: :meth:`serialize_new` must not run while :meth:`write_chunks`
    does (the session's single saver task guarantees it). The ``log`` / ``wire``
    lists handed in must only ever grow; their entries never change.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._canonical = {m: bytearray() for m in _GROWING}
        self._pretty = {m: bytearray() for m in _GROWING}
        self._count = {m: 0 for m in _GROWING}

    def serialize_new(self, data: dict[str, Any], limit: int | None = None) -> bool:
        """Serialize up to ``limit`` entries not seen yet; True once all of ``data``'s are."""
        budget = limit
        for member in _GROWING:
            items = data.get(member) or []
            if len(items) < self._count[member]:
                raise ValueError(f"{member} shrank: the trace is append-only")
            for item in items[self._count[member] :]:
                if budget is not None:
                    if budget <= 0:
                        return False
                    budget -= 1
                first = not self._count[member]
                canon, text = _forms(item, 2)
                self._canonical[member] += (b"" if first else b", ") + canon
                self._pretty[member] += (b"    " if first else b",\n    ") + text
                self._count[member] += 1
        return True

    def chunks(self, data: dict[str, Any]) -> tuple[list[Chunk], list[Chunk]]:
        """(what the checksum hashes, the file without its checksum line), by reference."""
        if not self.serialize_new(data):
            raise AssertionError("unreachable")
        body = {k: v for k, v in data.items() if k != "checksum"}
        for member in _GROWING:
            if len(body.get(member) or []) != self._count[member]:
                raise ValueError(f"{member} is shorter than what was already written")
        hashed: list[Chunk] = [b"{"]
        for i, key in enumerate(sorted(body)):
            hashed.append((b", " if i else b"") + json.dumps(key).encode() + b": ")
            if key in _GROWING:
                hashed += [b"[", self._canonical[key], b"]"]
            else:
                hashed.append(json.dumps(body[key], sort_keys=True, default=str).encode("ascii"))
        hashed.append(b"}")
        text: list[Chunk] = [b"{\n"]
        for key, value in body.items():
            text.append(b"  " + json.dumps(key).encode("ascii") + b": ")
            if key in _GROWING:
                text += [b"[\n", self._pretty[key], b"\n  ]"] if value else [b"[]"]
            else:
                text.append(_pretty(value, 1))
            text.append(b",\n")
        return hashed, text

    def write_chunks(self, hashed: list[Chunk], text: list[Chunk]) -> None:
        """Hash, then write atomically (temp file, fsync, rename); GIL-friendly."""
        digest = hashlib.sha256()
        for chunk in hashed:
            digest.update(chunk)
        checksum = CHECKSUM_PREFIX + digest.hexdigest()
        tail = b'  "checksum": ' + json.dumps(checksum).encode() + b"\n}"
        fd, tmp = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent or "."
        )
        try:
            with os.fdopen(fd, "wb") as fh:
                for chunk in [*text, tail]:
                    fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def write(self, data: dict[str, Any]) -> None:
        """Serialize what is new and write, all at once (tests, one-off saves)."""
        self.write_chunks(*self.chunks(data))
