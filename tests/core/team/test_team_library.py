"""A team's library: two machines, one PostgreSQL database and one S3 bucket (real servers).

Each "laptop" is the real ``runs`` command in its own process with its own ``LOOM_HOST``,
folder and cache, pointed at the same ``LOOM_LIBRARY_URL``; what one publishes the other
lists, finds and opens at the same step. The database's password comes from
``PGPASSFILE`` only, and the connection is TLS because the server offers it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from loom_core.errors import LoadError
from loom_core.library.pg_schema import MIGRATIONS, check_url, redacted
from tests.servers.postgres import PgServer

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "resources" / "sample.loom.json"


class Laptop:
    """One machine of the team: its name, its folder of runs, its cache of others' runs."""

    def __init__(self, name: str, root: Path, url: str) -> None:
        self.name, self.folder = name, root / name / "runs"
        self.folder.mkdir(parents=True)
        self.env = {
            **os.environ,
            "LOOM_LIBRARY_URL": url,
            "LOOM_HOST": name,
            "LOOM_AUTHOR": f"{name}-user",
            "LOOM_DESKTOP_CACHE": str(root / name / "cache"),
        }

    def run(self, *args: str | Path, code: int = 0) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "loom_core", "runs", *map(str, args)],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == code, (done.stdout, done.stderr)
        return done.stdout if code == 0 else done.stderr

    def json(self, *args: str | Path) -> list[dict[str, object]]:
        return list(json.loads(self.run(*args, "--json")))


@pytest.fixture
def team(pg_url: str, bucket: str, tmp_path: Path) -> tuple[Laptop, Laptop]:
    a, b = Laptop("laptop-a", tmp_path, pg_url), Laptop("laptop-b", tmp_path, pg_url)
    a.run("store", f"{bucket}/team")
    return a, b


def test_what_one_laptop_publishes_the_other_lists_finds_and_opens(
    team: tuple[Laptop, Laptop],
) -> None:
    a, b = team
    shutil.copy(SAMPLE, a.folder / "fix.loom.json")
    a.run("publish", a.folder / "fix.loom.json")
    b_only = b.folder / "b-only.loom.json"
    shutil.copy(SAMPLE, b_only)
    b.run("index", b.folder)  # indexed, not published: listed, searchable, not openable by a
    listed = {(r["host"], Path(str(r["path"])).name): r for r in b.json("list")}
    assert set(listed) == {("laptop-a", "fix.loom.json"), ("laptop-b", "b-only.loom.json")}
    mine = listed[("laptop-a", "fix.loom.json")]
    assert mine["author"] == "laptop-a-user" and str(mine["url"]).startswith("s3://")
    hits = [h for h in b.json("search", "tool:git_push") if h["host"] == "laptop-a"]
    assert [h["seq"] for h in hits] == [20, 21]  # the call and its tool step, as on laptop a
    local = Path(b.run("fetch", str(hits[0]["url"])).strip())
    assert local.read_bytes() == SAMPLE.read_bytes() and "laptop-b" in str(local)
    assert b.run("list", "author:laptop-a").count("\n") == 1
    assert "fix.loom.json (on laptop-a)" in b.run("list", "author:laptop-a")  # not b's own file
    assert ":20 (on laptop-a)  git_push" in b.run("search", "tool:git_push")
    assert b.run("list", "host:laptop-b").count("\n") == 1


def test_publishing_twice_stores_once(team: tuple[Laptop, Laptop], bucket: str) -> None:
    a, b = team
    shutil.copy(SAMPLE, a.folder / "x.loom.json")
    shutil.copy(SAMPLE, b.folder / "x.loom.json")  # the same run on another laptop
    first = a.json("publish", a.folder / "x.loom.json")[0]
    again = a.json("publish", a.folder / "x.loom.json")[0]
    other = b.json("publish", b.folder / "x.loom.json")[0]
    assert first["uploaded"] and not again["uploaded"] and not other["uploaded"]
    assert first["digest"] == other["digest"]
    from fsspec.core import url_to_fs

    fs, root = url_to_fs(f"{bucket}/team")
    assert len(fs.find(root)) == 1


def test_an_upload_that_fails_is_not_listed_as_available(
    team: tuple[Laptop, Laptop], tmp_path: Path
) -> None:
    a, _b = team
    a.run("store", "s3://no-such-bucket-here/runs")
    shutil.copy(SAMPLE, a.folder / "x.loom.json")
    said = a.run("publish", a.folder / "x.loom.json", code=2)
    assert said.count("\n") == 1 and "x.loom.json" in said
    assert all(r["url"] is None for r in a.json("list"))


def test_scrub_keeps_secrets_out_of_the_store(team: tuple[Laptop, Laptop], bucket: str) -> None:
    a, _b = team
    secret = "sk-ant-api03-" + "Q" * 40
    run = a.folder / "leaky.loom.json"
    run.write_text(SAMPLE.read_text().replace("fix/slugify-unicode", secret))
    assert secret in run.read_text()
    a.run("publish", "--scrub", run)
    from fsspec.core import url_to_fs

    fs, root = url_to_fs(f"{bucket}/team")
    (stored,) = fs.find(root)
    text = fs.cat(stored).decode()
    assert secret not in text and "[scrubbed:anthropic-key]" in text
    assert secret in run.read_text()  # the user's file is left as it was


def test_the_url_holds_no_password_and_tls_is_used(pg_url: str, pg_server: PgServer) -> None:
    with pytest.raises(LoadError, match="holds a password"):
        check_url("postgresql://loom:hunter2@db.example.com/loom")
    assert redacted("postgresql://loom:hunter2@db/x") == "postgresql://loom:***@db/x"
    from loom_core.library.pg_conn import PgConnections

    db = PgConnections(pg_url)
    try:
        with db.connection() as conn:
            row = conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            assert row.fetchone()[0] is True
            versions = conn.execute("SELECT version FROM loom_schema ORDER BY version")
            assert [v for (v,) in versions] == [v for v, _ in MIGRATIONS]
    finally:
        db.close()


def test_a_database_newer_than_the_app_is_refused_by_name(pg_url: str) -> None:
    from loom_core.library.pg_conn import PgConnections

    PgConnections(pg_url).close()
    db = PgConnections(pg_url)
    try:
        with db.connection() as conn:
            conn.execute("INSERT INTO loom_schema (version) VALUES (99)")
    finally:
        db.close()
    with pytest.raises(LoadError, match="newer than this app knows"):
        PgConnections(pg_url)
