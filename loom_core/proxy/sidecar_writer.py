"""Write the exchange sidecar (format: :mod:`.sidecar`) from raw request parts.

Why raw: a request's delta against its conversation's previous request -- which
members changed, how many leading history items are the same -- is a byte
comparison per member and per item on a :class:`.rawreq.RawRequest`, and what
changed goes into the line as the client's own bytes. Decoding the body into
Python objects, comparing nested dicts and encoding them again cost several times
more, on every exchange, on the client's wait.

:meth:`SidecarWriter.delta` finds the delta without writing (the recorder uses it to
skip the history items it already scanned: :class:`~loom_core.formats.wire.WireRecorder`),
:meth:`SidecarWriter.write` appends the line, :meth:`SidecarWriter.undo` takes the
last one back. A line is in the OS when ``write`` returns, or ``write`` raises
``OSError`` and the file is as it was (:mod:`loom_core.formats.append_file`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from loom_core.formats.append_file import AppendFile
from loom_core.proxy.rawreq import RawRequest
from loom_core.proxy.save_lock import SaveLock
from loom_core.proxy.sidecar import FORMAT, VERSION

_encoder = msgspec.json.Encoder()
Base = tuple[int, RawRequest]  # (exchange index, its request)


@dataclass(slots=True)
class Delta:
    """One request against its conversation's previous one (not written yet)."""

    key: bytes  # the conversation: endpoint and first history item
    request: RawRequest
    base: Base | None
    keep: int  # leading history items equal to the base's
    doc: dict[str, Any]  # the line's "request" member

    @property
    def known(self) -> tuple[int, int] | None:
        """(base exchange, shared items) for the recorder, when there is a base."""
        return None if self.base is None else (self.base[0], self.keep)


def _common_prefix(a: list[msgspec.Raw], b: list[msgspec.Raw]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def delta_of(path: str, request: RawRequest, base: Base | None) -> Delta:
    """The delta of ``request`` against ``base`` (see the format in :mod:`.sidecar`)."""
    members, hist, items = request.members, request.hist, request.items
    key = path.encode() + b"\0" + (bytes(items[0]) if items else b"null")
    if base is not None:
        bn, prev = base
        keep = _common_prefix(prev.items, items) if hist and prev.hist == hist else 0
        old = prev.members
        changed = {k: v for k, v in members.items() if k != hist and old.get(k) != v}
        if keep or len(changed) < len(members) - (1 if hist else 0):
            doc = {
                "base": bn,
                "keys": list(members),
                "set": changed,
                "hist": hist,
                "keep": keep,
                "append": items[keep:],
            }
            return Delta(key, request, base, keep, doc)
    doc = {
        "base": None,
        "keys": list(members),
        "set": {k: v for k, v in members.items() if k != hist},
        "hist": hist,
        "keep": 0,
        "append": items,
    }
    return Delta(key, request, None, 0, doc)


class SidecarWriter:
    """Appends exchanges; see the module docstring."""

    def __init__(self, path: str | os.PathLike[str], target: str, scrubbed: bool) -> None:
        self.path = Path(path)
        self._file: AppendFile | None = AppendFile(self.path, truncate=True)
        self._lock = SaveLock(self.path)  # no second proxy may record here meanwhile
        self._last: dict[bytes, Base] = {}
        self._undo: tuple[int, bytes, Base | None] | None = None
        self.count = 0
        self._line(
            {
                "type": "session",
                "format": FORMAT,
                "version": VERSION,
                "started_at": time.time(),
                "target": target,
                "scrubbed": scrubbed,
            }
        )

    def delta(self, path: str, request: RawRequest) -> Delta:
        """``request``'s delta against the last written request of its conversation;
        ``request`` takes that one's decoded values where the bytes are the same."""
        items = request.items
        key = path.encode() + b"\0" + (bytes(items[0]) if items else b"null")
        base = self._last.get(key)
        if base is not None:
            request.inherit(base[1])
        return delta_of(path, request, base)

    def current(self, delta: Delta) -> bool:
        """``delta`` (from :meth:`delta`) is still against its conversation's last request."""
        return self._last.get(delta.key) is delta.base

    def write(
        self,
        n: int,
        path: str,
        dialect: str,
        delta: Delta,
        response: dict[str, Any] | msgspec.Raw,
        events: list[dict[str, Any]],
        ms: float,
    ) -> None:
        """Append exchange ``n`` (``response``: the object, or its compact JSON)."""
        size = self._file.size if self._file is not None else 0
        self._line(
            {
                "type": "exchange",
                "n": n,
                "ts": time.time(),
                "ms": round(ms, 3),
                "path": path,
                "dialect": dialect,
                "request": delta.doc,
                "response": response,
                "shield_events": events,
            }
        )
        self._undo = (size, delta.key, self._last.get(delta.key))
        self._last[delta.key] = (n, delta.request)
        self.count += 1

    def exchange(
        self,
        n: int,
        path: str,
        dialect: str,
        request: dict[str, Any] | RawRequest,
        response: dict[str, Any],
        events: list[dict[str, Any]],
        ms: float,
    ) -> None:
        """:meth:`delta` and :meth:`write` at once (a decoded request is accepted)."""
        raw = RawRequest.of(request) if isinstance(request, dict) else request
        self.write(n, path, dialect, self.delta(path, raw), response, events, ms)

    def undo(self) -> None:
        """Take the last exchange back (the caller could not record it elsewhere)."""
        if self._undo is None or self._file is None:
            return
        size, key, base = self._undo
        self._undo = None
        self._file.cut(size)
        if base is None:
            del self._last[key]
        else:
            self._last[key] = base
        self.count -= 1

    def close(self, clean: bool, stopped_by: dict[str, Any] | None = None) -> None:
        """Close; ``clean`` writes the end marker (a crash never does), with
        ``stopped_by`` when a signal stopped the proxy. ``OSError`` when the marker
        cannot be written: the file is closed all the same."""
        if self._file is None:
            return
        try:
            if clean:
                end: dict[str, Any] = {"type": "end", "exchanges": self.count, "ts": time.time()}
                self._line({**end, "stopped_by": stopped_by} if stopped_by else end)
        finally:
            self._file.close()
            self._file = None
            self._lock.release()

    def _line(self, obj: dict[str, Any]) -> None:
        assert self._file is not None, "sidecar closed"
        self._file.append(_encoder.encode(obj) + b"\n")
