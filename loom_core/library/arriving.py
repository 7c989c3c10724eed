"""A big published run shown head-first while the rest of it arrives from the run store.

Why: a local big trace shows its first few hundred steps within a second
(:mod:`loom_core.formats.progressive`), and a teammate's run of a gigabyte must not wait
for the whole download before anything shows. The fetch streams the run into the cache
under a temporary name (:meth:`~loom_core.library.store.RunStore.fetch`); once the bytes
the local open reads for its first screen are there, :class:`HeadWatch` builds that same
head from them, by the same code, and hands it on, once.

What this never does: show the partial file as the run. The head is a
:class:`~loom_core.formats.progressive.Loaded` with ``complete=False`` (the window shows it
as a run still loading, with no checksum verdict), and the run is opened -- decoded
whole, its checksum checked -- only from the cache's file once that is whole and renamed
to its own name. Where no head can be built from the first bytes (another layout, too few
entries in them), nothing is shown until the whole run is here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from loom_core.errors import LoadError
from loom_core.formats import progressive
from loom_core.formats.loader import TRACE, opened
from loom_core.formats.progressive import Cancelled, Loaded, load_progressive
from loom_core.library.store import PART


class _Shown(Exception):
    """The head was handed on: the rest of the partial file is not read."""


def head_of(partial: Path) -> Loaded | None:
    """The first screen of the trace whose first bytes are at ``partial``, or None."""
    heads: list[Loaded] = []

    def keep(head: Loaded) -> None:
        heads.append(head)
        raise _Shown

    try:
        opening = opened(partial)
        if opening.reader is not TRACE:
            return None  # a foreign format is read whole: nothing to show of it yet
        load_progressive(opening, keep, cancelled=lambda: True)
    except _Shown:
        return heads[0]
    except (LoadError, Cancelled, OSError):
        pass  # the whole file opens later, and names any problem then
    return None


class HeadWatch:
    """An ``arrived`` callback of a fetch (see the module docstring): once a big run's
    first-screen bytes are here, ``show`` gets the file the run will be at once whole and
    its head, at most once per fetch."""

    def __init__(self, show: Callable[[Path, Loaded], None]) -> None:
        self.show = show
        self.tried = False

    def __call__(self, partial: Path, done: int, total: int) -> None:
        if self.tried or total < progressive.SMALL_BYTES or done >= total:
            return  # shown, a run the local open reads whole anyway, or complete
        if done < max(progressive.HEAD_BYTES, progressive.SMALL_BYTES):
            return  # (the local open shows a head of a file at least that big)
        self.tried = True
        head = head_of(partial)
        if head is not None:
            self.show(partial.with_name(partial.name.rsplit(PART, 1)[0]), head)
