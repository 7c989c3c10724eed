"""The run library at scale: 10,000 runs / 10,000,000 steps, then search and the Runs page.

    python benchmarks/library.py [--runs 10000] [--steps 1000] [--file-runs 40] [--json]
    python benchmarks/library.py --backend postgresql [--url postgresql://…] [--runs …]

``--backend postgresql`` measures a team library on PostgreSQL -- a throwaway server
(Debian's binaries, as the tests start it) unless ``--url`` names one -- and then the
SQLite library on the same generated data (``--no-sqlite`` skips that), printing both
side by side with each goal: search p99 < 200 ms and first page < 300 ms on both,
PostgreSQL's ingestion at least SQLite's rate.

Indexing ten million steps through files would mean writing and loading 10,000 traces
(about half an hour here), so the runs are generated as rows and written through the
indexer's own :meth:`~loom_core.library.index.Indexer.store` (the same schema, statements
and one transaction per run as a real index); the output says so. The real path through
files -- write traces, ``index_folder`` them through the loader -- is measured on
``--file-runs`` traces and reported as steps per second beside it.

Printed, each with its goal and met / not met: a search for a tool argument (p50 / p99
over 100 searches for 20 planted arguments, goal < 200 ms), the Runs page's first page
sorted by time (p50 / p99, goal < 300 ms; also with a fresh connection), the database size
and the index time. The database lives under /tmp and is deleted afterwards (``--keep``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from itertools import accumulate
from pathlib import Path
from typing import Any

from loom_core.library.extract import RunFacts, StepText
from loom_core.library.index import Indexer
from loom_core.library.search import Library

GOALS_MS = {"search_p99_ms": 200.0, "list_p99_ms": 300.0}
NEEDLES = 20
TOOLS = ("bash", "read_file", "write_file", "search", "run_tests", "git")
_SYLLABLES = "ka lo mi ne ru sa ti vo de fa gu hi jo pe qu wa xe yo zu ba".split()


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    """Made-up words, used with a skewed frequency (a few very common, most rare)."""
    words = {"".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4))) for _ in range(size * 2)}
    common = "config error test file value user agent model token result path src".split()
    return common + sorted(words)[:size]


class RunMaker:
    """Generated runs: model steps that call tools with arguments, and tool results."""

    def __init__(self, steps: int, seed: int = 11) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        self.steps = steps
        self.cum_weights = list(accumulate(1.0 / (i + 1) for i in range(len(self.words))))

    def _text(self, n: int) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.cum_weights, k=n))

    def run(self, needle: str | None) -> tuple[RunFacts, list[StepText]]:
        rng, rows = self.rng, [StepText(None, self._text(20), agent="user", tags="kepisode")]
        plant = rng.randrange(0, self.steps // 2) * 2 if needle else -1
        for seq in range(0, self.steps, 2):
            tool = "bash" if seq == plant else rng.choice(TOOLS)
            arg = f"{self._text(3)} {needle}" if seq == plant else self._text(4)
            call = f'{tool}({{"command": "{arg}", "path": "src/{seq}.py"}})'
            rows.append(StepText(seq, f"{self._text(12)}\n{call}", tool, "main", "kmodel"))
            error = rng.random() < 0.01
            body = ("ERROR: " if error else "") + self._text(rng.randint(8, 30))
            tags = "ktool ferror" if error else "ktool"
            rows.append(StepText(seq + 1, body, tool, "main", tags))
        facts = RunFacts(
            format="trace",
            title=rows[0].body[:80],
            models=[rng.choice(["claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro"])],
            steps=self.steps,
            tokens_in=rng.randint(10_000, 2_000_000),
            tokens_out=rng.randint(1_000, 100_000),
            cost=round(rng.random() * 5, 4),
            errors=sum(1 for r in rows if "ferror" in r.tags),
        )
        return facts, rows


def needle_of(i: int) -> str:
    return f"deploy/payments-canary-{i:02d}x7f3a"


def generate(db: str, runs: int, steps: int) -> dict[str, Any]:
    """Write ``runs`` generated runs through the indexer (the library at ``db``: a file or
    a URL); the planted needles and timings. The same seed makes the same runs each time."""
    maker = RunMaker(steps)
    indexer = Indexer(db)
    planted: dict[str, int] = {}
    start = time.perf_counter()
    base = time.time() - runs * 60
    for n in range(runs):
        needle = needle_of(n % NEEDLES) if n % max(1, runs // (NEEDLES * 3)) == 0 else None
        if needle:
            planted[needle] = planted.get(needle, 0) + 1
        facts, rows = maker.run(needle)
        mtime_ns = int((base + n * 60) * 1e9)
        indexer.store(f"/bench/runs/{n:05d}.loom.json", 50_000 + n, mtime_ns, facts, rows)
    indexer.flush()  # the team library's last runs were still being written (pg_later.py)
    elapsed = time.perf_counter() - start
    conn = getattr(indexer.db, "conn", None)  # SQLite's: fold the WAL in before measuring
    if conn is not None:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    indexer.close()
    if db.startswith("postgresql://"):  # what autovacuum does within a minute on a server
        import psycopg

        with psycopg.connect(db, autocommit=True) as pg:
            pg.execute("VACUUM ANALYZE")
    return {"planted": planted, "index_s": elapsed}


def through_files(count: int, steps: int, address: str | None = None) -> dict[str, float]:
    """Index ``count`` real trace files of ``steps`` effects through the loader (into the
    library at ``address``, else a SQLite file of their own)."""
    from benchmarks.synth import write_synth

    with tempfile.TemporaryDirectory(prefix="loom-library-files-") as tmp:
        folder = Path(tmp) / "runs"
        folder.mkdir()
        for n in range(count):
            write_synth(folder / f"run-{n}.loom.json", steps)
        indexer = Indexer(address or Path(tmp) / "files.sqlite3")
        start = time.perf_counter()
        report = indexer.index_folder(folder)
        elapsed = time.perf_counter() - start
        again = time.perf_counter()
        indexer.index_folder(folder)
        unchanged = time.perf_counter() - again
        indexer.close()
    assert len(report.indexed) == count, report
    return {
        "files": count,
        "steps_per_s": count * steps / elapsed,
        "runs_per_s": count / elapsed,
        "unchanged_pass_s": unchanged,
    }


def _timed(fn: Any, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(db: str, planted: dict[str, int]) -> dict[str, Any]:
    lib = Library(db)
    searches: list[float] = []
    found_all = True
    for needle, count in planted.items():
        query = f'tool:bash "{needle}"'
        hits = lib.search(query)
        found_all = found_all and len({h.path for h in hits}) == count
        searches += _timed(lambda q=query: lib.search(q), 100 // len(planted))
    listing = _timed(lambda: lib.runs(limit=200), 100)

    def fresh() -> None:
        with Library(db) as other:
            other.runs(limit=200)

    opened = _timed(fresh, 20)
    common = _timed(lambda: lib.search("tool:read_file config"), 50)
    errors = _timed(lambda: lib.search("is:error"), 20)
    runs_with = _timed(lambda: lib.runs(f'"{needle_of(0)}"'), 5)
    runs_common = _timed(lambda: lib.runs("tool:read_file config"), 5)
    count = lib.count()
    lib.close()
    return {
        "runs": count,
        "search_found_every_planted_run": found_all,
        "search_p50_ms": statistics.median(searches),
        "search_p99_ms": _p(searches, 0.99),
        "list_p50_ms": statistics.median(listing),
        "list_p99_ms": _p(listing, 0.99),
        "open_and_list_p50_ms": statistics.median(opened),
        "common_word_search_p50_ms": statistics.median(common),
        "common_word_search_p99_ms": _p(common, 0.99),
        "is_error_search_p50_ms": statistics.median(errors),
        "runs_page_with_search_p50_ms": statistics.median(runs_with),
        "runs_page_with_common_word_p50_ms": statistics.median(runs_common),
    }


def db_bytes(db: str) -> int:
    """The library's size on disk: the SQLite file and its WAL, or the PostgreSQL database."""
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
            return int(row[0]) if row else 0
    path = Path(db)
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def one_backend(address: str, args: argparse.Namespace, files_at: str | None) -> dict[str, Any]:
    """Fill the library at ``address``, measure it; ``files_at``: where through_files indexes."""
    made = generate(address, args.runs, args.steps)
    result: dict[str, Any] = {
        "how": "runs generated as rows, written through Indexer.store (files would take "
        "too long); the file path measured separately on real traces",
        "runs_made": args.runs,
        "steps": args.runs * args.steps,
        "index_s": round(made["index_s"], 1),
        "steps_per_s": args.runs * args.steps / made["index_s"],
        "db_mb": round(db_bytes(address) / 1e6, 1),
        **measure(address, made["planted"]),
        "through_files": through_files(args.file_runs, args.steps, files_at),
    }
    result["goals"] = {k: {"goal": v, "met": result[k] < v} for k, v in GOALS_MS.items()}
    return result


def throwaway_postgres(folder: Path) -> Any:
    """A PostgreSQL server of Debian's binaries under ``folder`` (as the tests start one)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's tests/
    from tests.servers.postgres import PgServer, find_binaries

    bindir, why = find_binaries()
    if bindir is None:
        raise SystemExit(f"library.py: no PostgreSQL server here ({why}); give --url")
    folder.chmod(0o755)  # the server may run as the postgres user
    server = PgServer(bindir, folder / "cluster")
    server.start()
    os.environ["PGPASSFILE"] = str(server.passfile)
    return server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--steps", type=int, default=1_000, help="steps per run")
    ap.add_argument("--file-runs", type=int, default=40, help="real traces indexed through files")
    ap.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    ap.add_argument("--url", help="an existing PostgreSQL database (default: a throwaway server)")
    ap.add_argument("--no-sqlite", action="store_true", help="with postgresql: skip SQLite")
    ap.add_argument("--dir", default="/tmp/loom-library-bench")
    ap.add_argument("--keep", action="store_true", help="keep the database afterwards")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    folder = Path(args.dir)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    db = str(folder / "library.sqlite3")
    results: dict[str, dict[str, Any]] = {}
    server = None
    try:
        if args.backend == "postgresql":
            url, files_url = args.url, args.url
            if url is None:
                server = throwaway_postgres(folder)
                url = server.create_database("bench")
                files_url = server.create_database("bench_files")
            results["postgresql"] = one_backend(url, args, files_url)
        if args.backend == "sqlite" or not args.no_sqlite:
            results["sqlite"] = one_backend(db, args, None)
    finally:
        if server is not None:
            server.stop()
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print(json.dumps(results))
    elif len(results) == 2:
        compare(results["sqlite"], results["postgresql"])
    else:
        report(results["sqlite"], Path(db) if args.keep else None)


def compare(lite: dict[str, Any], pg: dict[str, Any]) -> None:
    """Both libraries on the same data, side by side, each goal met or not."""

    def met(ok: bool) -> str:
        return "met" if ok else "NOT MET"

    def pair(key: str) -> str:
        return f"{lite[key]:>10.1f} {pg[key]:>12.1f}"

    print(f"library benchmark: {pg['runs']:,} runs / {pg['steps']:,} steps on each ({pg['how']})")
    print(f"{'':38} {'SQLite':>10} {'PostgreSQL':>12}   goal")
    rate_ok = pg["steps_per_s"] >= lite["steps_per_s"]
    print(
        f"{'ingestion, steps/s':38} {lite['steps_per_s']:>10,.0f} {pg['steps_per_s']:>12,.0f}"
        f"   PostgreSQL >= SQLite: {met(rate_ok)} ({pg['steps_per_s'] / lite['steps_per_s']:.2f}x)"
    )
    tf, pf = lite["through_files"], pg["through_files"]
    print(
        f"{'  through files, steps/s':38} {tf['steps_per_s']:>10,.0f} {pf['steps_per_s']:>12,.0f}"
    )
    for key, label, goal in (
        ("search_p50_ms", "search tool argument p50, ms", ""),
        ("search_p99_ms", "search tool argument p99, ms", "< 200 ms"),
        ("common_word_search_p50_ms", "search common word p50, ms", ""),
        ("common_word_search_p99_ms", "search common word p99, ms", "< 200 ms"),
        ("list_p50_ms", "Runs page first page p50, ms", ""),
        ("list_p99_ms", "Runs page first page p99, ms", "< 300 ms"),
        ("open_and_list_p50_ms", "  with a fresh connection p50, ms", ""),
        ("is_error_search_p50_ms", "is:error p50, ms", ""),
        ("runs_page_with_search_p50_ms", "Runs page filtered by a search p50, ms", ""),
        ("runs_page_with_common_word_p50_ms", "  by a common word p50, ms", ""),
    ):
        limit = float(goal.split()[1]) if goal else None
        verdict = (
            f"   {goal}: SQLite {met(lite[key] < limit)}, PostgreSQL {met(pg[key] < limit)}"
            if limit
            else ""
        )
        print(f"{label:38} {pair(key)}{verdict}")
    found = lite["search_found_every_planted_run"] and pg["search_found_every_planted_run"]
    print(f"{'database size, MB':38} {pair('db_mb')}")
    print(f"every planted run found on both: {found}")


def report(r: dict[str, Any], kept: Path | None) -> None:
    def met(key: str) -> str:
        return "met" if r["goals"][key]["met"] else "NOT MET"

    f = r["through_files"]
    print(f"library benchmark: {r['runs']:,} runs / {r['steps']:,} steps ({r['how']})")
    print(
        f"  index time            {r['index_s']:.1f} s ({r['steps'] / r['index_s']:,.0f} steps/s)"
    )
    print(
        f"  through files         {f['steps_per_s']:,.0f} steps/s, {f['runs_per_s']:.1f} runs/s "
        f"on {f['files']} traces (10M steps: ~{10_000_000 / f['steps_per_s'] / 60:.0f} min); "
        f"unchanged re-pass {f['unchanged_pass_s'] * 1000:.0f} ms"
    )
    per_step = r["db_mb"] * 1e6 / r["steps"]
    print(
        f"  database size         {r['db_mb']:,.0f} MB, {per_step:.0f} bytes per step (no goal "
        f"set){f'; kept: {kept}' if kept else ''}"
    )
    print(
        f"  search tool argument  p50 {r['search_p50_ms']:.1f} ms, p99 {r['search_p99_ms']:.1f} ms "
        f"(goal < 200 ms: {met('search_p99_ms')}; every planted run found: "
        f"{r['search_found_every_planted_run']})"
    )
    print(
        f"  Runs page first page  p50 {r['list_p50_ms']:.1f} ms, p99 {r['list_p99_ms']:.1f} ms "
        f"(goal < 300 ms: {met('list_p99_ms')}); fresh connection p50 "
        f"{r['open_and_list_p50_ms']:.1f} ms"
    )
    print(
        f"  also: common word search p50 {r['common_word_search_p50_ms']:.1f} ms, is:error "
        f"p50 {r['is_error_search_p50_ms']:.1f} ms, Runs page filtered by a search p50 "
        f"{r['runs_page_with_search_p50_ms']:.1f} ms (by a common word "
        f"{r['runs_page_with_common_word_p50_ms']:.1f} ms)"
    )


if __name__ == "__main__":
    os.environ.setdefault("LOOM_DESKTOP_LIBRARY", "/tmp/loom-library-bench/unused.sqlite3")
    main()
