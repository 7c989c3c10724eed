"""The run library's database: where it lives, its schema, and how a connection is opened.

Why SQLite (the standard library's ``sqlite3`` with FTS5): one file in the user's data
folder, nothing to install or run, and a full-text index that answers a search across
millions of steps in milliseconds. WAL journaling lets the indexer write while any number
of readers (the Runs page, the CLI) read a consistent snapshot without waiting for it.

The schema carries a version (:data:`SCHEMA_VERSION`, in the ``meta`` table). A database
of another version is rebuilt, never migrated: it is only an index of files that are
still on disk. The paths it knew are kept, so the next index pass finds them again.

``LOOM_DESKTOP_LIBRARY`` overrides the file (tests point it at a temp dir).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loom_core.runs_dir import APP, data_home

ENV = "LOOM_DESKTOP_LIBRARY"
SCHEMA_VERSION = 5  # 2: the parts table; 3: step_fts.sample; 4: facts, why, error, proxy;
# 5: host, author, url, digest (as a team library has them)
# A step's rowid holds its run: deleting or finding a run's steps is a rowid range, which
# FTS5 answers from its b-tree (a column filter would scan every step in the library).
STEP_SPAN = 1 << 24  # steps per run indexed at most
BUSY_MS = 10_000  # a second writer (CLI while the app indexes) waits this long for the lock

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    host TEXT NOT NULL DEFAULT '',     -- this machine (every row: a team library has others)
    author TEXT NOT NULL DEFAULT '',   -- who indexed it
    url TEXT,                  -- its published copy in the library's run store (NULL: none)
    digest TEXT,               -- the store's content address of that copy
    size INTEGER,              -- NULL: known path, not indexed yet
    mtime_ns INTEGER,
    format TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    models TEXT NOT NULL DEFAULT '',  -- distinct models, one per line
    steps INTEGER NOT NULL DEFAULT 0,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    cost REAL,                 -- USD; NULL: an unpriced model
    errors INTEGER NOT NULL DEFAULT 0,
    outcome TEXT NOT NULL DEFAULT '',  -- loom_core.live.outcome.OUTCOMES
    why TEXT NOT NULL DEFAULT '',      -- what the outcome rests on, when not obvious
    facts TEXT NOT NULL DEFAULT '',    -- how its file says it ended (Facts as JSON)
    proxy INTEGER NOT NULL DEFAULT 0,  -- 1: recorded by a proxy (its writer is beside it)
    started REAL,              -- unix seconds, when the file says
    ended REAL,                -- unix seconds: the file's last change
    time REAL,                 -- started, else ended: what the Runs page sorts by
    parent TEXT,               -- a branch's parent run (its path)
    fork_seq INTEGER,          -- the parent's step the branch forked at
    healed_by TEXT,            -- the repair that won, on a heal's winning branch
    state TEXT NOT NULL DEFAULT 'ok',  -- ok | missing | unreadable
    cause TEXT NOT NULL DEFAULT '',    -- why missing or unreadable
    source TEXT NOT NULL DEFAULT 'found',  -- query.SOURCES: found, opened, … published
    noted REAL,                -- when the app last opened/recorded/forked/healed it
    live INTEGER NOT NULL DEFAULT 0,   -- 1: the app is recording it now
    error TEXT NOT NULL DEFAULT '',    -- the error the app saw end it (its agent crashed)
    indexed REAL
);
CREATE INDEX runs_time ON runs (time DESC);
CREATE INDEX runs_parent ON runs (parent);
-- files a run is also read from (a Claude Code session's sub-agent files): not runs of
-- their own, and a change to one re-indexes its run
CREATE TABLE parts (path TEXT PRIMARY KEY, run INTEGER NOT NULL);
CREATE INDEX parts_run ON parts (run);
-- rowid = run id * STEP_SPAN + the step's position in the run (see :func:`step_rowid`)
CREATE VIRTUAL TABLE step_fts USING fts5 (
    body, tool, agent, tags, seq UNINDEXED,
    sample UNINDEXED,          -- ID:EPOCH of an Inspect log's sample ('': a file of one run)
    tokenize = 'unicode61 remove_diacritics 2'
);
"""


def norm(path: str | Path) -> str:
    """The one spelling of a path in the library (absolute, not resolved: a link stays one)."""
    return os.path.abspath(os.path.expanduser(str(path)))


def step_rowid(run: int, position: int) -> int:
    """The rowid of a run's ``position``-th indexed step."""
    return run * STEP_SPAN + position


def run_of_rowid(rowid: int) -> int:
    """The run id a step's rowid belongs to."""
    return rowid // STEP_SPAN


def library_path() -> Path:
    """The database file: ``$LOOM_DESKTOP_LIBRARY``, else ``<data>/loom-desktop/library.sqlite3``."""
    env = os.environ.get(ENV)
    return Path(env).expanduser() if env else data_home() / APP / "library.sqlite3"


def connect(path: str | Path | None = None) -> sqlite3.Connection:
    """A connection to the library (created, or rebuilt when its schema version differs).

    Each thread opens its own; autocommit mode, so transactions are explicit
    (``with transaction(conn):``) and a reader never holds a lock between queries.
    """
    target = Path(path) if path is not None else library_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _open(target)
    except sqlite3.DatabaseError as err:
        if "not a database" not in str(err) and "malformed" not in str(err):
            raise
    # Not a database (or a damaged one): it is only an index, so start a new one and keep
    # the old file beside it for whoever wants to look.
    os.replace(target, target.with_name(target.name + ".damaged"))
    return _open(target)


def _open(target: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(target, timeout=BUSY_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        _wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        if schema_version(conn) != SCHEMA_VERSION:
            _rebuild(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _wal(conn: sqlite3.Connection) -> None:
    """Write-ahead logging, set once per file (the mode stays in it).

    Why the retries: switching a file to WAL needs it to itself, and when two
    connections open a new library at the same moment (the window's indexer and its
    Runs list do) both can hold a read lock and want the switch; SQLite then fails one
    of them at once with "database is locked" rather than wait for the other, and the
    run library stopped for the session (one first open in ten, three at once). The
    switch is tried again, for up to BUSY_MS, as its busy timeout would have waited.
    """
    deadline = time.monotonic() + BUSY_MS / 1000
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def schema_version(conn: sqlite3.Connection) -> int | None:
    """The version stored in the database, or None (empty, or not ours)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.OperationalError:  # no such table
        return None
    try:
        return int(row[0]) if row else None
    except ValueError:
        return None


def _known_paths(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(path, source) of every run an older schema knew (nothing if it had no such table)."""
    try:
        return [(str(p), str(s)) for p, s in conn.execute("SELECT path, source FROM runs")]
    except sqlite3.DatabaseError:
        try:
            return [(str(p), "found") for (p,) in conn.execute("SELECT path FROM runs")]
        except sqlite3.DatabaseError:
            return []


def _rebuild(conn: sqlite3.Connection) -> None:
    """Drop everything and create the current schema, keeping the paths already known."""
    with transaction(conn):
        if schema_version(conn) == SCHEMA_VERSION:  # another connection rebuilt it meanwhile
            return
        known = _known_paths(conn)
        settings = _settings(conn)
        _drop_all(conn)
        for statement in _SCHEMA.split(";\n"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        conn.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)", settings)
        conn.executemany("INSERT OR IGNORE INTO runs (path, source) VALUES (?, ?)", known)


def _settings(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """The user's settings kept in ``meta`` (the run store's address): a rebuild keeps them."""
    try:
        return [
            (str(k), str(v))
            for k, v in conn.execute("SELECT key, value FROM meta WHERE key != 'schema'")
        ]
    except sqlite3.DatabaseError:
        return []


def _drop_all(conn: sqlite3.Connection) -> None:
    """Drop every table and view; virtual tables first (dropping one drops its shadow tables)."""
    objects = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite_%' ORDER BY sql NOT LIKE 'CREATE VIRTUAL%'"
    ).fetchall()
    for kind, name in objects:
        quoted = name.replace('"', '""')
        conn.execute(f'DROP {kind.upper()} IF EXISTS "{quoted}"')


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any error) on an autocommit
    connection: the write lock is taken up front, so two writers queue instead of failing."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
