"""Shield decisions in a live proxy tab, read from the exchange sidecar beside the journal.

Why the sidecar (``<base>.exchanges.jsonl``) and not the proxy's event stream: files
are the interface. The sidecar holds every exchange's ``shield_events`` since the
session started, so a tab opened late, a proxy re-attached after the app restarted,
or a journal opened by hand (File ▸ Watch) all show the same decisions, with no token
and no connection. The proxy writes an exchange's sidecar line before its journal
lines, so once the tab has indexed exchange ``n``'s model step (every exchange
records exactly one model effect) the sidecar already holds its decisions.

Placement is the finished trace's (:class:`loom_core.views.shield_place.Placer`), run again
over every event of the indexed exchanges whenever a model step arrives (the placer
keeps what it read of each step, so this is cheap): the live tab shows what opening
the trace would, and a decision never sits on a step its exchange has not reached.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from loom_core.formats.header import Wrong, coerce
from loom_core.formats.structs import ShieldEvent
from loom_core.views.shield_place import Placer  # the finished trace's placement
from loom_core.views.timeline import F_DENIED, F_SHIELD, K_MODEL, Timeline

_SUFFIX, _SIDECAR = ".journal.jsonl", ".exchanges.jsonl"


class _Line(msgspec.Struct):
    """What we need of a sidecar line (msgspec skips the bulky request and response)."""

    type: str = ""
    n: int = -1
    shield_events: list[dict[str, Any]] = []


_decode = msgspec.json.Decoder(_Line)


def sidecar_of(journal: str | os.PathLike[str]) -> Path | None:
    """The exchange sidecar of a proxy journal, or None for any other file."""
    name = os.fspath(journal)
    return Path(name[: -len(_SUFFIX)] + _SIDECAR) if name.endswith(_SUFFIX) else None


class SidecarEvents:
    """``shield_events`` per exchange of a growing sidecar (complete lines only).

    A file replaced or truncated (a new session with the same ``--save``) starts over.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.by_exchange: list[list[dict[str, Any]]] = []
        self._offset = 0
        self._ident: tuple[int, int] | None = None

    def read(self) -> bool:
        """Take in complete new lines; True if the per-exchange lists were reset."""
        try:
            with open(self.path, "rb") as f:
                st = os.fstat(f.fileno())
                reset = (st.st_dev, st.st_ino) != self._ident or st.st_size < self._offset
                if reset:
                    self.by_exchange, self._offset = [], 0
                self._ident = (st.st_dev, st.st_ino)
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return False
        cut = data.rfind(b"\n") + 1
        self._offset += cut
        for raw in data[:cut].split(b"\n"):
            self._take(raw)
        return reset

    def _take(self, raw: bytes) -> None:
        if not raw.strip():
            return
        try:
            line = _decode.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return  # readers skip what does not parse (sidecar.py says so)
        if line.type == "exchange" and line.n >= len(self.by_exchange):
            self.by_exchange.extend([] for _ in range(line.n - len(self.by_exchange)))
            self.by_exchange.append(list(line.shield_events))


class LiveShield:
    """Keeps a live tab's shield decisions placed as its timeline grows."""

    def __init__(self, journal: str | os.PathLike[str]) -> None:
        path = sidecar_of(journal)
        self.source = SidecarEvents(path) if path is not None else None
        self.events: list[ShieldEvent] = []
        self._tl: Timeline | None = None
        self._placer: Placer | None = None
        self._model_steps: list[int] = []
        self._taken = 0  # sidecar events read into ``events`` (a badly typed one is skipped)

    @property
    def proxy(self) -> bool:
        """Whether the journal is a recording proxy's (its sidecar exists)."""
        return self.source is not None and self.source.path.exists()

    def refresh(self, tl: Timeline) -> set[int]:
        """Place what is new; returns the steps whose shield flags changed."""
        if self.source is None:
            return set()
        if tl is not self._tl or self._placer is None:
            self._tl, self._placer, self._model_steps, self.events = tl, Placer(tl), [], []
            self._taken = 0
        seen = len(self._model_steps)
        self._model_steps.extend(
            s
            for s in range(self._model_steps[-1] + 1 if seen else 0, len(tl))
            if tl.kind[s] == K_MODEL
        )
        if len(self._model_steps) == seen:
            return set()  # events are taken with their exchange's model step
        if self.source.read():
            self.events, self._taken = [], 0
        ready = self.source.by_exchange[: len(self._model_steps)]
        flat = [e for events in ready for e in events]
        self.events.extend(_events(flat[self._taken :]))
        self._taken = len(flat)
        tl.doc.header.shield_events = self.events  # what the context view names
        return self._apply(tl, self._placer.place(self.events, self._model_steps))

    def _apply(self, tl: Timeline, where: list[int | None]) -> set[int]:
        """Set ``tl.shield_at`` and the flags as :func:`build_timeline` does."""
        placed: dict[int, list[int]] = {}
        for idx, k in enumerate(where):
            if k is not None:
                placed.setdefault(self._model_steps[k], []).append(idx)
        before = tl.shield_at
        for step in before:
            tl.flags[step] &= ~(F_SHIELD | F_DENIED) & 0xFF
        for step, idxs in placed.items():
            tl.flags[step] |= F_SHIELD
            if any(self.events[e].action == "deny" for e in idxs):
                tl.flags[step] |= F_DENIED
        tl.shield_at = placed
        return {s for s in set(before) | set(placed) if before.get(s) != placed.get(s)}


def _events(raw: list[Any]) -> list[ShieldEvent]:
    """The sidecar's events as the trace's type; one the type does not take (a hand-edited
    or foreign sidecar) is left out, as a line that does not parse is."""
    out = []
    for value in raw:
        try:
            out.append(coerce(ShieldEvent, value))
        except Wrong:
            continue
    return out
