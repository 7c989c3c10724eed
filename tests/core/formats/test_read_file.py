"""Reading a whole file into the buffer the big-file loader decodes in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom_core.errors import LoadError
from loom_core.formats import read_file
from loom_core.formats.read_file import read_bytes

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample.loom.json"


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 30])
def test_the_buffer_holds_the_whole_file_whatever_the_chunk(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read_file, "READ_CHUNK", chunk)
    buf = read_bytes(SAMPLE, mutable=True)
    assert isinstance(buf, bytearray)
    assert buf == SAMPLE.read_bytes()
    buf[0:1] = b"{"  # writable: the loader swaps separator bytes while it decodes


def test_an_empty_file_is_an_empty_buffer(tmp_path: Path) -> None:
    empty = tmp_path / "empty.loom.json"
    empty.write_bytes(b"")
    assert read_bytes(empty, mutable=True) == bytearray()


def test_a_missing_file_names_the_cause(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no such file"):
        read_bytes(tmp_path / "gone.loom.json", mutable=True)


def test_bytes_a_writer_added_after_the_open_are_read_once_at_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The chunks stop at the size the file had when opened (a file that keeps growing
    cannot keep the loop going); what came after is read in one last read."""
    real_fstat = read_file.os.fstat

    class _Smaller:  # the size at open: a third of what is there by the time it is read
        def __init__(self, fd: int) -> None:
            self.st_size = real_fstat(fd).st_size // 3

    monkeypatch.setattr(read_file.os, "fstat", _Smaller)
    monkeypatch.setattr(read_file, "READ_CHUNK", 100)
    assert read_bytes(SAMPLE, mutable=True) == SAMPLE.read_bytes()


def test_a_file_shorter_than_its_size_at_the_open_gives_what_was_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The buffer is grown to the size first and filled by the reads: a file that
    shrank meanwhile leaves nothing of the unwritten part behind."""
    real_fstat = read_file.os.fstat

    class _Larger:  # the size at open: more than is there by the time it is read
        def __init__(self, fd: int) -> None:
            self.st_size = real_fstat(fd).st_size + 5000

    monkeypatch.setattr(read_file.os, "fstat", _Larger)
    monkeypatch.setattr(read_file, "READ_CHUNK", 1000)
    assert read_bytes(SAMPLE, mutable=True) == SAMPLE.read_bytes()


def test_the_read_goes_on_after_the_head_already_read(tmp_path: Path) -> None:
    path = tmp_path / "a.loom.json"
    path.write_bytes(SAMPLE.read_bytes())
    data = SAMPLE.read_bytes()
    buf = read_bytes(path, mutable=True, head=data[:100], since=path.stat())
    assert buf == data


def test_a_read_into_place_keeps_malloc_serving_big_blocks_from_its_heap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The read into place frees no 16 MB chunk, which glibc took as its cue to serve
    such blocks from its heap; the read sets that itself (else the numpy work after a
    load pays page faults on every temporary). Setting it is harmless anywhere."""
    calls: list[str] = []
    monkeypatch.setattr(read_file, "hold_malloc_threshold", lambda: calls.append("held"))
    assert read_bytes(SAMPLE, mutable=True) == SAMPLE.read_bytes()
    assert calls == ["held"]
    monkeypatch.undo()
    read_file.hold_malloc_threshold.__wrapped__()  # the real one: no error on any platform
