"""Head-first loading gives exactly what a plain load gives, whatever the log's size."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from loom_core.formats import progressive
from loom_core.formats.canonical import checksum
from loom_core.formats.loader import load
from loom_core.formats.progressive import Loaded, load_progressive


def _trace(n: int, compact: bool = False) -> str:
    log = [
        {
            "seq": i,
            "kind": "model" if i % 2 == 0 else "tool:t",
            "key": f"{i:012x}",
            "result": {
                "text": f"t{i}",
                "tool_calls": [],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": i, "output_tokens": 1},
            }
            if i % 2 == 0
            else {"nested": {"deep": [1, {"x": "}\\n    {"}]}},
            "depth": 0,
        }
        for i in range(n)
    ]
    doc = {
        "version": 2,
        "model": "m",
        "system": "",
        "prompt": "p",
        "episodes": ["p"],
        "output": "",
        "truncated": False,
        "paused": False,
        "pending": None,
        "pending_depth": 0,
        "stop_reason": "",
        "log": log,
        "shield_events": [{"ts": 1.0, "action": "tainted", "via": "sequence", "rule": "r"}],
    }
    doc["checksum"] = checksum(doc)
    return json.dumps(doc) if compact else json.dumps(doc, indent=2)


def _plain(effects: list) -> list:
    return [msgspec.structs.asdict(e) for e in effects]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 6, 7, 13])
@pytest.mark.parametrize("compact", [False, True])
def test_chunked_load_equals_plain_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int, compact: bool
) -> None:
    monkeypatch.setattr(progressive, "SMALL_BYTES", 0)
    monkeypatch.setattr(progressive, "CHUNK", 3)
    monkeypatch.setattr(progressive, "CHUNK_BYTES", 300)  # a chunk every two or three entries
    monkeypatch.setattr(progressive, "HEAD_ENTRIES", 2)
    path = tmp_path / "t.loom.json"
    path.write_text(_trace(n, compact))
    heads: list[Loaded] = []
    result = load_progressive(str(path), heads.append)
    plain = load(path)
    assert _plain(result.doc.effects) == _plain(plain.effects)
    assert len(result.timeline) == n + 1  # one user episode step
    if n > 2 and not compact:
        assert heads and not heads[0].complete and len(heads[0].doc.effects) == 2
    if compact:
        assert progressive._layout_chunks(path.read_bytes(), _top(path)) is None


def _top(path: Path) -> msgspec.Raw:
    return msgspec.json.decode(path.read_bytes(), type=dict[str, msgspec.Raw])["log"]


def test_progress_is_reported_and_cancel_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progressive, "SMALL_BYTES", 0)
    monkeypatch.setattr(progressive, "CHUNK", 2)
    path = tmp_path / "t.loom.json"
    path.write_text(_trace(9))
    seen: list[tuple[int, int]] = []
    load_progressive(str(path), progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1][0] == seen[-1][1]
    with pytest.raises(progressive.Cancelled):
        load_progressive(str(path), cancelled=lambda: True)


def test_first_screen_comes_before_the_whole_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gigabyte trace's first rows must not wait for the whole file: the head is read
    and shown first, with the header members that precede the log."""
    monkeypatch.setattr(progressive, "SMALL_BYTES", 0)
    monkeypatch.setattr(progressive, "HEAD_ENTRIES", 2)
    path = tmp_path / "t.loom.json"
    path.write_text(_trace(9))
    order: list[str] = []
    real_read, real_rest = progressive.read_bytes, progressive._load_bytes
    monkeypatch.setattr(  # the whole file read, or (the window) its mapping's passes begun
        progressive, "read_bytes", lambda *a, **k: (order.append("rest"), real_read(*a, **k))[1]
    )
    monkeypatch.setattr(
        progressive, "_load_bytes", lambda *a, **k: (order.append("rest"), real_rest(*a, **k))[1]
    )
    result = load_progressive(str(path), lambda head: order.append(f"head {len(head.doc)}"))
    assert order[0] == "head 2" and set(order[1:]) == {"rest"}
    assert result.doc.header == load(path).header  # members after the log too
    assert len(result.doc.shield_events) == 1


def test_the_log_is_found_by_layout_and_not_scanned_as_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The members around the log are parsed without the log (a gigabyte scan under the
    interpreter lock froze the window); the log's span is searched a window at a time."""
    monkeypatch.setattr(progressive, "SMALL_BYTES", 0)
    monkeypatch.setattr(progressive, "SCAN_WINDOW", 64)
    path = tmp_path / "t.loom.json"
    path.write_text(_trace(13))
    parsed: list[int] = []
    real_parse = progressive.parse_top
    monkeypatch.setattr(
        progressive, "parse_top", lambda data, p: (parsed.append(len(data)), real_parse(data, p))[1]
    )
    result = load_progressive(str(path))
    assert parsed and max(parsed) < path.stat().st_size // 2
    assert _plain(result.doc.effects) == _plain(load(path).effects)


def test_a_loaded_run_is_not_left_for_one_huge_young_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the load made while the collector was paused goes to the permanent generation:
    else the first collection after it scans every object of the run at once (a
    multi-second stall of the window at a million steps)."""
    import gc

    monkeypatch.setattr(progressive, "SMALL_BYTES", 0)
    path = tmp_path / "t.loom.json"
    path.write_text(_trace(30))
    gc.unfreeze()
    try:
        result = load_progressive(str(path))
        assert gc.get_freeze_count() > 0
        assert len(gc.get_objects(generation=0)) < 1000  # nothing of the run is young
        assert len(result.timeline) == 31
    finally:
        gc.unfreeze()


def test_layout_chunks_cut_at_entry_boundaries_a_chunk_of_bytes_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(progressive, "CHUNK_BYTES", 300)
    data = _trace(13).encode()
    log = msgspec.json.decode(data, type=dict[str, msgspec.Raw])["log"]
    ranges = progressive._layout_chunks(data, log)
    assert ranges is not None and len(ranges) > 2
    entries = [e for a, b in ranges for e in json.loads(b"[" + data[a:b] + b"]")]
    assert entries == json.loads(data)["log"]
