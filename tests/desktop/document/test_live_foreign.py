"""A live tab on a foreign-format file: re-read as it grows (any foreign reader; mostly
the toy format of ``tests/core/foreign_toy.py``, so the test is about following; and a
real Claude Code session, read by offset, against a fresh open after every piece)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from loom_core.formats import foreign
from loom_core.formats.loader import load
from loom_core.views.steps import step_rows
from loom_core.views.timeline import build_timeline
from loom_desktop.main_window import MainWindow
from tests.core.foreign_toy import toy_line
from tests.core.formats.real_world import real_file


@pytest.fixture
def toy_format(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The toy reader registered as one more foreign format, for this test only."""
    monkeypatch.setattr(
        foreign, "READER_MODULES", (*foreign.READER_MODULES, "tests.core.foreign_toy")
    )
    foreign.readers.cache_clear()
    yield
    foreign.readers.cache_clear()


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def _models(view) -> int:
    return sum(e.kind == "model" for e in view.doc.effects) if view.doc is not None else -1


def _rows_match_file(view, path: Path) -> bool:
    return view.model.rowCount() == len(build_timeline(load(path)))


def test_foreign_file_being_written_is_a_live_tab(
    qtbot, window: MainWindow, tmp_path: Path, toy_format: None
) -> None:
    path = tmp_path / "run.toy"
    path.write_bytes(toy_line("one") + toy_line("two"))
    view = window.open_path(str(path))
    assert view.live is not None and view.live.reader is not None  # fresh file: live
    view.live.tailer.poll_interval = 0.05
    qtbot.waitUntil(lambda: view.doc is not None and _rows_match_file(view, path), timeout=10_000)
    assert window.tabs.tabText(window.tabs.indexOf(view)).startswith("●")
    qtbot.waitUntil(lambda: view.session.step == view.session.count - 1, timeout=5000)

    view.session.set_step(1)  # the user looks back: following stops, the cursor stays
    assert not view.live.following
    _append(path, toy_line("three") + toy_line("four"))
    qtbot.waitUntil(lambda: _rows_match_file(view, path), timeout=10_000)
    assert view.session.step == 1
    assert view.model.row_of(1) == view.table.currentIndex().row()

    view.go_end()  # End: back to following
    _append(path, toy_line("five"))
    qtbot.waitUntil(lambda: _rows_match_file(view, path), timeout=10_000)
    qtbot.waitUntil(lambda: view.session.step == view.session.count - 1, timeout=5000)

    view.live.tailer.follower.idle_after = 0.3  # nobody writes: idle, still followed
    qtbot.waitUntil(lambda: view.live.bar.status.text() == "idle", timeout=10_000)
    assert view.live.bar.dot.text() == "● LIVE"
    rows = view.model.rowCount()
    _append(path, b"garbage\n")  # a re-read fails: a banner names why, the run stays
    qtbot.waitUntil(lambda: view.live.banner.isVisible(), timeout=10_000)
    assert "line 6 is not a toy record" in view.live.banner.text()
    assert view.model.rowCount() == rows and view.doc is not None


def test_finished_foreign_file_opens_as_a_plain_tab(
    qtbot, window: MainWindow, tmp_path: Path, toy_format: None, open_and_wait
) -> None:
    path = tmp_path / "old.toy"
    path.write_bytes(toy_line("one"))
    old = path.stat().st_mtime - 3600
    os.utime(path, (old, old))
    view = open_and_wait(window, path)
    assert view.live is None and view.doc.format == "toy"


def test_claude_code_transcript_being_appended_updates_its_tab(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    """A running Claude Code session (hand-built entries, see claude_fixtures): each
    appended entry, including the later lines of a streamed response, shows in the tab."""
    from tests.core.formats.claude_fixtures import Session, text, tool_use

    session = Session()
    session.prompt("count to three")
    path = session.write(tmp_path / "proj" / f"{session.session_id}.jsonl")
    view = window.open_path(str(path))
    assert view.live is not None and view.live.reader is not None
    view.live.tailer.poll_interval = 0.05
    written = len(session.lines)
    for n in range(3):  # bounded: three turns, each a streamed response and a tool result
        session.reply([text(f"step {n}"), tool_use(f"t{n}", "Bash", command=f"echo {n}")])
        session.result(f"t{n}", str(n))
        for rec in session.lines[written:]:  # one line at a time, as Claude Code writes
            _append(path, json.dumps(rec).encode() + b"\n")
            written += 1
        # the two lines of each response are one call
        qtbot.waitUntil(
            lambda n=n: _rows_match_file(view, path) and _models(view) == n + 1, timeout=10_000
        )
    qtbot.waitUntil(lambda: view.session.step == view.session.count - 1, timeout=5000)  # follow
    assert view.live.bar.save.isEnabled()  # a foreign run saves as it is now
    saved = tmp_path / "saved.loom.json"
    view.live.save_to(str(saved))
    assert len(load(saved).effects) == len(view.doc.effects)


def _rows(tl) -> list[dict]:
    return [row.to_dict() for row in step_rows(tl)]


def test_a_real_claude_code_session_followed_in_pieces_shows_what_a_fresh_open_shows(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    """A session with a sub-agent's file and a compaction, appended to a piece at a time
    (cut mid-line too): after each piece the tab's rows (numbers, kinds, depths, agents,
    summaries, tokens, cost) are those of a fresh open of the same bytes."""
    src = real_file("claude-code", "marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    shutil.copytree(src.with_suffix(""), tmp_path / src.with_suffix("").name)
    data, path = src.read_bytes(), tmp_path / src.name
    cuts = [len(data) * k // 6 for k in range(1, 6)] + [len(data)]
    cuts[1] = data.index(b"\n", cuts[1]) + 1  # one piece ends at a line's end
    path.write_bytes(data[: cuts[0]])
    view = window.open_path(str(path))
    assert view.live is not None and view.live.reader is not None
    view.live.tailer.poll_interval = 0.05
    done = cuts[0]
    for cut in cuts:
        _append(path, data[done:cut])
        done = cut
        fresh = _rows(build_timeline(load(path)))
        qtbot.waitUntil(
            lambda fresh=fresh: (
                view.live.builder is not None and _rows(view.live.builder.tl) == fresh
            ),
            timeout=20_000,
        )
    assert any(row["depth"] == 1 for row in fresh) and any(r["kind"] == "compact" for r in fresh)
