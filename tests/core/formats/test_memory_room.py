"""A run too big for the memory left is refused before it is read, naming the file and the
cause (issue 24's 10,000,000-effect run: under a 12 GB limit the command line printed a
``MemoryError`` traceback after reading 10 GB, the window a dialog saying "MemoryError:").
The limits here are real (``RLIMIT_AS`` in a child process) or injected, the files small
or sparse (a size on no disk)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from loom_core.errors import LoadError
from loom_core.formats import mapped_file, memory_room, progressive
from loom_core.formats.loader import load
from loom_core.formats.progressive import load_progressive
from tests.core.clis import ROOT
from tests.core.leases import require_leases
from tests.core.live_helpers import effect, header, model_result
from tests.core.no_reads import forbid_whole_reads

LIMIT = 2 << 30  # the child's address space: Python and the CLI fit, a 4 GB load does not


def _sparse_trace(path: Path, size: int) -> Path:
    """A file that starts like a loom trace and is ``size`` bytes long, on no disk."""
    with open(path, "wb") as fh:
        fh.write(b'{\n  "version": 2,\n')
        fh.truncate(size)
    return path


def _journal(tmp_path: Path) -> Path:
    """A small run with one model call."""
    path = tmp_path / "run.journal.jsonl"
    path.write_bytes(header("go") + effect(0, "model", model_result("hi")))
    return path


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _run_limited(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited,  # noqa: PLW1509 - a child with no threads of ours yet
    )


def test_the_command_line_refuses_a_trace_too_big_for_its_limit_in_one_line(
    tmp_path: Path,
) -> None:
    path = _sparse_trace(tmp_path / "big.loom.json", 4 << 30)
    done = _run_limited("-m", "loom_core", "summary", str(path))
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert str(path) in lines[0] and "too big for the memory left" in lines[0]
    assert "this 4.3 GB file needs about 7.5 GB of memory" in lines[0]


@pytest.mark.parametrize(
    ("start", "refused"),
    [
        (b'{\n  "version": 2,\n  "log": [\n    {', False),  # loom-harness's layout: 1.15x
        (b'{"version": 2, "log": [{', True),  # any other: decoded whole, 1.75x
    ],
)
def test_a_big_trace_in_the_harness_layout_needs_what_its_load_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start: bytes, refused: bool
) -> None:
    """The window's load of a big trace in loom-harness's layout peaks near 1.2x the file
    (10,000,000 effects: 12.5 GB for 10.4 GB); at the whole decode's 1.75x it was refused
    where it fits. Another layout is decoded whole: still refused at 1.75x."""
    path = tmp_path / "big.loom.json"
    with open(path, "wb") as fh:
        fh.write(start)
        fh.truncate(4 << 30)
    monkeypatch.setattr(memory_room, "available_bytes", lambda: int(1.3 * (4 << 30)))
    forbid_whole_reads(monkeypatch)
    if refused:
        with pytest.raises(LoadError, match="needs about 7.5 GB of memory, 5.6 GB available"):
            load_progressive(path)
    else:
        with pytest.raises(AssertionError, match="the whole file was read"):
            load_progressive(path)  # past the check: it reads the file
        monkeypatch.setattr(memory_room, "available_bytes", lambda: 4 << 30)
        with pytest.raises(LoadError, match="needs about 4.9 GB of memory, 4.3 GB available"):
            load_progressive(path)
    with pytest.raises(LoadError, match="too big for the memory left"):
        load(path)  # the whole decode (the command line's) needs 1.75x either way


def test_a_mapped_trace_needs_memory_for_what_it_builds_and_room_for_the_mapping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mapped (the window on Linux), a big trace in the layout keeps only what its load
    builds resident, 0.28x the file at 1,000,000 effects: refused at the read's 1.15x, it
    would be turned away where it opens. The mapping still takes the file's size of
    address space, which an address-space limit must leave."""
    require_leases(tmp_path)
    path = tmp_path / "big.loom.json"
    with open(path, "wb") as fh:
        fh.write(b'{\n  "version": 2,\n  "log": [\n    {')
        fh.truncate(4 << 30)
    was = mapped_file._state["on"]
    assert mapped_file.enable()
    try:
        monkeypatch.setattr(memory_room, "_system_available", lambda: 2 << 30)
        monkeypatch.setattr(memory_room, "_limit_left", lambda: None)
        past: list[object] = []
        monkeypatch.setattr(progressive, "_load", lambda _o, mapped, *_a: past.append(mapped))
        load_progressive(path)  # 1.1 GB of 2.1 GB: past the check, mapped
        assert len(past) == 1 and isinstance(past[0], mapped_file.MappedFile)
        monkeypatch.setattr(memory_room, "_limit_left", lambda: 5_000_000_000)
        with pytest.raises(LoadError, match="needs about 5.4 GB of memory, 5.0 GB available"):
            load_progressive(path)  # the mapping and what the load builds: 5.4 GB
        monkeypatch.setattr(memory_room, "_limit_left", lambda: None)
        monkeypatch.setattr(memory_room, "_system_available", lambda: 1_000_000_000)
        with pytest.raises(LoadError, match="needs about 1.1 GB of memory, 1.0 GB available"):
            load_progressive(path)
    finally:
        if not was:
            mapped_file.disable()


def test_available_memory_counts_the_address_space_limit() -> None:
    code = "from loom_core.formats.memory_room import available_bytes; print(available_bytes())"
    done = _run_limited("-c", code)
    assert done.returncode == 0, done.stderr
    assert 0 < int(done.stdout) < LIMIT


@pytest.mark.parametrize("loads", [load, load_progressive])
def test_both_loads_refuse_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loads: object
) -> None:
    path = _journal(tmp_path)
    size = path.stat().st_size
    monkeypatch.setattr(memory_room, "available_bytes", lambda: size // 2)
    forbid_whole_reads(monkeypatch)
    with pytest.raises(LoadError) as err:
        loads(path)  # type: ignore[operator]
    assert str(err.value.path) == str(path)
    assert err.value.cause.startswith("too big for the memory left: opening this 0.0 GB file")
    assert err.value.cause.endswith("GB of memory, 0.0 GB available")


def test_an_allocation_that_fails_anyway_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _journal(tmp_path)

    def exhausted(_doc: object) -> object:
        raise MemoryError

    monkeypatch.setattr(progressive, "build_timeline", exhausted)
    with pytest.raises(LoadError) as err:
        load_progressive(path)
    assert err.value.path == str(path)
    assert err.value.cause.startswith("ran out of memory opening this 0.0 GB file")


def test_nothing_is_refused_where_the_memory_left_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _journal(tmp_path)
    monkeypatch.setattr(memory_room, "available_bytes", lambda: None)
    assert len(load(path).effects) == 1
