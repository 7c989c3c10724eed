"""Where a team keeps its run files: a shared folder or an S3-compatible bucket.

Why content-addressed: several laptops and CI jobs publish at once, and the same run
may be published from two places or twice from one. A run is stored under the SHA-256
of its bytes (and of the files it is also read from, a Claude Code session's sub-agent
files), so publishing it again finds it there and uploads nothing, and two publishers of
one run write the same objects. An object is written whole or not at all (S3's PUT, a
rename in a folder), and the run's folder is complete once its ``main`` file is there:
the parts go first, the main file last. The library lists a published run as available
only after :meth:`RunStore.publish` returned.

Why fsspec: one interface for a folder (``/mnt/team/runs``, ``file://…``) and a bucket
(``s3://bucket/prefix`` through s3fs, credentials from the standard AWS chain: the
environment, ``~/.aws``, an instance role; we never ask for or write one). Imported on
first use: the local library never needs it.

Why :func:`store_io`: s3fs runs its requests on an event loop in a thread of fsspec's
that it starts on first use and keeps for the life of the process. A long-lived process
(the desktop app) that fetched one run would carry that thread ever after, and a process
with threads must not fork: the checksum that forks a helper would fall back to its serial
path for the rest of the session. The thread is stopped once the last user is done.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loom_core.errors import LoadError

CHUNK = 1 << 20  # bytes hashed and copied at a time: a gigabyte run never sits in memory
PART = ".part-"  # a fetched file's name until it is whole: <name>.part-<unique>
# (the main file's temporary copy, its bytes so far, its size): a fetch going on
Arrived = Callable[[Path, int, int], None]
DIGEST = "sha256"


@dataclass(frozen=True)
class Bundle:
    """A run's files as published: ``main`` and the ``parts`` it is also read from, each
    with the name it is stored under (relative to the run's folder in the store)."""

    digest: str  # hex SHA-256 over every file's name and bytes, in order
    main: tuple[str, str]  # (local path, stored name)
    parts: tuple[tuple[str, str], ...] = ()

    @property
    def files(self) -> tuple[tuple[str, str], ...]:
        """Parts first, the main file last: a folder with its main file is complete."""
        return (*self.parts, self.main)


def bundle_of(path: str | Path, parts: Sequence[str | Path] = ()) -> Bundle:
    """The bundle of the run at ``path``; ``parts`` are stored under their path relative
    to the run's folder (a sub-agent file stays ``<session>/subagents/agent-x.jsonl``)."""
    main = Path(path)
    base = main.parent
    stored: list[tuple[str, str]] = []
    for part in parts:
        rel = os.path.relpath(part, base)
        if rel.startswith(".."):
            raise LoadError(str(part), f"not under the run's folder {base}")
        stored.append((str(part), Path(rel).as_posix()))
    digest = hashlib.new(DIGEST)
    for local, name in [*stored, (str(main), main.name)]:
        digest.update(name.encode("utf-8") + b"\0")
        _hash_file(local, digest)
    return Bundle(digest.hexdigest(), (str(main), main.name), tuple(stored))


def _hash_file(path: str, digest: Any) -> None:
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(CHUNK):
                digest.update(chunk)
    except OSError as err:
        raise LoadError(path, os.strerror(err.errno or 0) or str(err)) from err
    digest.update(b"\0")


class RunStore:
    """A folder or bucket of published runs: ``<root>/<digest>/<stored name>``."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        try:
            from fsspec.core import url_to_fs
        except ImportError as err:  # pragma: no cover - fsspec is a dependency
            raise LoadError(url, "the run store needs fsspec (make run installs it)") from err
        try:
            self.fs, self.root = url_to_fs(self.url)
        except (ImportError, ValueError) as err:
            raise LoadError(url, f"not a run store address ({err})") from err

    def location(self, digest: str, name: str) -> str:
        """The URL of one stored file (what the library records for a run's main file)."""
        return f"{self.url}/{digest}/{name}"

    def _key(self, digest: str, name: str) -> str:
        return posixpath.join(self.root, digest, name)

    def has(self, bundle: Bundle) -> bool:
        """Whether the whole run is stored already (its main file is written last)."""
        return bool(self.fs.exists(self._key(bundle.digest, bundle.main[1])))

    def publish(self, bundle: Bundle) -> str:
        """Upload whatever of the run the store lacks; the main file's URL. Idempotent,
        and safe against another publisher of the same run (same bytes, same keys)."""
        if not self.has(bundle):
            for local, name in bundle.files:
                key = self._key(bundle.digest, name)
                if name != bundle.main[1] and self._same_size(key, local):
                    continue  # a part an interrupted publish already uploaded
                self._put(local, key)
        return self.location(bundle.digest, bundle.main[1])

    def _same_size(self, key: str, local: str) -> bool:
        try:
            return int(self.fs.info(key)["size"]) == os.path.getsize(local)
        except (FileNotFoundError, OSError, KeyError):
            return False

    def _put(self, local: str, key: str) -> None:
        """Write one object whole: a bucket's PUT is atomic; in a folder the file is
        written beside its final name and renamed, so a reader never sees half of it."""
        from fsspec.implementations.local import LocalFileSystem

        if isinstance(self.fs, LocalFileSystem):
            self.fs.makedirs(posixpath.dirname(key), exist_ok=True)
            temp = f"{key}.part-{os.getpid()}"
            self.fs.put_file(local, temp)
            self.fs.mv(temp, key)
            return
        self.fs.put_file(local, key)

    def fetch(self, url: str, dest: Path, arrived: Arrived | None = None) -> Path:
        """Copy the run whose main file is at ``url`` (and its parts) into ``dest``; the
        local main file. Streamed a chunk at a time; written under temporary names and
        renamed, so an interrupted fetch leaves nothing that looks complete. ``arrived``
        is told after each chunk of the main file (what a window shows meanwhile)."""
        digest, name = self._split(url)
        folder = posixpath.join(self.root, digest)
        try:
            listed = self.fs.find(folder)
        except (FileNotFoundError, OSError) as err:
            raise LoadError(url, f"not in the run store ({err})") from err
        if self._key(digest, name) not in {_strip(p) for p in listed}:
            raise LoadError(url, "not in the run store (its upload never finished)")
        names = [posixpath.relpath(_strip(p), folder) for p in listed]
        for rel in sorted(names, key=lambda n: n == name):  # the main file last
            if ".part-" in posixpath.basename(rel):
                continue
            self._get(posixpath.join(folder, rel), dest / rel, arrived if rel == name else None)
        return dest / name

    def _get(self, key: str, target: Path, arrived: Arrived | None = None) -> None:
        """One file, under a temporary name until it is whole (removed if it never is)."""
        target.parent.mkdir(parents=True, exist_ok=True)
        # a name of its own: the same run opened twice at once is fetched twice side by side
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=target.name + PART)
        temp = Path(name)
        try:
            with os.fdopen(fd, "wb") as out, self.fs.open(key, "rb") as src:
                total, done = int(getattr(src, "size", 0) or 0), 0
                while chunk := src.read(CHUNK):
                    out.write(chunk)
                    done += len(chunk)
                    if arrived is not None:
                        out.flush()  # what arrived is readable by whoever is told
                        arrived(temp, done, max(total, done))
            os.replace(temp, target)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise

    @classmethod
    def holding(cls, url: str) -> tuple[RunStore, str, str]:
        """The store a published run's URL is in, with its digest and stored name (a URL
        stays valid when the library later names another store)."""
        root, digest, name = url.rstrip("/").rsplit("/", 2)
        if not root or not digest or not name:
            raise LoadError(url, "not a published run's address")
        return cls(root), digest, name

    def _split(self, url: str) -> tuple[str, str]:
        """(digest, stored name) of a URL :meth:`location` made."""
        if not url.startswith(self.url + "/"):
            raise LoadError(url, f"not in the run store {self.url}")
        digest, _, name = url[len(self.url) + 1 :].partition("/")
        if not digest or not name:
            raise LoadError(url, "not a published run's address")
        return digest, name


def _strip(path: str) -> str:
    """fsspec lists a folder's files without their protocol: the same spelling as keys."""
    return path.rstrip("/")


_io_lock = threading.Lock()
_io_users = 0


@contextmanager
def store_io() -> Iterator[None]:
    """Use a run store within this block; fsspec's IO thread is stopped when the last
    block of any thread ends (see the module docstring)."""
    global _io_users
    with _io_lock:
        _io_users += 1
    try:
        yield
    finally:
        with _io_lock:
            _io_users -= 1
            if _io_users == 0:
                stop_io()


def stop_io() -> None:
    """Stop fsspec's IO thread and its executor, and forget the filesystems bound to its
    loop (a new one starts on next use). Nothing may be using a store meanwhile."""
    asyn = sys.modules.get("fsspec.asyn")
    if asyn is None:
        return  # never started: the local library, or no store used yet
    loop, thread = asyn.loop[0], asyn.iothread[0]
    if loop is None or thread is None:
        return
    for cls in _subclasses(asyn.AsyncFileSystem):
        for fs in list(getattr(cls, "_cache", {}).values()):
            _close_session(asyn, loop, fs)
        cls.clear_instance_cache()  # their sessions belong to the loop that stops
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    if not thread.is_alive():
        loop.run_until_complete(loop.shutdown_default_executor())  # its "asyncio_0" thread
        loop.close()
        asyn.loop[0] = asyn.iothread[0] = None


def _close_session(asyn: Any, loop: Any, fs: Any) -> None:
    """Close an s3fs filesystem's HTTP session on its loop while that still runs (its own
    finalizer gives that a tenth of a second, then leaves the session to a warning)."""
    creator = getattr(fs, "_s3creator", None)
    if creator is None:
        return
    try:
        asyn.sync(loop, creator.__aexit__, None, None, None, timeout=10)
    except Exception:  # noqa: BLE001 - closing is a courtesy; the loop stops regardless
        pass


def _subclasses(cls: Any) -> list[Any]:
    """Every filesystem class of fsspec's async kind that is loaded (s3fs's among them)."""
    found: list[Any] = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found
