"""Which files in a folder are runs, and which folders the library watches by default.

Why by name first: a watched folder (a home directory, a project) holds many files that are
not runs, and opening each would cost more than the index. A file named like a loom run
(``*.loom.json``, ``*.journal.jsonl``, ``*.wirelog``) is a run, and one that does not load is
listed as unreadable. A file that only a foreign reader's pattern names (``*.jsonl`` for
Claude Code transcripts, ``*.eval``) is a run only when that reader claims its first bytes,
so an unrelated ``.jsonl`` is skipped, not listed as broken. One recording is one run: a
journal is skipped when the trace of the same recording is beside it, and the proxy's
exchange sidecar always is (its trace or journal is the run).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

from loom_core.formats.foreign import SNIFF_BYTES, open_patterns, reader_for
from loom_core.runs_dir import runs_dir

TRACE, JOURNAL, SIDECAR = ".loom.json", ".journal.jsonl", ".exchanges.jsonl"
LOOM_SUFFIXES = (TRACE, JOURNAL, ".wirelog", ".wirelog.jsonl")
MAX_DEPTH = 12  # folders below a watched one that are walked; a link loop ends here


def default_folders() -> list[Path]:
    """The per-user runs folder and Claude Code's transcripts (each only once it exists)."""
    return [f for f in (runs_dir(), Path.home() / ".claude" / "projects") if f.is_dir()]


def is_loom_name(name: str) -> bool:
    """Named like a loom run (a sidecar is part of one, not a run)."""
    return name.endswith(LOOM_SUFFIXES)


def _foreign_name(name: str) -> bool:
    return any(fnmatch(name, p) for p in open_patterns())


def _claimed(path: str) -> bool:
    """A foreign reader claims the file's first bytes."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError:
        return False
    try:
        return reader_for(head, path) is not None
    except Exception:  # a reader's sniff must never stop a scan
        return False


def is_run_file(path: str) -> bool:
    """Whether the library indexes the file at ``path`` (see the module docstring)."""
    name = os.path.basename(path)
    if name.endswith(SIDECAR):
        return False
    if name.endswith(JOURNAL):
        return not os.path.exists(path[: -len(JOURNAL)] + TRACE)
    if is_loom_name(name):
        return True
    return _foreign_name(name) and _claimed(path)


def run_files(folder: str | Path) -> Iterator[str]:
    """Absolute paths of the runs under ``folder``, depth-first, hidden folders skipped."""
    root = os.path.abspath(folder)
    stack = [(root, 0)]
    while stack:
        current, depth = stack.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue  # unreadable or vanished meanwhile: nothing to list
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth < MAX_DEPTH and not entry.name.startswith("."):
                        stack.append((entry.path, depth + 1))
                elif entry.is_file() and is_run_file(entry.path):
                    yield entry.path
            except OSError:
                continue
