"""The exchange sidecar: every recorded request and response, requests stored as deltas.

Why: the context view must show exactly what each call sent, but an agent resends
its whole (growing) history on every call, so storing each request whole is
quadratic. Each request is stored against an earlier request of the same
conversation: the members that changed, plus how many leading history items
(``messages``, or a Responses ``input`` list) are reused and the items appended.
The responses are stored whole (they do not repeat), so the sidecar alone can
rebuild the full proxy trace after a crash.

File ``<base>.exchanges.jsonl`` (UTF-8, one compact JSON object per line, flushed):

``{"type": "session", "format": "loom-exchanges", "version": 1, "started_at": T, "target": URL, "scrubbed": B}``
    first line.
``{"type": "exchange", "n": N, "ts": T, "ms": MS, "path": P, "dialect": D, "request": R, "response": S, "shield_events": [..]}``
    one per recorded exchange, ``n`` = 0-based exchange index (= the wire index),
    ``ms`` = upstream latency. ``R`` is a delta: ``{"base": M|null, "keys": [member
    names in order], "set": {member: value}, "hist": "messages"|"input"|null,
    "keep": K, "append": [items]}``: start from exchange M's full request (nothing
    when null), drop members not in ``keys``, overwrite those in ``set``, history =
    M's first K items + ``append``; order members as ``keys``.
``{"type": "end", "exchanges": N, "ts": T, "stopped_by": {...}}``
    written by a clean stop; its absence means the session crashed. ``stopped_by``
    (when a signal stopped the proxy): ``{"signal": "SIGTERM", "pid": P, "uid": U,
    "command": C}`` -- the sender's pid and uid where the platform tells them (pid 0:
    the kernel, e.g. a terminal's Ctrl-C), its command line where it could be read.

Readers skip lines that do not parse (a torn last line) and exchanges whose base
was lost. A line that cannot be written (a full disk) leaves nothing behind, and
:meth:`SidecarWriter.undo` takes the last exchange back when the caller's next
file failed: a later delta never names an exchange the file does not hold.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from loom_core.formats.append_file import AppendFile
from loom_core.proxy.save_lock import SaveLock

FORMAT = "loom-exchanges"
VERSION = 1
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


def history_member(request: dict[str, Any]) -> str | None:
    """The member holding the conversation so far (``messages``, or ``input`` as a list)."""
    if isinstance(request.get("messages"), list):
        return "messages"
    if isinstance(request.get("input"), list):
        return "input"
    return None


def _common_prefix(a: list[Any], b: list[Any]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def encode_request(
    request: dict[str, Any], n: int, base: tuple[int, dict[str, Any]] | None
) -> dict[str, Any]:
    """The delta of ``request`` against ``base`` = (exchange index, full request)."""
    hist = history_member(request)
    items = request.get(hist, []) if hist else []
    if base is not None:
        bn, prev = base
        prev_hist = history_member(prev)
        keep = _common_prefix(prev.get(prev_hist) or [], items) if hist and prev_hist == hist else 0
        changed = {
            k: v for k, v in request.items() if k != hist and (k not in prev or prev[k] != v)
        }
        if keep or len(changed) < len(request) - (1 if hist else 0):
            return {
                "base": bn,
                "keys": list(request),
                "set": changed,
                "hist": hist,
                "keep": keep,
                "append": items[keep:],
            }
    return {
        "base": None,
        "keys": list(request),
        "set": {k: v for k, v in request.items() if k != hist},
        "hist": hist,
        "keep": 0,
        "append": list(items),
    }


def decode_request(delta: dict[str, Any], base: dict[str, Any] | None) -> dict[str, Any]:
    """Rebuild a full request from its delta and its base's full request."""
    hist = delta.get("hist")
    values = delta.get("set") or {}
    prev = base or {}
    prev_items = prev[hist] if hist and isinstance(prev.get(hist), list) else []
    out: dict[str, Any] = {}
    for key in delta.get("keys") or []:
        if key == hist:
            out[key] = prev_items[: delta.get("keep", 0)] + list(delta.get("append") or [])
        elif key in values:
            out[key] = values[key]
        elif key in prev:
            out[key] = prev[key]
        else:
            raise KeyError(key)
    return out


def thread_key(path: str, request: dict[str, Any]) -> bytes:
    """Which conversation a request continues: same endpoint and same first history item."""
    hist = history_member(request)
    first = request[hist][0] if hist and request[hist] else None
    return path.encode() + b"\0" + _encoder.encode(first)


class SidecarWriter:
    """Appends exchanges; each line is in the OS before :meth:`exchange` returns, or
    :meth:`exchange` raises ``OSError`` and the file is as it was."""

    def __init__(self, path: str | os.PathLike[str], target: str, scrubbed: bool) -> None:
        self.path = Path(path)
        self._file: AppendFile | None = AppendFile(self.path, truncate=True)
        self._lock = SaveLock(self.path)  # no second proxy may record here meanwhile
        self._last: dict[bytes, tuple[int, dict[str, Any]]] = {}
        self._undo: tuple[int, bytes, tuple[int, dict[str, Any]] | None] | None = None
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

    def exchange(
        self,
        n: int,
        path: str,
        dialect: str,
        request: dict[str, Any],
        response: dict[str, Any],
        events: list[dict[str, Any]],
        ms: float,
    ) -> None:
        key = thread_key(path, request)
        base = self._last.get(key)
        delta = encode_request(request, n, base)
        size = self._file.size if self._file is not None else 0
        self._line(
            {
                "type": "exchange",
                "n": n,
                "ts": time.time(),
                "ms": round(ms, 3),
                "path": path,
                "dialect": dialect,
                "request": delta,
                "response": response,
                "shield_events": events,
            }
        )
        self._last[key] = (n, request)
        self._undo = (size, key, base)
        self.count += 1

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
        """Close; ``clean`` writes the end marker (a crash never does). ``OSError``
        when the marker cannot be written: the file is closed all the same."""
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


@dataclass
class SidecarExchange:
    """One exchange read back, its request rebuilt in full."""

    n: int
    ts: float
    ms: float
    path: str
    dialect: str
    request: dict[str, Any]
    response: dict[str, Any]
    shield_events: list[dict[str, Any]]


@dataclass
class Sidecar:
    """What a sidecar file holds."""

    session: dict[str, Any] | None = None
    exchanges: list[SidecarExchange] = field(default_factory=list)
    ended: bool = False
    end: dict[str, Any] | None = None  # the end record (who stopped the proxy, when)
    skipped: int = 0


def iter_lines(data: bytes) -> Iterator[dict[str, Any] | None]:
    for line in data.split(b"\n"):
        if line.strip():
            try:
                obj = _decoder.decode(line)
            except msgspec.DecodeError:
                yield None
                continue
            yield obj if isinstance(obj, dict) else None


def is_session_line(obj: object) -> bool:
    """Whether ``obj`` (a decoded first line) opens an exchange sidecar."""
    return isinstance(obj, dict) and obj.get("type") == "session" and obj.get("format") == FORMAT


def read_sidecar(path: str | os.PathLike[str]) -> Sidecar:
    """Read and rebuild every exchange of a sidecar file."""
    return parse_sidecar(Path(path).read_bytes())


def parse_sidecar(data: bytes) -> Sidecar:
    """Rebuild every exchange of a sidecar's bytes."""
    out = Sidecar()
    full: dict[int, dict[str, Any]] = {}
    for obj in iter_lines(data):
        kind = obj.get("type") if obj else None
        if kind == "session":
            out.session = obj
        elif kind == "end":
            out.ended, out.end = True, obj
        elif kind == "exchange" and obj is not None:
            try:
                delta, base = obj["request"], obj["request"].get("base")
                request = decode_request(delta, full[base] if base is not None else None)
                n = int(obj["n"])
                full[n] = request
                out.exchanges.append(
                    SidecarExchange(
                        n,
                        float(obj.get("ts", 0)),
                        float(obj.get("ms", 0)),
                        str(obj.get("path", "")),
                        str(obj.get("dialect", "")),
                        request,
                        obj["response"],
                        list(obj.get("shield_events") or []),
                    )
                )
            except (KeyError, TypeError, ValueError, AttributeError):
                out.skipped += 1
        else:
            out.skipped += 1
    return out
