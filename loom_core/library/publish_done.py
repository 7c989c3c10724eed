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

from loom_core.errors import LoadError


def publish_finished(paths: Iterable[str | Path], library: str | None = None) -> list[str]:
    """Publish each run at ``paths``; one line per file: where it went or why not."""
    from loom_core.library.index import Indexer
    from loom_core.library.publish import publish, run_store

    files = [str(p) for p in paths]
    if not files:
        return []
    later = "publish it later with: loom-desktop runs publish"
    try:
        indexer = Indexer(library)
    except LoadError as err:
        return [f"{f}: not published ({err.path}: {err.cause}); {later} {f}" for f in files]
    lines: list[str] = []
    try:
        store = run_store(indexer.db)
        for path in files:
            try:
                done = publish(indexer, store, path)
            except LoadError as err:
                lines.append(f"{path}: not published ({err.cause}); {later} {path}")
            else:
                again = "" if done.uploaded else " (the store had it already)"
                lines.append(f"{path}: published to {done.url}{again}")
    except LoadError as err:
        lines = [f"{f}: not published ({err.cause}); {later} {f}" for f in files]
    finally:
        indexer.close()
    return lines
