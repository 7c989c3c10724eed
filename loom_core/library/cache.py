"""The local copies of published runs: opened like any file, bounded, least recently used out.

Why a cache and not a temp file: a team opens the same runs again and again (a failing CI
run, a teammate's fork), and a run of a gigabyte should come over the network once. Each
run lives in ``<cache>/<digest>/`` (its files as published, so a Claude Code session keeps
its sub-agent folder beside it); opening one touches its folder, and when the cache grows
past its bound the folders used longest ago are removed, never the one being opened.

A fetch writes each file under a temporary name (:data:`~loom_core.library.store.PART`)
and removes it if it fails; an app killed mid-download cannot, and its partial file would
count against the bound forever. Trimming the cache first removes partial files nobody
has written to for :data:`STALE_PART_S`: a live fetch, in this process or another, writes
to its file a chunk at a time, so one that old has no fetch behind it.

``LOOM_DESKTOP_CACHE`` names the folder (tests: a temp dir) and ``LOOM_DESKTOP_CACHE_MB``
its bound (default 4096).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from loom_core.library.store import PART, Arrived, RunStore
from loom_core.runs_dir import app_cache_home

ENV, BOUND_ENV = "LOOM_DESKTOP_CACHE", "LOOM_DESKTOP_CACHE_MB"
DEFAULT_MB = 4096
STALE_PART_S = 3600  # a partial file unwritten this long is a killed fetch's (see above)


def cache_home() -> Path:
    """The platform's per-user cache folder for published runs."""
    env = os.environ.get(ENV)
    return Path(env).expanduser() if env else app_cache_home() / "runs"


def is_cached(path: str | Path) -> bool:
    """Whether ``path`` is a copy in this cache (of a run the library lists already)."""
    try:
        return Path(path).resolve().is_relative_to(cache_home().resolve())
    except OSError:
        return False


def bound_bytes() -> int:
    """The cache's bound in bytes (a malformed setting falls back to the default)."""
    try:
        megabytes = int(os.environ.get(BOUND_ENV, DEFAULT_MB))
    except ValueError:
        megabytes = DEFAULT_MB
    return max(0, megabytes) << 20


def local_copy(
    store: RunStore, url: str, digest: str, name: str, arrived: Arrived | None = None
) -> Path:
    """The run published at ``url`` as a local file, fetched unless the cache has it
    (``arrived``: told as the main file comes in, :meth:`RunStore.fetch`)."""
    folder = cache_home() / digest
    main = folder / name
    if not main.is_file():
        store.fetch(url, folder, arrived)
    now = time.time()
    os.utime(folder, (now, now))  # the folder's time is its last use
    evict(keep=folder)
    return main


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def evict(keep: Path | None = None, bound: int | None = None) -> list[Path]:
    """Remove the least recently used runs until the cache is within its bound; the
    folders removed. ``keep`` (the run being opened) stays, whatever its size."""
    root = cache_home()
    if not root.is_dir():
        return []
    sweep_parts(root)
    limit = bound_bytes() if bound is None else bound
    folders = sorted((f for f in root.iterdir() if f.is_dir()), key=lambda f: f.stat().st_mtime)
    sizes = {f: _size(f) for f in folders}
    total, removed = sum(sizes.values()), []
    for folder in folders:
        if total <= limit:
            break
        if keep is not None and folder == keep:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        total -= sizes[folder]
        removed.append(folder)
    return removed


def sweep_parts(root: Path) -> list[Path]:
    """Remove the partial files under ``root`` that no fetch writes any more (see the
    module docstring); the files removed. A run folder's time is its last use: it is
    kept as it was, so sweeping does not make an old run look recently opened."""
    cutoff = time.time() - STALE_PART_S
    removed = []
    for part in root.rglob(f"*{PART}*"):
        try:
            info, folder = part.stat(), part.parent.stat()
            if not part.is_file() or info.st_mtime >= cutoff:
                continue
            part.unlink()
            os.utime(part.parent, ns=(folder.st_atime_ns, folder.st_mtime_ns))
        except OSError:
            continue  # gone meanwhile: its fetch finished, or another sweep took it
        removed.append(part)
    return removed
