"""Fork mode: the proxy replays a recorded run up to a fork point, then goes live edited.

Why in the proxy: an external agent (any SDK, any language) cannot be driven from
outside, so it is simply re-run against a proxy that answers its first ``n`` model
calls from the parent recording and forwards the rest, edited, to a real model
(loom-format.md §6.10). The proxy records everything as usual, so its trace *is*
the branch: the prefix exchanges with the recorded responses (identical effects),
then the live tail.

Requests are matched **by content**, not position (:func:`.forkwire.request_digest`:
normalised system, each history message's role, text, tool calls and results, the
tool names). A request that matches an unused recorded exchange before the fork
point is answered from the recording -- JSON, or SSE synthesized by
:mod:`.synthesize` when it asked for a stream -- with zero upstream calls. The
request matching exchange ``n`` -- or, once the agent has made ``n`` calls,
whatever comes next -- is the fork point: it and every later request go live with
the edit applied in their own dialect. A request before the fork point that matches
nothing means the agent diverged early: it goes live unedited and a
``fork.diverged`` event is noted (and printed). Without the parent's exchange
sidecar (a trace written by loom-harness) the recorded requests are unknown and the
prefix is served by position instead (``matching == "position"``).

Edits: ``system`` replaced and ``model`` / ``temperature`` / ``max_tokens``
overridden on the fork agent's requests (those whose system has the fork request's
``sys_hash``); ``inject`` merged into the last user turn of the fork request and
re-applied at the same place in every later request of that conversation (the agent
never saw the edited request, so it resends the original history); ``redact``
(effect seqs of the parent) replaces those tool results in every live request.
"""

from __future__ import annotations

import copy
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from loom_core.fork.edits import Edit
from loom_core.formats.wire import dialect_of, proxy_sys_hash
from loom_core.proxy.config import ProxyConfig, SessionPaths
from loom_core.proxy.forkwire import (
    ForkError,
    check_agent_edit,
    conversation,
    merge_note,
    reapply_note,
    redact_results,
    request_digest,
    set_sampling,
    set_system,
)
from loom_core.proxy.reconstruct import path_dialect
from loom_core.proxy.sidecar import read_sidecar, thread_key
from loom_core.proxy.synthesize import synthesize

__all__ = ["ForkError", "ForkSource", "fork_source"]

MODEL_PATHS = ("/messages", "/chat/completions", "/responses")


def _read_trace(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as err:
        raise ForkError(f"{path}: cannot read a trace ({err})") from err
    if not isinstance(data, dict) or not isinstance(data.get("wire"), list) or not data["wire"]:
        raise ForkError(f"{path} has no recorded wire traffic; fork mode needs a proxy recording")
    return data


def _redact_ids(log: Any, seqs: list[int], path: Path) -> set[str]:
    """The call ids of the tool results the edit redacts (given as the parent's seqs)."""
    by_seq = {e.get("seq"): e for e in log or [] if isinstance(e, dict)}
    ids = set()
    for seq in seqs:
        entry = by_seq.get(seq) or {}
        tuid = (entry.get("meta") or {}).get("tuid")
        if not str(entry.get("kind", "")).startswith("tool:") or not tuid:
            raise ForkError(f"{path}: redact: step {seq} is not a recorded tool result")
        ids.add(str(tuid))
    return ids


def _recorded_requests(path: Path, wire: list[Any], n: int) -> tuple[list[Any] | None, str]:
    """The parent's requests 0..n from its sidecar (None without one) and its target."""
    side = SessionPaths.of(path).exchanges
    if not side.exists():
        return None, ""
    try:
        sidecar = read_sidecar(side)
    except OSError as err:
        raise ForkError(f"{side}: cannot read the exchange sidecar ({err})") from err
    by_n = {x.n: x for x in sidecar.exchanges}
    for x in sidecar.exchanges:
        if x.n >= len(wire) or x.response != wire[x.n]:
            raise ForkError(f"{side} does not belong to {path} (exchange {x.n} differs)")
    if any(k not in by_n for k in range(n + 1)):
        return None, ""  # a crashed, partly unreadable sidecar: fall back to positions
    target = str((sidecar.session or {}).get("target") or "")
    return [by_n[k] for k in range(n + 1)], target


class ForkSource:
    """The parent recording, the fork point and the edit; decides each request's fate."""

    def __init__(self, path: str | Path, n: int, edit: Edit) -> None:
        self.path = Path(path)
        data = _read_trace(self.path)
        self.wire: list[dict[str, Any]] = data["wire"]
        if not 0 <= n < len(self.wire):
            raise ForkError(
                f"{path}: fork exchange {n} is out of range (the recording has "
                f"{len(self.wire)} model call(s))"
            )
        check_agent_edit(edit)
        self.n, self.edit = n, edit
        self.redact_ids = _redact_ids(data.get("log"), list(edit.redact), self.path)
        recorded, self.recorded_target = _recorded_requests(self.path, self.wire, n)
        self.matching = "content" if recorded else "position"
        self.prefix: dict[str, list[int]] = {}
        self.fork_digest: str | None = None
        self.fork_sys: str | None = None
        if recorded:
            for x in recorded[:n]:
                self.prefix.setdefault(request_digest(x.request, x.dialect), []).append(x.n)
            last = recorded[n]
            self.fork_digest = request_digest(last.request, last.dialect)
            self.fork_sys = proxy_sys_hash(conversation(last.request, last.dialect)[0])
        self.arrivals = self.served = self.live = 0
        self.reached = False
        self.diverged: list[int] = []  # arrival numbers of early, unmatched requests
        self.fork_request: dict[str, Any] | None = None  # the fork request as forwarded
        self.fork_path = ""
        self.notes: dict[bytes, tuple[str, int]] = {}  # conversation -> where the note goes
        self.events: list[dict[str, Any]] = []
        self.listeners: list[Callable[[dict[str, Any]], None]] = []

    def route(
        self, path: str, body: bytes, request: dict[str, Any], session: Any
    ) -> web.StreamResponse | tuple[bytes, dict[str, Any]]:
        """A reply served (and recorded in ``session``) from the recording, or the
        ``(body, request)`` to forward live -- edited from the fork point on."""
        bare = path.split("?", 1)[0].rstrip("/")
        if not bare.endswith(MODEL_PATHS):
            return body, request  # token counts & co: not a model call, forwarded as is
        i, dialect = self.arrivals, path_dialect(bare)
        self.arrivals += 1
        if not self.reached:
            k = self._match(i, request, dialect)
            if k is not None:
                return self._serve(bare, request, k, session)
            if (
                self.fork_digest is None
                or i >= self.n
                or request_digest(request, dialect) == self.fork_digest
            ):
                self.reached = True
                self._event("fork.point", request=i, exchange=getattr(session, "exchanges", 0))
            else:
                self.diverged.append(i)
                self.live += 1
                self._event("fork.diverged", request=i, fork_at=self.n)
                print(
                    f"loom proxy: fork: model call #{i} does not match the recording before "
                    f"the fork point (exchange {self.n}); forwarded live",
                    file=sys.stderr,
                    flush=True,
                )
                return body, request
        edited = self._apply(path, dialect, request)
        self.live += 1
        return json.dumps(edited).encode(), edited

    def _match(self, i: int, request: dict[str, Any], dialect: str) -> int | None:
        """The recorded exchange this prefix request gets, if any (each is used once)."""
        if self.fork_digest is None:
            return i if i < self.n else None
        waiting = self.prefix.get(request_digest(request, dialect))
        return waiting.pop(0) if waiting else None

    def _serve(self, path: str, request: dict[str, Any], k: int, session: Any) -> web.Response:
        response = self.wire[k]
        session.record(path, dialect_of(response), request, response, [], 0.0)
        self.served += 1
        if request.get("stream"):
            return web.Response(
                body=synthesize(response),
                content_type="text/event-stream",
                headers={"cache-control": "no-cache"},
            )
        return web.Response(body=json.dumps(response).encode(), content_type="application/json")

    def _apply(self, path: str, dialect: str, request: dict[str, Any]) -> dict[str, Any]:
        """A copy of ``request`` with the edit applied (see the module docstring)."""
        edit, req = self.edit, copy.deepcopy(request)
        if self.redact_ids:
            redact_results(req, dialect, self.redact_ids, edit.redact_text)
        if edit.inject:
            thread = thread_key(path, request)
            spot = self.notes.get(thread)
            if spot is not None:
                reapply_note(req, dialect, edit.inject, spot)
            elif self.fork_request is None:
                self.notes[thread] = merge_note(req, dialect, edit.inject)
        sys_hash = proxy_sys_hash(conversation(request, dialect)[0])
        if self.fork_sys is None:
            self.fork_sys = sys_hash  # position matching: the fork request names the agent
        if sys_hash == self.fork_sys:
            if edit.system is not None:
                set_system(req, dialect, edit.system)
            set_sampling(req, dialect, edit)
        if self.fork_request is None:
            self.fork_request, self.fork_path = req, path
        return req

    def _event(self, kind: str, **info: Any) -> None:
        event = {"ts": time.time(), "event": kind, **info}
        self.events.append(event)
        for listener in list(self.listeners):
            listener(event)

    def stats(self) -> dict[str, Any]:
        """Counters for a status view and the branch's provenance."""
        return {
            "fork_at": self.n,
            "matching": self.matching,
            "served": self.served,
            "live": self.live,
            "reached": self.reached,
            "diverged": list(self.diverged),
        }


def fork_source(config: ProxyConfig) -> ForkSource | None:
    """The fork source ``--fork-from/--fork-at/--fork-edit`` ask for (None without them)."""
    if not config.fork_from:
        return None
    if config.replay:
        raise ForkError("--fork-from and --replay cannot be combined")
    try:
        edit = Edit.from_dict(config.fork_edit or {})
    except TypeError as err:
        raise ForkError(f"--fork-edit: not an edit ({err})") from err
    return ForkSource(config.fork_from, config.fork_at, edit)
