"""Many writers, nothing lost: three processes index and publish overlapping folders at
once while the PostgreSQL server is restarted under them; afterwards every run is listed
exactly once and opens.

The restart is not timed: it is made once the database holds a tenth of the runs (so the
writers are mid-way), and held down until every writer has seen it fail (their retries
show in the server's log as refused connections, and in their exit codes as success).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from loom_core.library.publish import local_file
from loom_core.library.search import Library
from tests.core.team.test_team_library import SAMPLE
from tests.servers.postgres import PgServer

FILES = 12  # runs per folder
WAIT_S = 300.0


def make_runs(folder: Path, n: int, tag: str) -> list[Path]:
    """``n`` distinct runs (each its own bytes, so its own place in the store)."""
    folder.mkdir(parents=True)
    text = SAMPLE.read_text(encoding="utf-8")
    made = []
    for i in range(n):
        path = folder / f"{tag}-{i:03d}.loom.json"
        path.write_text(text.replace("CI for textkit is red", f"CI {tag} {i} is red"))
        made.append(path)
    return made


def runs_in(url: str) -> int:
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])
    except psycopg.OperationalError:
        return 0


@pytest.mark.long
def test_three_writers_and_a_restart_lose_nothing_and_list_each_run_once(
    pg_server: PgServer,
    pg_url: str,
    bucket: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    f1, f2, f3 = (make_runs(tmp_path / f"f{k}", FILES, f"f{k}") for k in (1, 2, 3))
    env = {**os.environ, "LOOM_LIBRARY_URL": pg_url, "LOOM_HOST": "ci-runner"}
    env["LOOM_DESKTOP_CACHE"] = str(tmp_path / "cache")

    def runs_cmd(*args: str | Path) -> list[str]:
        return [sys.executable, "-m", "loom_core", "runs", *map(str, args)]

    subprocess.run(runs_cmd("store", f"{bucket}/ci"), env=env, check=True, timeout=120)
    writers = [
        subprocess.Popen(runs_cmd("index", f1[0].parent, f2[0].parent), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        subprocess.Popen(runs_cmd("index", f2[0].parent, f3[0].parent), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        subprocess.Popen(runs_cmd("publish", *f1, *f3), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + WAIT_S
        while runs_in(pg_url) < FILES // 2:  # a sixth of the runs: mid-way
            assert time.monotonic() < deadline, "the writers never got going"
            assert all(w.poll() is None for w in writers), "a writer ended before the restart"
            time.sleep(0.05)
        pg_server.restart(down_seconds=1.0)
        results = [w.communicate(timeout=WAIT_S) for w in writers]
    finally:
        for w in writers:
            if w.poll() is None:
                w.kill()
                w.wait()
    assert [w.returncode for w in writers] == [0, 0, 0], results

    listed = json.loads(
        subprocess.run(
            runs_cmd("list", "--json", "--limit", "1000"), env=env, check=True,
            capture_output=True, text=True, timeout=120,
        ).stdout
    )  # fmt: skip
    places = [(r["host"], r["path"]) for r in listed]
    assert len(places) == len(set(places)) == 3 * FILES  # each run once, none lost
    by_path = {r["path"]: r for r in listed}
    for path in f2:
        assert by_path[str(path)]["state"] == "ok" and by_path[str(path)]["steps"] > 0
    # every published run opens on a machine that does not have its file
    monkeypatch.setenv("LOOM_HOST", "elsewhere")
    monkeypatch.setenv("LOOM_DESKTOP_CACHE", str(tmp_path / "elsewhere-cache"))
    with Library(pg_url) as lib:
        for path in [*f1, *f3]:
            row = by_path[str(path)]
            assert row["url"] and row["state"] == "ok", row
            local = local_file(lib.db, str(row["path"]), str(row["host"]), str(row["url"]))
            assert local.read_bytes() == path.read_bytes()
