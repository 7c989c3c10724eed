"""One sniff, one reader: the command line and the window decide a file's format the same way,
once, from its first bytes (issue 24).

The window follows a journal by byte offset (:class:`~loom_core.live.follow.JournalFollower`)
and loads anything else through :func:`~loom_core.formats.progressive.load_progressive`;
the command line loads with :func:`~loom_core.formats.loader.load`. Files an independent
fuzz run found them to disagree on (a UTF-8 byte-order mark, a bad byte at the end) read
the same here, and a file of NUL bytes is refused before anything reads it whole.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loom_core.cli.entry import main
from loom_core.errors import LoadError
from loom_core.formats import foreign, loader, progressive
from loom_core.formats.loader import JOURNAL, TRACE, load, open_run
from loom_core.formats.progressive import load_progressive
from loom_core.formats.reader import BOM
from loom_core.live.follow import JournalFollower
from tests.core.live_helpers import effect, header, model_result

JOURNAL_LINES = header("go") + effect(0, "model", model_result("hi")) + effect(1, "tool:x", "ok")
TRACE_TEXT = json.dumps(
    {"version": 2, "model": "m", "log": [{"seq": 0, "kind": "model", "result": {"text": "x"}}]},
    indent=2,
).encode()


def _window_effects(path: Path) -> int:
    """How many effects the window shows for ``path``, by the path the window takes."""
    opening = open_run(path)
    assert opening is not None
    if opening.reader.tail:
        update = JournalFollower(path).read(final=True)
        assert update is not None and update.error is None, update
        return update.total_effects
    return len(load_progressive(str(path)).doc.effects)


@pytest.mark.parametrize(
    ("name", "content", "effects"),
    [
        ("bom.journal.jsonl", BOM + JOURNAL_LINES, 2),
        ("torn-bad-byte.journal.jsonl", JOURNAL_LINES + b'{"type": "eff\xff', 2),
        (
            "bad-last-line.journal.jsonl",
            JOURNAL_LINES + effect(2, "tool:x", "ok").replace(b'"ok"', b'"\xff"'),
            2,
        ),
        ("bom.loom.json", BOM + TRACE_TEXT, 1),
    ],
)
def test_the_command_line_and_the_window_read_the_same(
    tmp_path: Path, name: str, content: bytes, effects: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert len(load(path).effects) == effects
    assert _window_effects(path) == effects
    assert main(["summary", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["effects"] == effects


def test_a_journal_that_ends_in_a_bad_byte_says_where_it_stops(tmp_path: Path) -> None:
    path = tmp_path / "run.journal.jsonl"
    path.write_bytes(JOURNAL_LINES + effect(2, "tool:x", "ok").replace(b'"ok"', b'"\xff"'))
    doc = load(path)
    assert doc.torn and any("line 4" in w and "line 3" in w for w in doc.warnings)


def test_a_file_of_nul_bytes_is_refused_from_its_first_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sparse 2 GB file of NUL bytes (no disk used): refused with a cause, never read whole
    (reading it whole fails this test)."""
    path = tmp_path / "zeros.loom.json"
    with open(path, "wb") as fh:
        fh.truncate(2 << 30)

    def never(*_args: object, **_kwargs: object) -> bytes:
        raise AssertionError("the whole file was read")

    monkeypatch.setattr(loader, "read_bytes", never)
    monkeypatch.setattr(progressive, "read_bytes", never)
    for opener in (load, load_progressive, open_run):
        with pytest.raises(LoadError, match=r"binary data, not a text file \(byte 0x00"):
            opener(str(path))
    assert main(["summary", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "binary data" in err[0]


def test_utf16_is_refused_in_words_by_every_opener(tmp_path: Path) -> None:
    path = tmp_path / "wide.loom.json"
    path.write_bytes(TRACE_TEXT.decode().encode("utf-16"))
    for opener in (load, load_progressive, open_run):
        with pytest.raises(LoadError, match="UTF-16 text, not UTF-8"):
            opener(str(path))


def test_a_file_is_sniffed_once_when_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every foreign reader's sniff runs once per open, in the progressive load as in the
    plain one (it ran four times: the window's sniff, the preview, the loader, load_bytes)."""
    path = tmp_path / "big.loom.json"
    log = [
        {"seq": i, "kind": "tool:x", "result": "y" * 900}
        for i in range(progressive.HEAD_ENTRIES * 15)
    ]
    path.write_bytes(json.dumps({"version": 2, "log": log}, indent=2).encode())
    assert os.path.getsize(path) > progressive.SMALL_BYTES
    calls: list[str] = []
    real = foreign.readers()

    def counting(reader: foreign.ForeignReader) -> foreign.ForeignReader:
        def sniff(head: bytes, name: str) -> bool:
            calls.append(reader.name)
            return reader.sniff(head, name)

        return foreign.ForeignReader(reader.name, reader.label, reader.patterns, sniff, reader.load)

    monkeypatch.setattr(foreign, "readers", lambda: tuple(counting(r) for r in real))
    heads: list[object] = []
    loaded = load_progressive(str(path), heads.append)
    assert heads and len(loaded.doc.effects) == len(log)
    assert sorted(calls) == sorted(r.name for r in real)
    calls.clear()
    assert len(load(path).effects) == len(log)
    assert sorted(calls) == sorted(r.name for r in real)


def test_the_decided_reader_is_a_reader_like_any_other(tmp_path: Path) -> None:
    """Loom's own formats are readers of the same interface as the foreign ones."""
    journal, trace = tmp_path / "a.jsonl", tmp_path / "b.json"
    journal.write_bytes(JOURNAL_LINES)
    trace.write_bytes(TRACE_TEXT)
    empty = tmp_path / "c.jsonl"
    empty.write_bytes(b"")
    assert [open_run(p).reader for p in (journal, trace, empty)] == [JOURNAL, TRACE, JOURNAL]  # type: ignore[union-attr]
    assert open_run(tmp_path / "missing.json") is None
    assert isinstance(TRACE, foreign.ForeignReader)


def test_the_command_line_refuses_a_file_of_nul_bytes_without_growing(tmp_path: Path) -> None:
    """Measured, not only guarded: the peak memory of ``summary`` on a 2 GB sparse file of
    NUL bytes stays far below the file's size (reading it whole needs 2 GB at least)."""
    path = tmp_path / "zeros.loom.json"
    with open(path, "wb") as fh:
        fh.truncate(2 << 30)
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run([sys.executable, '-m', 'loom_core', 'summary', '--json', sys.argv[1]],"
        " capture_output=True, text=True)\n"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(done.stderr, end='')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    code, peak_kib = (int(x) for x in out[0].split())
    assert code == 2 and len(out) == 2 and "binary data, not a text file" in out[1]
    assert peak_kib < 256 << 10, f"peak RSS {peak_kib >> 10} MiB for a 2 GB file it refused"


def test_a_long_first_line_is_read_on_to_its_end_and_no_further(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A journal whose header line is longer than the head the format is decided from is
    still a journal (a long system prompt); a compact trace is not read on line-wise, and
    its preview reads a head, not the whole file."""
    journal = tmp_path / "long.journal.jsonl"
    journal.write_bytes(header("x" * 500) + effect(0, "tool:x", "ok"))
    opening = open_run(journal, 64)
    assert opening is not None and opening.reader is JOURNAL and b"\n" in opening.head
    assert len(load(journal).effects) == 1
    log = [{"seq": i, "kind": "tool:x", "result": "y" * 900} for i in range(6000)]
    compact = tmp_path / "compact.loom.json"
    compact.write_bytes(json.dumps({"model": "m", "version": 2, "log": log}).encode())
    monkeypatch.setattr(loader, "LINE_LIMIT", 1 << 20)
    opening = open_run(compact, 64)
    assert opening is not None and opening.reader is TRACE and len(opening.head) <= 1 << 21
    heads: list[object] = []
    assert len(load_progressive(opening, heads.append).doc.effects) == len(log)
