"""CPU seconds per 100,000 steps a team library's write costs the client and the server.

Usage:
    python benchmarks/library_cpu.py [--runs 100] [--steps 1000] [--rounds 3] [--with-keys]

Why CPU, not steps per second: on a shared two-core machine the wall clock measures the
other jobs; the CPU each side spends per step is what the code decides. Generated runs
(``benchmarks/library.py``'s) go through ``Indexer.store`` into a new database of a
throwaway server; the client is this process (the runs' generation included), the server
every process of the cluster (the postmaster's reaped backends included). Autovacuum is
off so that when it happens to run does not move the figures. ``--with-keys`` alternates
each round with a database given back schema 3's foreign keys from ``steps`` and
``step_words`` to ``runs``, the cost schema 4 removed.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg  # noqa: E402

from benchmarks.library import RunMaker, throwaway_postgres  # noqa: E402
from loom_core.library.index import Indexer  # noqa: E402

KEYS = (
    "ALTER TABLE steps ADD CONSTRAINT steps_run_fkey FOREIGN KEY (run) "
    "REFERENCES runs (id) ON DELETE CASCADE; "
    "ALTER TABLE step_words ADD CONSTRAINT step_words_run_fkey FOREIGN KEY (run) "
    "REFERENCES runs (id) ON DELETE CASCADE"
)


def server_cpu(postmaster: int) -> float:
    """CPU seconds of the cluster: the postmaster, its reaped children, its live ones."""
    ticks = 0
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, ValueError):
            continue  # not a process, or gone meanwhile
        pid, ppid = int(name), int(fields[1])
        if pid == postmaster:
            ticks += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
        elif ppid == postmaster:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def client_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one(server: Any, postmaster: int, name: str, keys: bool, args: argparse.Namespace) -> None:
    url = server.create_database(name)
    indexer = Indexer(url)  # applies the migrations
    if keys:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(KEYS)
    maker = RunMaker(args.steps)
    time.sleep(0.5)
    s0, c0 = server_cpu(postmaster), client_cpu()
    for n in range(args.runs):
        facts, rows = maker.run(None)
        path = f"/bench/runs/{n:05d}.loom.json"
        indexer.store(path, 50_000 + n, int(1e18) + n * 60_000_000_000, facts, rows)
    indexer.close()  # waits for the writes in flight
    time.sleep(1.0)  # the backends exit and are reaped
    s1, c1 = server_cpu(postmaster), client_cpu()
    per = 100_000 / (args.runs * args.steps)
    print(
        f"{'schema 3 keys' if keys else 'this code':13s}  client {(c1 - c0) * per:.2f} s  "
        f"server {(s1 - s0) * per:.2f} s  load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    server.psql(f"DROP DATABASE {name}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--with-keys", action="store_true", help="alternate with schema 3's keys")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="loom-cpu-") as tmp:
        server = throwaway_postgres(Path(tmp))
        try:
            postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
            server.psql("ALTER SYSTEM SET autovacuum = off")
            server.psql("SELECT pg_reload_conf()")
            print("CPU per 100,000 steps")
            for r in range(args.rounds):
                order = [False, True] if args.with_keys else [False]
                for keys in order if r % 2 == 0 else order[::-1]:
                    one(server, postmaster, f"cpu{r}{int(keys)}", keys, args)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
