"""``python -m loom_core runs list|search|index|forget|publish|store|fetch``: the run library
from a terminal.

The same library the desktop's Runs page reads: ``$LOOM_LIBRARY_URL`` (a team's PostgreSQL
database), else the per-user SQLite file (``$LOOM_DESKTOP_LIBRARY`` moves it); ``--library``
names another. ``index``, ``forget``, ``publish`` and ``store URL`` write it, the others
only read. A query with a problem (an unknown ``kind:``, a bad date) or a folder that does not
exist exits 2 with one line on stderr, like every command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
from typing import Any

from loom_core.errors import LoadError
from loom_core.library.address import is_url
from loom_core.library.backend import this_host
from loom_core.library.index import Indexer
from loom_core.library.rows import RunRow
from loom_core.library.search import SORTS, Library
from loom_core.live.outcome import OUTCOMES

OUTCOME_WIDTH = max(len(o) for o in OUTCOMES)  # the outcomes line up


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "?"


def _elsewhere(host: str) -> str:
    """`` (on HOST)`` after a path that is another machine's (a team library), else ""."""
    return f" (on {host})" if host and host != this_host() else ""


def _line(row: RunRow) -> str:
    state = row.outcome if row.state == "ok" else f"{row.state}: {row.cause}"
    models = ",".join(row.models) or "-"
    tokens = f"{row.tokens_in + row.tokens_out:,} tok"
    branch = f"  ⑂ from {row.parent}" + (f" @{row.fork_seq}" if row.fork_seq is not None else "")
    healed = f"  healed by {row.healed_by}" if row.healed_by else ""
    return (
        f"{_when(row.time)}  {state:<{OUTCOME_WIDTH}} {row.format:<10} {row.steps:>7} steps {tokens:>14} "
        f"{row.cost_text() or '-':>10}  {models}  {row.path}{_elsewhere(row.host)}"
        f"{branch if row.parent else ''}{healed}"
    )


def cmd_list(args: argparse.Namespace) -> int:
    with Library(args.library) as lib:
        rows = lib.runs(args.query or "", args.sort, not args.asc, args.limit)
    if args.json:
        print(json.dumps([r.as_json() for r in rows], ensure_ascii=False))
    else:
        for row in rows:
            print(_line(row))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    if not args.query.strip():
        raise LoadError("search", "nothing to search for (give words, tool:NAME, is:error …)")
    with Library(args.library) as lib:
        hits = lib.search(args.query, args.limit)
    if args.json:
        print(json.dumps([h.as_json() for h in hits], ensure_ascii=False))
    if not hits:  # like grep: no match is exit 1, said on stderr (stdout stays the hits)
        print(f"no run matches {args.query.strip()}", file=sys.stderr)
        return 1
    if args.json:
        return 0
    for hit in hits:
        where = f"{hit.path}:{hit.seq if hit.seq is not None else 'prompt'}{_elsewhere(hit.host)}"
        sample = f"  {hit.sample_label()}" if hit.sample else ""  # open it: --sample ID:EPOCH
        tool = f"  {hit.tool}" if hit.tool else ""
        print(f"{where}{sample}{tool}  {' '.join(hit.marked().split())}")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    totals = {"indexed": 0, "unchanged": 0, "unreadable": 0, "missing": 0}
    problems: dict[str, str] = {}
    indexer = Indexer(args.library)
    try:
        for target in args.paths:
            if os.path.isdir(target):
                report = indexer.index_folder(target)
            elif os.path.isfile(target):
                report = indexer.index_paths([target])
            else:
                raise LoadError(target, "no such file or folder")
            for name in totals:
                totals[name] += len(getattr(report, name))
            problems.update(report.causes)
    finally:
        indexer.close()
    if args.json:
        unreadable = [{"path": p, "cause": c} for p, c in problems.items()]
        print(json.dumps({**totals, "unreadable_files": unreadable}, ensure_ascii=False))
    else:
        print(", ".join(f"{v} {k}" for k, v in totals.items()))
        for path, cause in problems.items():
            print(f"unreadable: {path}: {cause}", file=sys.stderr)
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    indexer = Indexer(args.library)
    try:
        if not indexer.forget(args.path):
            raise LoadError(args.path, _not_forgotten(indexer))
    finally:
        indexer.close()
    return 0


def _not_forgotten(indexer: Indexer) -> str:
    """Why ``forget`` found nothing: in a team's library a row is one machine's file, and
    only that machine forgets it (as the window's Forget says of another's run)."""
    db = indexer.db
    if is_url(db.address):
        return (
            f"not in the run library as a run of this machine ({db.host}); a run another "
            "machine listed or published is forgotten only there"
        )
    return "not in the run library"


def cmd_publish(args: argparse.Namespace) -> int:
    from loom_core.library.publish import publish, run_store

    indexer = Indexer(args.library)
    try:
        store = run_store(indexer.db)
        prepare = scrubbed_copy(args.scrub_dir) if args.scrub else None
        done = [publish(indexer, store, path, prepare) for path in args.paths]
    finally:
        indexer.close()
    if args.json:
        print(json.dumps([d.__dict__ for d in done], ensure_ascii=False))
    for d in done:
        state = "uploaded" if d.uploaded else "already in the store"
        print(f"{d.path}: {state}: {d.url}", file=sys.stderr if args.json else sys.stdout)
    return 0


def scrubbed_copy(folder: str | None) -> Any:
    """``publish --scrub``: each run as its loom trace with secret-shaped strings replaced
    (the proxy's scrubber, as HTML export uses it), ``scrubbed: true``, checksum stamped."""
    import tempfile

    from loom_core.cli.sample_option import load_run
    from loom_core.formats.save import atomic_write_bytes, document_dict, stamp
    from loom_core.proxy.scrub import scrub_value
    from loom_core.runs_dir import stem_of

    out = folder or tempfile.mkdtemp(prefix="loom-scrubbed-")

    def prepare(path: str) -> str:
        data = scrub_value(document_dict(load_run(path, None)))
        data["scrubbed"] = True
        target = os.path.join(out, stem_of(path) + ".loom.json")
        atomic_write_bytes(target, json.dumps(stamp(data), indent=2).encode("utf-8"))
        return target

    return prepare


def cmd_store(args: argparse.Namespace) -> int:
    from loom_core.library.publish import STORE, name_store

    indexer = Indexer(args.library)
    try:
        if args.url:
            name_store(indexer.db, args.url)
        url = indexer.db.setting(STORE)
    finally:
        indexer.close()
    print(url or "no run store (set one: runs store s3://bucket/prefix, or a shared folder)")
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    from loom_core.library.cache import local_copy
    from loom_core.library.store import RunStore

    store, digest, name = RunStore.holding(args.url)
    print(local_copy(store, args.url, digest, name))
    return 0


def add_runs_command(sub: Any) -> None:
    """Register ``runs`` and its subcommands on the shared CLI's subparsers."""
    p = sub.add_parser("runs", help="the run library: list, search across runs, index folders")
    p.add_argument(
        "--library",
        metavar="DB",
        help="the library: a file, or a postgresql:// URL (default: $LOOM_LIBRARY_URL, "
        "else the per-user file)",
    )
    runs = p.add_subparsers(dest="runs_command", required=True)
    lst = runs.add_parser("list", help="runs, newest first")
    lst.add_argument("query", nargs="?", help="keep runs matching this search (model:, after: …)")
    lst.add_argument("--sort", choices=list(SORTS), default="time")
    lst.add_argument("--asc", action="store_true", help="ascending (default: descending)")
    lst.add_argument("--limit", type=int, default=200)
    lst.add_argument("--json", action="store_true", help="one JSON array")
    lst.set_defaults(func=cmd_list)
    search = runs.add_parser(
        "search",
        help='steps across all runs: words, "phrases", tool:NAME, model:NAME, is:error, '
        "is:blocked, kind:KIND, agent:NAME, after:DATE, before:DATE (exit 1: no run matches)",
    )
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=50)
    search.add_argument("--json", action="store_true", help="one JSON array of hits")
    search.set_defaults(func=cmd_search)
    index = runs.add_parser("index", help="index the runs in folders (or files), incrementally")
    index.add_argument("paths", nargs="+", metavar="DIR")
    index.add_argument("--json", action="store_true", help="one JSON object with the counts")
    index.set_defaults(func=cmd_index)
    forget = runs.add_parser("forget", help="drop a run from the library (the file stays)")
    forget.add_argument("path")
    forget.set_defaults(func=cmd_forget)
    publish = runs.add_parser(
        "publish", help="upload runs to the library's run store and index them for everyone"
    )
    publish.add_argument("paths", nargs="+", metavar="RUN")
    publish.add_argument(
        "--scrub", action="store_true", help="publish each run's loom trace with secrets replaced"
    )
    publish.add_argument("--scrub-dir", help=argparse.SUPPRESS)  # where scrubbed copies go
    publish.add_argument("--json", action="store_true", help="one JSON array of what was done")
    publish.set_defaults(func=cmd_publish)
    store = runs.add_parser(
        "store", help="show, or set for everyone, where the library keeps published run files"
    )
    store.add_argument("url", nargs="?", help="s3://bucket/prefix or a shared folder")
    store.set_defaults(func=cmd_store)
    fetch = runs.add_parser("fetch", help="a published run's local copy (printed: its path)")
    fetch.add_argument("url")
    fetch.set_defaults(func=cmd_fetch)
