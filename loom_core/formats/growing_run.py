"""The :class:`Document` of a foreign run that grows at its end, each effect decoded once.

Why: :meth:`RunBuilder.document <loom_core.formats.foreign.RunBuilder.document>` makes
the whole loom trace, stamps its checksum and reads it back: right for a file read once,
but a live tab did it again for every appended line, O(the session) each time (a 45 MB
Claude Code session: about 0.3 s of a read's 0.55 s). Here each log entry is encoded and
decoded on its own, once while it lies in the part of the run no later line can change
(``frozen``), and again on each read while it lies after it. The effects are those the
whole trace gives (an entry's bytes are the same inside the trace or alone).

No checksum is stamped: a foreign run's checksum is never checked (only a loom trace's
is) and a save stamps its own (:func:`loom_core.formats.save.document_dict` drops the
source's). ``source`` is still the trace (without that member), so saving, forking and
the raw view work as on a whole read; it is joined from the entries' bytes (a copy at
memory speed, no JSON work).
"""

from __future__ import annotations

from typing import Any

import msgspec

from loom_core.formats.document import Document, FastEffect
from loom_core.formats.entries import finished_run
from loom_core.formats.fastschema import decoder
from loom_core.formats.foreign import RunBuilder
from loom_core.formats.trace import parse_top

__all__ = ["GrowingRun"]


class GrowingRun:
    """Documents of one run as it grows; see the module docstring."""

    def __init__(self) -> None:
        self._raws: list[bytes] = []  # the frozen entries' bytes
        self._effects: list[Any] = []  # …and their effects

    def document(
        self, run: RunBuilder, path: str, fmt: str, warnings: tuple[str, ...], frozen: int
    ) -> Document:
        """The run as a whole read gives it (no checksum). Its first ``frozen`` log
        entries are final: kept decoded for the next call."""
        log = run.log
        if frozen < len(self._raws):  # the run was folded again from its start
            del self._raws[frozen:], self._effects[frozen:]
        raws, effects = self._raws, self._effects
        fresh = [msgspec.json.encode(entry) for entry in log[len(raws) :]]
        dec = decoder(FastEffect)
        fresh_effects = [dec.decode(raw) for raw in fresh]
        keep = frozen - len(raws)
        raws += fresh[:keep]
        effects += fresh_effects[:keep]
        head = msgspec.json.encode(finished_run(run.model, run.system, run.episodes, run.output))
        _top, header, loaded = parse_top(head[:-1] + b',"log":[]}', path)
        entries = b",".join([*raws, *fresh[keep:]])
        return Document(
            path=path,
            format=fmt,
            header=header,
            effects=effects + fresh_effects[keep:],
            source=head[:-1] + b',"log":[' + entries + b"]}",
            warnings=loaded + warnings,
            extra=run.extra,
        )
