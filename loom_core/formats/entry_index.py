"""Where a big trace's log entries are in its bytes: an entry's exact JSON, found by offset.

Why: the "raw JSON" view shows an entry exactly as it is on disk. Without an index that
meant splitting the whole document again on first use: at 1,000,000 effects a second
parse of the gigabyte and a million raw views (about 100 MB) on the window's thread.
The progressive loader already cuts the log into runs of whole entries a few megabytes
long (:func:`loom_core.formats.progressive._layout_chunks`) and decodes each run as a
list, so it knows each run's byte range and how many entries it held. An entry is then
one bisect and one run decoded as raw views (a C-level pass over a few megabytes),
whatever the run's length; the run last read is kept, since a user looks at neighbours.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import msgspec

_raws = msgspec.json.Decoder(list[msgspec.Raw])


@dataclass(frozen=True, eq=False)
class EntryIndex:
    """Byte ranges (into the document's source) of runs of whole log entries, without
    the list's brackets, and the index of each run's first entry. The load appends to
    both as it decodes each run (:class:`loom_core.formats.lazy_effects.LazyEffects`)."""

    ranges: list[tuple[int, int]]
    firsts: list[int]
    _last: dict[int, list[msgspec.Raw]] = field(default_factory=dict, repr=False)

    def raw(self, source: Any, i: int) -> bytes | None:
        """Entry ``i``'s bytes as they are in ``source``; None when ``i`` is not indexed."""
        run = bisect_right(self.firsts, i) - 1
        if run < 0:
            return None
        entries = self._last.get(run)
        if entries is None:
            a, b = self.ranges[run]
            try:
                entries = _raws.decode(b"".join((b"[", memoryview(source)[a:b], b"]")))
            except (msgspec.DecodeError, msgspec.ValidationError):
                return None
            self._last.clear()
            self._last[run] = entries
        k = i - self.firsts[run]
        return bytes(entries[k]) if k < len(entries) else None
