"""The team library's PostgreSQL database: its address, its connections, its versioned schema.

Why PostgreSQL for a team: it is what teams already run, many writers (laptops, CI jobs,
proxies) index at once without a lock file, and its own full-text search (a ``tsvector``
of each run's words under a GIN index, each step's made when a search asks it) and
``pg_trgm`` (substring search of model names) answer a query across millions of steps in
milliseconds.

Why migrations, not the SQLite library's rebuild: a team's database is shared and holds
what only it knows (who published a run, where it is stored), so it is never dropped. Each
step in :data:`MIGRATIONS` is applied once, in order, in one transaction, under an
advisory lock, on connect: the first client of a new release upgrades the database, the
others wait for it and find it done.

Secrets: a password never goes in ``LOOM_LIBRARY_URL`` (it would sit in settings, shell
history and logs); libpq reads it from ``PGPASSFILE`` (``~/.pgpass``), a service file
(``PGSERVICEFILE``) or ``PGPASSWORD``. TLS is libpq's default (``sslmode=prefer``): used
whenever the server offers it; ``?sslmode=verify-full`` in the URL insists on it.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from loom_core.errors import LoadError

URL_ENV = "LOOM_LIBRARY_URL"
SCHEMA_LOCK = 0x4C4F4F4D  # "LOOM": the advisory lock migrations take
CONNECT_SECONDS = 10

MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE TABLE runs (
            id BIGSERIAL PRIMARY KEY,
            host TEXT NOT NULL,          -- the machine the run's file is on
            path TEXT NOT NULL,          -- its path there
            author TEXT NOT NULL DEFAULT '',  -- who indexed or published it
            url TEXT,                    -- its published copy in the run store (NULL: none)
            digest TEXT,                 -- the store's content address of that copy
            size BIGINT,
            mtime_ns BIGINT,
            format TEXT NOT NULL DEFAULT '',
            title TEXT NOT NULL DEFAULT '',
            models TEXT NOT NULL DEFAULT '',
            steps BIGINT NOT NULL DEFAULT 0,
            tokens_in BIGINT NOT NULL DEFAULT 0,
            tokens_out BIGINT NOT NULL DEFAULT 0,
            cost DOUBLE PRECISION,
            errors BIGINT NOT NULL DEFAULT 0,
            outcome TEXT NOT NULL DEFAULT '',
            why TEXT NOT NULL DEFAULT '',
            facts TEXT NOT NULL DEFAULT '',
            proxy BOOLEAN NOT NULL DEFAULT FALSE,
            started DOUBLE PRECISION,
            ended DOUBLE PRECISION,
            time DOUBLE PRECISION,
            parent TEXT,
            fork_seq BIGINT,
            healed_by TEXT,
            state TEXT NOT NULL DEFAULT 'ok',
            cause TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT 'found',
            noted DOUBLE PRECISION,
            live BOOLEAN NOT NULL DEFAULT FALSE,
            error TEXT NOT NULL DEFAULT '',
            indexed DOUBLE PRECISION,
            UNIQUE (host, path)
        );
        CREATE INDEX runs_digest ON runs (digest);
        CREATE INDEX runs_time ON runs (time DESC NULLS LAST, id DESC);
        CREATE INDEX runs_parent ON runs (parent);
        CREATE INDEX runs_models ON runs USING gin (models gin_trgm_ops);
        CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE parts (
            host TEXT NOT NULL,
            path TEXT NOT NULL,
            run BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            PRIMARY KEY (host, path)
        );
        CREATE INDEX parts_run ON parts (run);
        CREATE TABLE steps (
            run BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            pos INTEGER NOT NULL,
            seq BIGINT,
            body TEXT NOT NULL,
            tool TEXT NOT NULL,
            agent TEXT NOT NULL,
            tags TEXT NOT NULL,
            sample TEXT NOT NULL,
            doc TSVECTOR NOT NULL,       -- tool A, agent B, tags C, body D (pg_query.py)
            PRIMARY KEY (run, pos)
        );
        CREATE INDEX steps_doc ON steps USING gin (doc);
        CREATE INDEX steps_tool ON steps USING gin (tool gin_trgm_ops);
        CREATE INDEX steps_agent ON steps USING gin (agent gin_trgm_ops);
        """,
    ),
    (
        # Why: a common word matches a million steps, and reading those from the steps'
        # GIN index cost seconds per search at 10,000 runs. One summary per run (its
        # steps' words, each prefixed by its weight: ``D:config``) finds the runs that
        # may match in milliseconds; only those are probed (pg_runwords.py). A NULL
        # summary (a run indexed before this version, or one too big for a tsvector)
        # makes the run a candidate of every search. The trigram indexes on the steps'
        # tool and agent went: a step search always has a word term (a tool glob
        # without words becomes ``kind:tool|model``, an agent name without letters
        # searches runs only), the names are tested on the steps that term finds, and
        # each step written paid for both indexes. ``pg_trgm`` stays for model names.
        2,
        """
        DROP INDEX IF EXISTS steps_tool;
        DROP INDEX IF EXISTS steps_agent;
        CREATE TABLE run_words (
            run BIGINT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
            doc TSVECTOR                 -- weight ':' word of every step; NULL: unknown
        );
        INSERT INTO run_words (run, doc) SELECT id, NULL FROM runs;
        CREATE INDEX run_words_doc ON run_words USING gin (doc);
        CREATE INDEX run_words_unknown ON run_words (run) WHERE doc IS NULL;
        """,
    ),
    (
        # Why: the steps' tsvector and its GIN index were half of the server's work per
        # step written (the parser about 11 µs a step, the index 10), while searches ask
        # the runs' summaries which runs may match and decide on those runs' steps. A
        # step now keeps its words as cut (tool, agent, body; tags are words already) and
        # a search makes the same tsvector from them at query time, on the candidate
        # runs' steps only (pg_match.py), in the blocks of 64 steps whose summary of
        # words may match (pg_blocks.py). Steps written before keep their ``doc`` (the
        # same tsvector, so answers are the same) until their run is indexed again.
        3,
        """
        DROP INDEX IF EXISTS steps_doc;
        ALTER TABLE steps ALTER COLUMN doc DROP NOT NULL;
        ALTER TABLE steps ADD COLUMN IF NOT EXISTS wtool TEXT,
            ADD COLUMN IF NOT EXISTS wagent TEXT, ADD COLUMN IF NOT EXISTS wbody TEXT;
        CREATE TABLE step_words (
            run BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            block INTEGER NOT NULL,      -- steps block * 64 ... block * 64 + 63 (pg_blocks.py)
            doc TSVECTOR NOT NULL,       -- weight ':' word of the block's steps, as run_words
            PRIMARY KEY (run, block)
        );
        CREATE INDEX step_words_doc ON step_words USING gin (doc);
        -- the runs written before have no blocks: every step of theirs is a candidate
        ALTER TABLE run_words ADD COLUMN blocks BOOLEAN NOT NULL DEFAULT FALSE;
        ALTER TABLE run_words ALTER COLUMN blocks SET DEFAULT TRUE;
        """,
    ),
    (
        # Why: every row ``COPY`` writes into ``steps`` and ``step_words`` fired the
        # foreign key's trigger (a lookup of the run under a row lock): about a fifth of
        # the server's CPU per step written. Nothing is left behind: a run's steps and
        # blocks are only written in the transaction that holds its row, and whatever
        # removes or replaces a run deletes them first, in its transaction
        # (pg_steps.delete_steps). ``parts`` and ``run_words`` keep theirs (a row a run).
        4,
        """
        ALTER TABLE steps DROP CONSTRAINT IF EXISTS steps_run_fkey;
        ALTER TABLE step_words DROP CONSTRAINT IF EXISTS step_words_run_fkey;
        """,
    ),
]


def library_url() -> str | None:
    """``LOOM_LIBRARY_URL`` when it names a PostgreSQL database, else None (the local
    SQLite library). LoadError for another scheme or a password in the URL."""
    url = os.environ.get(URL_ENV, "").strip()
    if not url:
        return None
    check_url(url)
    return url


def check_url(url: str) -> None:
    """Refuse what the library cannot or must not use (see the module docstring)."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise LoadError(
            URL_ENV,
            f"“{redacted(url)}” is not a postgresql:// URL (unset it for the local library)",
        )
    if parts.password is not None or "password=" in parts.query:
        raise LoadError(
            URL_ENV,
            "holds a password; put it in ~/.pgpass (PGPASSFILE), a service file or PGPASSWORD",
        )


def redacted(url: str) -> str:
    """``url`` fit for a log or a dialog: any password replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return parts._replace(netloc=netloc).geturl()


def connect_kwargs() -> dict[str, Any]:
    """What every connection is opened with: autocommit (transactions are explicit), a
    bounded connect time, and a name the server's ``pg_stat_activity`` shows."""
    return {
        "autocommit": True,
        "connect_timeout": CONNECT_SECONDS,
        "application_name": "loom-desktop",
    }


def migrate(conn: Any) -> int:
    """Apply every migration the database lacks; the schema version it has now."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS loom_schema "
            "(version INTEGER PRIMARY KEY, applied TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        row = conn.execute("SELECT coalesce(max(version), 0) FROM loom_schema").fetchone()
        current = int(row[0])
        newest = max(v for v, _ in MIGRATIONS)
        if current > newest:
            raise LoadError(
                URL_ENV,
                f"the library database is at schema {current}, newer than this app knows "
                f"({newest}): update Loom Desktop",
            )
        for version, sql in MIGRATIONS:
            if version > current:
                conn.execute(sql)
                conn.execute("INSERT INTO loom_schema (version) VALUES (%s)", (version,))
                current = version
    return current
