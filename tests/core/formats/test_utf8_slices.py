"""The UTF-8 check of a big file, a slice at a time (loom_core.formats.reader.check_utf8).

Why it is sliced: one C call over a gigabyte holds the interpreter lock, and the window,
for its whole length. Sliced, it must still give one whole decode's verdict, and for a
bad byte the same line and offset, wherever the slices cut the text.
"""

from __future__ import annotations

import pytest

from loom_core.errors import LoadError
from loom_core.formats import reader
from loom_core.formats.reader import check_utf8

SLICE = 8  # tiny slices, so that a few lines of text cross many of their ends


def _whole_verdict(data: bytes) -> str | None:
    """What one decode of the whole says: None (UTF-8) or the bad byte's line and offset."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        return f"not UTF-8 text (bad byte at line {line}, offset {err.start})"
    return None


def _sliced_verdict(data: bytes) -> str | None:
    try:
        check_utf8(data, "run.json")
    except LoadError as err:
        assert err.path == "run.json"
        return err.cause
    return None


TEXT = '{\n  "a": "caf\u00e9 \u20ac \U0001f600 \u00fc\u00f1\u00ee",\n  "b": "plain"\n}\n'.encode()


def _cases() -> list[bytes]:
    """Valid text whose two-, three- and four-byte characters fall on every slice
    position, and bad bytes of each kind put at every position of it."""
    texts = [b" " * shift + TEXT for shift in range(SLICE)]
    bad = [b"\xff", b"\x80", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc3(", b"\xed\xa0\x80"]
    broken = [
        text[:at] + b + text[at:] for text in texts[:3] for at in range(4, len(text)) for b in bad
    ]
    return texts + broken + [TEXT[:-6] + b"\xf0\x9f"]  # a character cut by the file's end


def test_sliced_check_gives_the_whole_decodes_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "UTF8_SLICE", SLICE)
    cases = _cases()
    assert all(len(c) > SLICE for c in cases)  # (every one goes through the slices)
    verdicts = [(_sliced_verdict(c), _whole_verdict(c)) for c in cases]
    assert [s for s, _ in verdicts] == [w for _, w in verdicts]
    assert sum(w is None for _, w in verdicts) == SLICE  # the valid texts passed


def test_a_small_file_is_checked_as_before() -> None:
    assert _sliced_verdict(TEXT) is None
    assert _sliced_verdict(b'{"a": "\xff"}') == _whole_verdict(b'{"a": "\xff"}')
    with pytest.raises(LoadError, match="UTF-16"):
        check_utf8(b"\xff\xfe{\x00}\x00", "run.json")


def test_a_big_file_starting_as_utf16_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "UTF8_SLICE", SLICE)
    with pytest.raises(LoadError, match="UTF-16"):
        check_utf8(b"\xff\xfe" + "{}".encode("utf-16-le") * 20, "run.json")


def test_the_check_asks_between_slices_and_stops_when_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loader's cancel is asked before each slice: a closed tab stops the check
    of a big file within a slice, not after the whole file."""
    monkeypatch.setattr(reader, "UTF8_SLICE", SLICE)
    asked: list[int] = []
    check_utf8(TEXT, "run.json", lambda: asked.append(1))
    assert len(asked) == -(-len(TEXT) // SLICE)

    class Stop(Exception):
        pass

    def stop_at_third() -> None:
        asked.append(1)
        if len(asked) == 3:
            raise Stop

    asked.clear()
    with pytest.raises(Stop):
        check_utf8(TEXT, "run.json", stop_at_third)
    assert len(asked) == 3
