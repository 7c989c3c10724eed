"""Which files in a folder are runs, and which folders the library watches by default.

Why by name first: a watched folder (a home directory, a project) holds many files that are
not runs, and opening each would cost more than the index. A file named like a loom run
(``*.loom.json``, ``*.journal.jsonl``, ``*.wirelog``) is a run, and one that does not load is
listed as unreadable. Any other ``*.json`` / ``*.jsonl`` file, or one a foreign reader's
pattern names (``*.otlp.pb``), is a run only when a reader -- ours or a foreign one -- claims
its first bytes (:func:`~loom_core.formats.loader.loom_claim`: a loom-harness journal named
``run.jsonl`` is one; Claude Code transcripts have no pattern of their own), so an unrelated
``.json`` is skipped, not listed as broken. One recording is one run: a journal is skipped
when the trace of the same recording is beside it, the proxy's exchange sidecar always is
(its trace or journal is the run), and so is a file a foreign run is also read from (a
Claude Code session's sub-agent files:
:attr:`~loom_core.formats.foreign.ForeignReader.companions`), found beside its session or
on its own (:func:`~loom_core.formats.foreign.run_part_of`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

from loom_core.formats.claude_sessions import claude_config_dir
from loom_core.formats.foreign import (
    SNIFF_BYTES,
    ForeignReader,
    open_patterns,
    reader_for,
    run_part_of,
)
from loom_core.formats.loader import loom_claim
from loom_core.runs_dir import runs_dir

TRACE, JOURNAL, SIDECAR = ".loom.json", ".journal.jsonl", ".exchanges.jsonl"
LOOM_SUFFIXES = (TRACE, JOURNAL, ".wirelog", ".wirelog.jsonl")
SNIFFED = (".json", ".jsonl")  # other files with these names are runs if a reader claims them
MAX_DEPTH = 12  # folders below a watched one that are walked; a link loop ends here


def default_folders() -> list[Path]:
    """The per-user runs folder and Claude Code's transcripts (``~/.claude/projects``, or
    under ``$CLAUDE_CONFIG_DIR``), each only once it exists."""
    return [f for f in (runs_dir(), claude_config_dir() / "projects") if f.is_dir()]


def is_loom_name(name: str) -> bool:
    """Named like a loom run (a sidecar is part of one, not a run)."""
    return name.endswith(LOOM_SUFFIXES)


def _foreign_name(name: str) -> bool:
    return name.endswith(SNIFFED) or any(fnmatch(name, p) for p in open_patterns())


def _head(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(SNIFF_BYTES)
    except OSError:
        return None


def claimant(path: str, head: bytes | None = None) -> ForeignReader | None:
    """The foreign reader that claims the file's first bytes (None: none, or unreadable)."""
    head = _head(path) if head is None else head
    if head is None:
        return None
    try:
        return reader_for(head, path)
    except Exception:  # a reader's sniff must never stop a scan
        return None


def claimed(path: str) -> bool:
    """Whether a reader, foreign or ours, claims the file's first bytes as a run (an
    exchange sidecar is part of one, never a run)."""
    head = _head(path)
    if head is None:
        return False
    ours = loom_claim(head)
    return ours not in (None, "exchanges") or claimant(path, head) is not None


def companions(path: str, reader: ForeignReader | None) -> list[str]:
    """The other files the run at ``path`` is read from (absolute; none for loom formats)."""
    if reader is None or reader.companions is None:
        return []
    try:
        return [os.path.abspath(p) for p in reader.companions(path)]
    except Exception:  # a listing that fails leaves the run on its own file
        return []


def superseded(path: str) -> bool:
    """A proxy's journal once its trace is written: the same run, the trace is its file."""
    return path.endswith(JOURNAL) and os.path.exists(path[: -len(JOURNAL)] + TRACE)


def is_run_file(path: str) -> bool:
    """Whether the library indexes the file at ``path`` (see the module docstring)."""
    name = os.path.basename(path)
    if name.endswith(SIDECAR):
        return False
    if name.endswith(JOURNAL):
        return not superseded(path)
    if is_loom_name(name):
        return True
    return _foreign_name(name) and run_part_of(path) is None and claimed(path)


def run_files(folder: str | Path) -> list[str]:
    """Absolute paths of the runs under ``folder`` (hidden folders skipped), without the
    files another run there is also read from."""
    found = list(_candidates(folder))
    foreign = [path for path in found if not is_loom_name(os.path.basename(path))]
    parts = {c for path in foreign for c in companions(path, claimant(path))}
    return [path for path in found if path not in parts]


def _candidates(folder: str | Path) -> Iterator[str]:
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
