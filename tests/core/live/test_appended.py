"""A live Claude Code transcript is read by offset: only appended lines are decoded, and the
run after any sequence of appends is the run a fresh open of the same bytes gives.

Real transcripts (with their sub-agent and compaction files beside them) are written a
piece at a time, cut at line ends and in the middle of lines, and the followed document is
compared, whole, with the reader's own load of the bytes written so far.
"""

from __future__ import annotations

import os
import random
import re
import shutil
from pathlib import Path

import msgspec
import pytest

from loom_core.errors import LoadError
from loom_core.formats import claude_code, claude_resume
from loom_core.formats.claude_build import Builder
from loom_core.formats.claude_code import READER, load_claude_code
from loom_core.formats.claude_resume import ResumedLines
from loom_core.formats.document import Document
from loom_core.live.appended import AppendedReader
from loom_core.live.reread import RereadFollower
from tests.core.formats.real_world import real_files

SESSIONS = real_files("claude-code", ".jsonl")


def facts(doc: Document) -> bytes:
    """Everything a document holds that a view shows: the loom trace it was read into
    (steps, numbers, depths, usage), the effects decoded from it, the reader's extras
    (source records, sub-agents, compactions, rewound branches, unknown lines), its
    warnings and whether it is torn. Not the trace's checksum: a followed run's is not
    stamped per read (:mod:`loom_core.formats.growing_run`)."""
    assert doc.source is not None
    source = re.sub(rb',"checksum":"[^"]*"}$', b"}", doc.source)
    header = msgspec.structs.replace(doc.header, checksum=None)
    rest = (doc.format, doc.torn, doc.warnings, doc.extra, header, doc.effects)
    return source + msgspec.json.encode(rest)


def same_as_fresh(path: Path, doc: Document) -> None:
    assert facts(doc) == facts(load_claude_code(path.read_bytes(), str(path)))


def _copy_session(src: Path, tmp: Path) -> Path:
    """The transcript's companions (``<session>/subagents``) beside an empty copy of it."""
    folder = src.with_suffix("")
    if folder.is_dir():
        shutil.copytree(folder, tmp / folder.name)
    dest = tmp / src.name
    dest.write_bytes(b"")
    return dest


def _cuts(data: bytes, seed: int, count: int = 24) -> list[int]:
    """Where the writer stops: line ends, the middle of lines, the end of the file."""
    rng = random.Random(seed)
    ends = [i + 1 for i in range(len(data)) if data[i] == 0x0A]
    picked = set(rng.sample(ends, min(count // 2, len(ends))))
    picked |= {rng.randrange(1, len(data)) for _ in range(count // 2)}
    return sorted(picked | {len(data)})


@pytest.mark.parametrize("src", SESSIONS, ids=lambda p: p.name[:40])
def test_followed_appends_read_as_a_fresh_open(src: Path, tmp_path: Path) -> None:
    data = src.read_bytes()
    path = _copy_session(src, tmp_path)
    reader = AppendedReader(str(path), READER)
    done = 0
    for cut in _cuts(data, len(data)):
        with open(path, "ab") as fh:
            fh.write(data[done:cut])
        done = cut
        try:
            doc = reader.read()
        except LoadError:  # no Claude Code entry yet: a fresh open refuses it too
            with pytest.raises(LoadError):
                load_claude_code(path.read_bytes(), str(path))
            continue
        same_as_fresh(path, doc)
    assert reader.rewrites == 0


def test_only_appended_bytes_are_decoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Following a session through 20 appends decodes each byte once, not once per read."""
    src = max(SESSIONS, key=lambda p: p.stat().st_size, default=None)
    if src is None:
        pytest.skip("no real Claude Code transcripts")
    data = src.read_bytes()
    path = _copy_session(src, tmp_path)
    decoded: list[int] = []
    parse = claude_code.parse_lines

    def counted(block: bytes, first: int = 1) -> claude_code.Lines:
        if block[:200] in data:  # the transcript's lines, not a sub-agent file's
            decoded.append(block.rfind(b"\n") + 1)  # a torn last line is not decoded
        return parse(block, first)

    monkeypatch.setattr(claude_resume, "parse_lines", counted)
    follower = RereadFollower(path, READER, clock=lambda: 1e9, probe=lambda _p: None)
    cuts = _cuts(data, 7, 20)
    done = 0
    for n, cut in enumerate(cuts):
        with open(path, "ab") as fh:
            fh.write(data[done:cut])
        os.utime(path, ns=(n * 10**9, n * 10**9))  # a new time, whatever the clock's grain
        done = cut
        follower.read(final=True)
    assert sum(decoded) == len(data)  # each line decoded once
    assert follower.document is not None
    same_as_fresh(path, follower.document)


def _follow(path: Path) -> tuple[AppendedReader, Document]:
    reader = AppendedReader(str(path), READER)
    return reader, reader.read()


@pytest.mark.parametrize("how", ["truncated", "replaced", "same size", "longer in place"])
def test_a_rewritten_file_is_read_from_its_start(tmp_path: Path, how: str) -> None:
    small = [p for p in SESSIONS if p.stat().st_size < 300_000]
    if len(small) < 2:
        pytest.skip("no real Claude Code transcripts")
    one, two = small[0].read_bytes(), small[1].read_bytes()
    path = tmp_path / "s.jsonl"
    path.write_bytes(one)
    reader, _doc = _follow(path)
    if how == "truncated":
        path.write_bytes(one[: one.index(b"\n", len(one) // 2) + 1])
    elif how == "replaced":
        other = tmp_path / "new.jsonl"
        other.write_bytes(one)  # the same bytes, a new file: read again, same run
        os.replace(other, path)
    elif how == "same size":  # the first line changed, nothing else
        first = one.index(b"\n")
        path.write_bytes(one[:first].replace(b'"', b" ", 2) + one[first:])
    else:  # another session written over it, longer than what was read
        with open(path, "r+b") as fh:
            fh.write(two + one)
    doc = reader.read() if how != "same size" else None
    if how == "same size":
        with pytest.raises(LoadError) if _unreadable(path) else _no_error():
            doc = reader.read()
    assert reader.rewrites == 1
    if doc is not None:
        same_as_fresh(path, doc)


def _unreadable(path: Path) -> bool:
    try:
        load_claude_code(path.read_bytes(), str(path))
    except LoadError:
        return True
    return False


class _no_error:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _line_by_line(src: Path, tmp: Path) -> int:
    """Write a real session a line at a time; after each, the followed run must be the
    run a fresh open of the same bytes gives, step by step. Returns the folds from the
    first line."""
    lines = src.read_bytes().splitlines(keepends=True)
    path = _copy_session(src, tmp)
    reader = AppendedReader(str(path), READER)
    for line in lines:
        with open(path, "ab") as fh:
            fh.write(line)
        try:
            doc = reader.read()
        except LoadError:
            continue
        same_as_fresh(path, doc)
    parser = reader._parser
    assert isinstance(parser, ResumedLines)
    return parser.restarts


SMALL = [p for p in SESSIONS if p.stat().st_size < 300_000]


@pytest.mark.parametrize("src", SMALL, ids=lambda p: p.name[:40])
def test_the_fold_resumes_and_gives_a_fresh_open_after_every_line(
    src: Path, tmp_path: Path
) -> None:
    """The fold goes on from where it stopped (not from the first line: one fold from
    the start, the first read's) and each line's run is the whole read's."""
    assert _line_by_line(src, tmp_path) == 1


def test_a_broken_resume_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above sees a resume that folds on the checkpoint itself instead of
    a copy of it (each read's lines then end up in the run twice)."""
    if not SMALL:
        pytest.skip("no real Claude Code transcripts")
    monkeypatch.setattr(Builder, "copy", lambda self: self)
    with pytest.raises(AssertionError):
        _line_by_line(max(SMALL, key=lambda p: p.stat().st_size), tmp_path)
