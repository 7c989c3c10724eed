"""A live tab on a foreign-format file (Claude Code, OTLP …): whole re-reads, indexed off
the GUI thread.

Why: a foreign reader re-reads the whole file on each change
(:mod:`loom_core.live.reread`), so each update is a new document, not new lines. Its
timeline is built on the tailer's thread (:func:`indexed`, the callback's first stop),
and the GUI thread only swaps it in (``LiveController``): the current step keeps its
number, Follow tail moves to the new end, a failed re-read is a banner note and the
last good read stays on screen.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from loom_core.live.follow import JournalUpdate
from loom_core.live.reread import RereadUpdate
from loom_core.views.timeline import TimelineBuilder


@dataclass(frozen=True, eq=False)
class IndexedReread(RereadUpdate):
    """A re-read with its document's timeline already built (``builder``)."""

    builder: TimelineBuilder | None = None


def indexed(update: JournalUpdate) -> JournalUpdate:
    """On the tailer's thread: index a re-read's document, so the GUI only swaps it in."""
    if not isinstance(update, RereadUpdate) or update.document is None:
        return update
    builder = TimelineBuilder(update.document)
    builder.extend(final=True, unfinished=bool(update.document.unfinished))
    values = {f.name: getattr(update, f.name) for f in fields(RereadUpdate)}
    return IndexedReread(**values, builder=builder)
