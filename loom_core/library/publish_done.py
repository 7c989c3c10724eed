"""``--publish`` of the proxy and the OTLP receiver: a finished recording goes to the team.

Why after the recording, never during it: a run is published by its checksum, and a run
still being written has none yet; and a library or bucket that is down must not cost the
user the recording. So the files are written first, as without ``--publish``; then each
is published to the library's run store (the library ``LOOM_LIBRARY_URL`` names, else the
local one with its store) and indexed there. A failure is reported, one line per file,
saying how to publish it later, and the recording stays where it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from loom_core.errors import LoadError

if TYPE_CHECKING:
    from loom_core.library.index import Indexer
    from loom_core.library.store import RunStore


def publish_finished(paths: Iterable[str | Path], library: str | None = None) -> list[str]:
    """Publish each run at ``paths``; one line per file: where it went or why not."""
    from loom_core.library.index import Indexer
    from loom_core.library.publish import run_store

    files = [str(p) for p in paths]
    if not files:
        return []
    try:
        indexer = Indexer(library)
    except LoadError as err:
        return [_not_published(f, f"{err.path}: {err.cause}") for f in files]
    try:
        store = run_store(indexer.db)
    except LoadError as err:
        indexer.close()
        return [_not_published(f, err.cause) for f in files]
    try:
        return [_one(indexer, store, f) for f in files]
    finally:
        indexer.close()


def _one(indexer: Indexer, store: RunStore, path: str) -> str:
    """Publish one file; its line. Any failure is a line: the recording is on disk."""
    from loom_core.library.publish import publish

    try:
        done = publish(indexer, store, path)
    except LoadError as err:
        return _not_published(path, err.cause)
    except Exception as err:  # noqa: BLE001 - at a recorder's exit, a line, not a traceback
        return _not_published(path, f"{type(err).__name__}: {err}")
    again = "" if done.uploaded else " (the store had it already)"
    return f"{path}: published to {done.url}{again}"


def _not_published(path: str, why: str) -> str:
    return f"{path}: not published ({why}); publish it later with: loom-core runs publish {path}"
