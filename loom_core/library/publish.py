"""Publishing a run to the library's run store, and opening a run another machine published.

Why the upload comes before the row: a run is listed as available (its row has a ``url``)
only once its files are in the store whole (:mod:`.store`: parts first, the main file
last), so an upload that fails halfway leaves the run listed as it was, never as a run
nobody can open. Publishing indexes the run too, so its steps are searchable by everyone.

Where a run is opened from (:func:`local_file`): its own file when it is on this machine,
else the store's copy through the local cache (:mod:`.cache`), fetched a chunk at a time.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from loom_core.errors import LoadError
from loom_core.formats.foreign import readers
from loom_core.library.backend import RunsDb
from loom_core.library.cache import local_copy
from loom_core.library.db import norm
from loom_core.library.index import Indexer, signature
from loom_core.library.samples import file_run
from loom_core.library.scan import companions
from loom_core.library.store import Arrived, RunStore, bundle_of

STORE = "store"  # the library setting naming its run store
# (path) -> the file to publish in its place (a scrubbed copy); the default publishes as is
Prepare = Callable[[str], str]


@dataclass(frozen=True)
class Published:
    """What :func:`publish` did for one run."""

    path: str
    url: str
    digest: str
    uploaded: bool  # False: the store had it already


def run_store(db: RunsDb) -> RunStore:
    """The library's run store; LoadError naming how to set one when there is none."""
    url = db.setting(STORE)
    if not url:
        raise LoadError(
            "run store", "this library names none (set it once: runs store s3://bucket/prefix)"
        )
    return RunStore(url)


def name_store(db: RunsDb, url: str) -> str:
    """Make ``url`` (a bucket URL or a folder, relative to here) the library's run store,
    for everyone who uses the library; the address kept. LoadError for an address the
    app cannot use (nothing is changed then)."""
    address = url if "://" in url else os.path.abspath(url)
    RunStore(address)
    db.set_setting(STORE, address)
    return address


def publish(
    indexer: Indexer, store: RunStore, path: str | Path, prepare: Prepare | None = None
) -> Published:
    """Upload the run at ``path`` (or what ``prepare`` makes of it) and index it as
    published. LoadError when it does not load or the store refuses it."""
    path = norm(path)
    source = prepare(path) if prepare is not None else path
    facts, rows = file_run(source)  # LoadError: not a run, nothing uploaded
    reader = next((r for r in readers() if r.name == facts.format), None)
    parts = companions(source, reader)
    bundle = bundle_of(source, parts)
    uploaded = not store.has(bundle)
    try:
        url = store.publish(bundle)
    except OSError as err:  # the bucket or folder said no: nothing is listed
        raise LoadError(path, f"could not upload to {store.url} ({err})") from err
    size, mtime_ns = signature(os.stat(path), companions(path, reader))
    indexer.store(path, size, mtime_ns, facts, rows, parts if source == path else ())
    indexer.db.published(path, url, bundle.digest)
    return Published(path, url, bundle.digest, uploaded)


def local_file(
    db: RunsDb, path: str, host: str, url: str | None, arrived: Arrived | None = None
) -> Path:
    """A file on this machine to open the run from (see the module docstring); ``arrived``
    follows a fetch (:meth:`RunStore.fetch`)."""
    if host in ("", db.host) and os.path.isfile(path):
        return Path(path)
    if not url:
        where = f"on {host}" if host and host != db.host else "gone"
        raise LoadError(path, f"the run's file is {where} and it was never published")
    store, digest, name = RunStore.holding(url)
    return local_copy(store, url, digest, name, arrived)
