"""A proxy's exchange sidecar (``<base>.exchanges.jsonl``) read as the run it recorded.

Why: the sidecar holds every exchange whole (each request rebuilt from its delta,
each response as delivered), so on its own it rebuilds the proxy's trace -- by the
same replay the proxy does live and when it recovers a crashed session
(:class:`~.wire.WireRecorder`). A proxy journal, by contrast, holds only the
effects; converted with its sidecar beside it, the trace also keeps the raw
exchanges (``wire``), exactly as the proxy's own trace does -- but only when the
sidecar recorded exactly the journal's effects (a sidecar left from another session
with the same name is never mixed in).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from loom_core.errors import LoadError
from loom_core.formats.document import Document
from loom_core.formats.wire import WireRecorder
from loom_core.formats.wirelog import recorded_document
from loom_core.proxy.sidecar import SidecarExchange, parse_sidecar

JOURNAL_SUFFIX, SIDECAR_SUFFIX = ".journal.jsonl", ".exchanges.jsonl"
_BAD_SHAPE = (TypeError, AttributeError, KeyError, IndexError, ValueError)


def replay(exchanges: Iterable[SidecarExchange]) -> tuple[WireRecorder, int]:
    """Every exchange into a recorder, as the proxy recorded it; also count the ones that
    are not shaped like any dialect (they leave nothing behind, as in the proxy)."""
    recorder, bad = WireRecorder(), 0
    for x in exchanges:
        first = len(recorder.log)
        try:
            recorder.record(x.request, x.response, x.shield_events)
        except _BAD_SHAPE:
            del recorder.log[first:]
            bad += 1
    return recorder, bad


def load_exchanges_bytes(data: bytes, path: str) -> Document:
    """Parse a sidecar into a :class:`Document` shaped like the trace the proxy wrote."""
    side = parse_sidecar(data)
    recorder, bad = replay(side.exchanges)
    if not recorder.wire:
        raise LoadError(path, "a proxy exchange sidecar with no complete exchange to convert")
    return recorded_document(recorder, path, "exchanges", side.skipped + bad)


def sidecar_beside(journal: str | Path) -> Path | None:
    """``<base>.exchanges.jsonl`` when ``journal`` is a proxy's ``<base>.journal.jsonl``
    and the sidecar is there."""
    name = str(journal)
    if not name.endswith(JOURNAL_SUFFIX):
        return None
    side = Path(name[: -len(JOURNAL_SUFFIX)] + SIDECAR_SUFFIX)
    return side if side.is_file() else None


def with_wire(journal: str | Path, data: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``data`` (a journal as a trace dict) rebuilt with its raw exchanges from the sidecar
    beside the journal, and a note saying so; or ``data`` as is and why the sidecar was not
    used (``None``: there is no sidecar)."""
    side = sidecar_beside(journal)
    if side is None:
        return data, None
    without = "converted without the raw exchanges"
    try:
        exchanges = parse_sidecar(side.read_bytes()).exchanges
    except OSError as err:
        return data, f"{side}: cannot read ({err.strerror or err}); {without}"
    models = sum(1 for e in data.get("log") or [] if e.get("kind") == "model")
    mine = sorted((x for x in exchanges if x.n < models), key=lambda x: x.n)
    if [x.n for x in mine] != list(range(models)):
        return data, f"{side}: lacks some of this journal's exchanges; {without}"
    recorder, bad = replay(mine)
    rebuilt = recorder.to_trace()
    if bad or rebuilt["log"] != data.get("log"):
        return data, f"{side}: its exchanges are not this journal's; {without}"
    return rebuilt, f"kept the {models} raw exchange(s) from {side}"
