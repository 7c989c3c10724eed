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
the writer (:mod:`.sidecar_writer`) takes the last exchange back when the caller's
next file failed: a later delta never names an exchange the file does not hold.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

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
