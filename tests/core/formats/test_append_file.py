"""``AppendFile``: every append lands whole or not at all, whatever the disk does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loom_core.formats import append_file
from loom_core.formats.append_file import AppendFile


def test_short_writes_are_continued_until_the_line_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = append_file._write
    monkeypatch.setattr(append_file, "_write", lambda fd, data: real(fd, data[:3]))
    f = AppendFile(tmp_path / "a.jsonl", truncate=True)
    f.append(b'{"n": 1}\n')
    f.close()
    f.close()
    assert (tmp_path / "a.jsonl").read_bytes() == b'{"n": 1}\n'


def test_a_line_the_disk_cut_short_is_taken_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"kept\n")
    f = AppendFile(path, truncate=False)
    assert f.size == 5
    real = append_file._write
    monkeypatch.setattr(append_file, "_write", _room_for(real, 4))
    with pytest.raises(OSError, match="No space left"):
        f.append(b"a long line\n")
    assert path.read_bytes() == b"kept\n" and f.size == 5
    monkeypatch.setattr(append_file, "_write", real)
    f.append(b"next\n")
    assert path.read_bytes() == b"kept\nnext\n"
    with pytest.raises(ValueError, match="closed"):
        f.close()
        f.append(b"late\n")


def test_when_even_the_cut_fails_the_torn_bytes_stay_a_line_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.jsonl"
    f = AppendFile(path, truncate=True)
    f.append(b"one\n")
    real = append_file._write
    monkeypatch.setattr(append_file, "_write", _room_for(real, 3))

    def no_cut(fd: int, size: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(append_file, "_truncate", no_cut)
    with pytest.raises(OSError, match="No space left"):
        f.append(b'{"n": 2}\n')
    monkeypatch.setattr(append_file, "_write", real)
    f.append(b"three\n")
    f.close()
    assert path.read_bytes() == b'one\n{"n\nthree\n'  # every line reader skips '{"n'


def _room_for(real: Any, room: int) -> Any:
    """A ``write`` on a disk with ``room`` bytes left: a short write, then ENOSPC."""
    left = [room]

    def write(fd: int, data: Any) -> int:
        if not left[0]:
            raise OSError(28, "No space left on device")
        n = real(fd, data[: left[0]])
        left[0] -= n
        return int(n)

    return write
