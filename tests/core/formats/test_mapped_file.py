"""A big trace is mapped, not read, where a lease keeps it safe, and reads exactly as read.

Why: the window's run held its whole file resident (1× the file) for as long as it was
open; mapped, each pass lets its pages go. What must hold: the mapped load gives the
read load's effects, entries and timeline; the pages are let go after the load, the
filter's scan and the index's build; a program that cuts the file short while it is
open cannot crash the process (the lease holds it back until the mapping is copied
out), even when it writes from the very thread that loaded; where no lease can be
taken the file is read as before; nothing is mapped unless enabled (the command line).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import msgspec
import numpy as np
import pytest

from benchmarks.synth import synth_trace
from loom_core.errors import LoadError
from loom_core.formats import mapped_file, progressive
from loom_core.formats.loader import load
from loom_core.formats.mapped_file import MappedFile, release_pages
from loom_core.views import text_index
from loom_core.views.filtering import filter_steps
from tests.core.leases import require_leases

ROOT = Path(__file__).resolve().parents[3]
COLUMNS = ("effect_of", "kind", "depth", "agent", "tokens_in", "tokens_out", "cost", "flags")


@pytest.fixture(autouse=True)
def leases(tmp_path: Path) -> None:
    require_leases(tmp_path)


@pytest.fixture
def mapping() -> Iterator[None]:
    """Mapping on for the test (as the window turns it on), and off again if it was."""
    was = mapped_file._state["on"]
    assert mapped_file.enable()
    yield
    if not was:
        mapped_file.disable()


@pytest.fixture
def small_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The big-file path for small files, in runs of a few entries."""
    monkeypatch.setattr(progressive, "SMALL_BYTES", 0)
    monkeypatch.setattr(progressive, "CHUNK_BYTES", 3000)


def _synth(tmp_path: Path, n: int = 400) -> Path:
    path = tmp_path / "synth.loom.json"
    path.write_text(json.dumps(synth_trace(n), indent=2))
    return path


def _plain(effects: object) -> list[object]:
    return [msgspec.structs.asdict(e) for e in effects]  # type: ignore[attr-defined]


def _resident_kb(path: Path) -> int:
    """Kilobytes of ``path``'s mappings resident in this process (its ``smaps`` rows)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5:  # a mapping's first line
                inside = len(head) >= 6 and head[-1] == str(path)
            elif inside and line.startswith("Rss:"):
                total += int(head[1])
    return total


def test_a_mapped_load_reads_as_the_read_one(
    tmp_path: Path, mapping: None, small_runs: None
) -> None:
    path = _synth(tmp_path)
    mapped = progressive.load_progressive(str(path))
    assert isinstance(mapped.doc.source, MappedFile)
    plain = load(path)
    assert _plain(mapped.doc.effects) == _plain(plain.effects)
    n = len(plain.effects)
    assert [mapped.doc.raw_entry(i) for i in range(0, n, 37)] == [
        plain.raw_entry(i) for i in range(0, n, 37)
    ]
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(mapped_file._state, "on", False)
        read = progressive.load_progressive(str(path))
    assert isinstance(read.doc.source, bytearray)
    for name in COLUMNS:
        assert np.array_equal(
            np.asarray(getattr(mapped.timeline, name)), np.asarray(getattr(read.timeline, name))
        ), name
    assert filter_steps(mapped.timeline, "alpha") == filter_steps(read.timeline, "alpha")


def _broken(good: str, family: str) -> bytes:
    """A big trace broken one way: the words for each come from code that read bytes."""
    text = {
        "two records": good + "\n" + good,  # the several-records description
        "deep member": good[:-2] + ',\n  "x": ' + "[" * 800 + "]" * 800 + "\n}",  # nesting
        "cut short": good[: len(good) // 2],
        "bad byte": good[:5000] + "\udcff" + good[5000:],  # a line number
        "NaN": good.replace('"depth": 0', '"depth": NaN', 1),  # Python's json, leniently
    }[family]
    return text.encode("utf-8", "surrogateescape")


def _outcome(path: Path) -> object:
    try:
        loaded = progressive.load_progressive(str(path))
    except LoadError as err:
        return err.cause
    return _plain(loaded.doc.effects), loaded.doc.warnings, len(loaded.timeline)


@pytest.mark.parametrize("family", ["two records", "deep member", "cut short", "bad byte", "NaN"])
def test_a_broken_mapped_file_says_what_the_read_one_says_without_reading_it(
    tmp_path: Path, mapping: None, small_runs: None, family: str
) -> None:
    """The causes are worded by code written for bytes (a line's number, the first
    record's keys, Python's json for NaN): given the mapping, not a read copy."""
    path = tmp_path / "broken.loom.json"
    path.write_bytes(_broken(json.dumps(synth_trace(200), indent=2), family))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(progressive, "read_bytes", _no_read)
        mapped = _outcome(path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(mapped_file._state, "on", False)
        assert mapped == _outcome(path)


def _no_read(*_args: object, **_kw: object) -> bytes:
    raise AssertionError("a mapped file was read after all")


def test_the_pages_are_let_go_after_each_pass(tmp_path: Path, mapping: None) -> None:
    path = _synth(tmp_path, 5000)  # above the big-file size: the window's own path
    assert path.stat().st_size > progressive.SMALL_BYTES
    loaded = progressive.load_progressive(str(path))
    source = loaded.doc.source
    assert isinstance(source, MappedFile)
    size_kb = path.stat().st_size // 1024
    assert _resident_kb(path) < size_kb // 10  # the load read it all, and let it go
    assert bytes(source[:-1]).count(b"\n") > 0 and _resident_kb(path) > size_kb * 9 // 10
    release_pages(source)
    assert _resident_kb(path) < size_kb // 10
    assert filter_steps(loaded.timeline, "zzz-no-step-holds-this") is not None
    assert _resident_kb(path) < size_kb // 10  # the filter's scan
    assert text_index.build(loaded.timeline) is not None
    assert _resident_kb(path) < size_kb // 10  # the index's build
    assert len(list(loaded.doc.effects)) == len(loaded.doc.effects)
    assert _resident_kb(path) < size_kb // 10  # a walk over every effect


def test_a_copy_and_a_let_go_mid_load_change_nothing(
    tmp_path: Path, mapping: None, small_runs: None
) -> None:
    path = _synth(tmp_path)
    plain = load(path)
    sources: list[MappedFile] = []
    real_map = mapped_file.map_file

    def keep(p: str) -> MappedFile | None:
        sources.append(real_map(p))  # type: ignore[arg-type]
        return sources[-1]

    def midway(done: int, total: int) -> None:
        release_pages(sources[0])  # between two runs' in-place decodes
        if done == total // 2:
            sources[0].pin()  # a lease broken while the load goes on

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(progressive, "map_file", keep)
        loaded = progressive.load_progressive(str(path), progress=midway)
    assert sources[0].pinned and loaded.doc.source is sources[0]
    assert _plain(loaded.doc.effects) == _plain(plain.effects)
    path.write_bytes(b"{}")  # a pinned mapping no longer depends on the file
    assert _plain(loaded.doc.effects) == _plain(plain.effects)


def test_no_lease_no_mapping_and_off_by_default(tmp_path: Path, small_runs: None) -> None:
    path = _synth(tmp_path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(mapped_file._state, "on", False)
        assert mapped_file.map_file(str(path)) is None  # the command line: read
    was = mapped_file._state["on"]
    assert mapped_file.enable()
    try:
        with open(path, "ab"):  # open for writing somewhere: no read lease
            assert mapped_file.map_file(str(path)) is None
            loaded = progressive.load_progressive(str(path))
        assert isinstance(loaded.doc.source, bytearray)
        assert _plain(loaded.doc.effects) == _plain(load(path).effects)
    finally:
        if not was:
            mapped_file.disable()


_CUT_SHORT = textwrap.dedent(
    """
    import sys, msgspec
    from loom_core.formats import mapped_file, progressive
    from loom_core.formats.loader import load
    progressive.SMALL_BYTES, progressive.CHUNK_BYTES = 0, 3000
    path = sys.argv[1]
    before = [msgspec.structs.asdict(e) for e in load(path).effects]
    assert mapped_file.enable()
    loaded = progressive.load_progressive(path)
    assert isinstance(loaded.doc.source, mapped_file.MappedFile)
    mapped_file.release_pages(loaded.doc.source)  # every page must come from the file again
    with open(path, "r+b") as fh:  # this very thread: waits for the watcher's copy
        fh.truncate(10)
        fh.write(b"overwritten")
    after = [msgspec.structs.asdict(e) for e in loaded.doc.effects]
    raw = [loaded.doc.raw_entry(i) for i in range(len(after))]
    print(after == before, loaded.doc.source.pinned, len(raw))
    """
)


def test_a_file_cut_short_while_mapped_does_not_crash(tmp_path: Path) -> None:
    """In a child process: without the lease's copy its next read of a page past the new
    end is a SIGBUS, which would end the test run's worker."""
    path = _synth(tmp_path)
    entries = len(load(path).effects)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", _CUT_SHORT, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True", str(entries)]
    assert path.read_bytes() == b"overwritten"
