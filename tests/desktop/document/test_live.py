"""A live tab follows a journal being written: bursts, torn lines, rewrites, re-creation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loom_core.formats.loader import load
from loom_core.live.live_status import FINISHED, HUMAN, RUNNING
from loom_core.views.timeline import build_timeline
from loom_desktop.main_window import MainWindow
from tests.core.live_helpers import WriterThread, effect, header, intent, model_result, tool_pairs


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)
        fh.flush()


@pytest.fixture
def writer():
    thread = WriterThread()
    yield thread
    thread.close()


def _live_view(qtbot, window: MainWindow, path: Path):
    view = window.open_path(str(path))
    assert view.live is not None
    view.live.tailer.poll_interval = 0.1
    return view


def _matches_file(view, path: Path) -> bool:
    """The tab shows exactly what a full load of the file shows."""
    tl = view.session.timeline
    if (
        tl is None
        or view.live.builder is None
        or view.live.builder.walker.done < len(view.live.doc.effects)
    ):
        return False
    expected = build_timeline(load(path))
    return (
        view.model.rowCount() == len(tl) == len(expected)
        and list(tl.kind) == list(expected.kind)
        and list(tl.tokens_in) == list(expected.tokens_in)
    )


def test_live_tab_follows_bursts_torn_lines_rewrite_and_recreate(
    qtbot, window: MainWindow, tmp_path: Path, writer
) -> None:
    path = tmp_path / "run.jsonl"
    view = _live_view(qtbot, window, path)  # the file does not exist yet: waiting
    qtbot.waitUntil(lambda: view.live.updates >= 0, timeout=5000)
    writer.run(lambda: _append(path, header("do it") + intent(0, "model")))
    writer.run(
        lambda: _append(
            path, effect(0, "model", model_result("go", ("tick",))) + b"".join(tool_pairs(1, 200))
        )
    )
    qtbot.waitUntil(lambda: _matches_file(view, path), timeout=15_000)
    assert window.tabs.tabText(window.tabs.indexOf(view)).startswith("●")
    last = effect(201, "model", model_result("half way", ("tick",)))
    rows = view.model.rowCount()
    writer.run(lambda: _append(path, last[:25]))  # a torn write...
    qtbot.wait(400)  # a few polls: the half line must not become a row
    assert view.model.rowCount() == rows
    writer.run(lambda: _append(path, last[25:]))  # ...completed later
    qtbot.waitUntil(lambda: view.model.rowCount() == rows + 1, timeout=15_000)
    qtbot.waitUntil(lambda: view.session.step == view.session.count - 1, timeout=5000)  # follow
    writer.run(lambda: path.write_bytes(header("again") + effect(0, "model", model_result("v2"))))
    qtbot.waitUntil(
        lambda: _matches_file(view, path) and view.model.rowCount() == 2, timeout=15_000
    )
    writer.run(lambda: os.remove(path))
    writer.run(
        lambda: _append(
            path,
            header("third")
            + effect(0, "model", model_result("new"))
            + effect(1, "model", model_result("done")),
        )
    )
    qtbot.waitUntil(
        lambda: _matches_file(view, path) and view.model.rowCount() == 3, timeout=15_000
    )


def test_follow_tail_turns_off_when_looking_back_and_end_turns_it_on(
    qtbot, window: MainWindow, tmp_path: Path, writer
) -> None:
    path = tmp_path / "run.jsonl"
    _append(
        path,
        header("go")
        + effect(0, "model", model_result("a", ("tick",)))
        + b"".join(tool_pairs(1, 20)),
    )
    view = _live_view(qtbot, window, path)
    qtbot.waitUntil(lambda: view.model.rowCount() == 22, timeout=15_000)
    qtbot.waitUntil(lambda: view.session.step == 21, timeout=5000)
    assert view.live.following
    (x0, x1), _ = view.timeline_widget.getPlotItem().getViewBox().viewRange()
    assert x0 <= 0 and x1 >= 21, "a short live run is shown whole as it grows"
    view.session.set_step(5)  # the user scrubs back
    assert not view.live.following
    qtbot.waitUntil(lambda: view.context_view.step == 5, timeout=5000)
    scroll = view.table.verticalScrollBar().value()
    writer.run(lambda: _append(path, b"".join(tool_pairs(21, 30))))
    qtbot.waitUntil(lambda: view.model.rowCount() == 52, timeout=15_000)
    assert view.session.step == 5, "new steps never move what the user is looking at"
    assert view.table.verticalScrollBar().value() == scroll
    view.flush_render()
    assert view.context_view.step == 5
    view.go_end()
    assert view.live.following and view.session.step == 51


def test_status_paused_then_finished_and_save_as_trace(
    qtbot, window: MainWindow, tmp_path: Path, writer
) -> None:
    path = tmp_path / "run.jsonl"
    _append(
        path,
        header("ask me")
        + effect(0, "model", model_result("q", ("ask_human",)))
        + intent(1, "human"),
    )
    view = _live_view(qtbot, window, path)
    qtbot.waitUntil(lambda: view.live.status == HUMAN, timeout=15_000)
    assert view.live.bar.status.text() == HUMAN and view.live.bar.save.isEnabled()
    writer.run(lambda: _append(path, effect(1, "human", "yes") + intent(2, "model")))
    qtbot.waitUntil(lambda: view.live.status == RUNNING, timeout=15_000)
    writer.run(lambda: _append(path, effect(2, "model", model_result("all done"))))
    qtbot.waitUntil(lambda: view.live.status == FINISHED, timeout=15_000)
    assert view.live.bar.save.isEnabled() and "ended" in view.live.bar.dot.text()
    out = tmp_path / "saved.loom.json"
    view.live.save_to(str(out))
    saved = load(out)
    assert saved.format == "trace" and [e.kind for e in saved.effects] == [
        "model",
        "human",
        "model",
    ]
    assert saved.header.output == "all done"


def test_watching_a_trace_file_is_an_error_dialog(
    qtbot, window: MainWindow, tmp_path: Path, sample: Path
) -> None:
    view = window.open_path(str(sample))  # a trace is opened normally, not followed
    assert view.live is None
    qtbot.waitUntil(lambda: view.complete, timeout=15_000)
    bad = tmp_path / "dir.jsonl"
    bad.mkdir()
    window.open_path(str(bad))
    qtbot.waitUntil(lambda: bool(window.failures), timeout=15_000)
    assert window.failures[-1][0] == str(bad)


def test_plot_never_pins_growing_arrays(qtbot, sample: Path) -> None:
    """Regression: numpy views on the core arrays made a live timeline unable to grow."""
    from loom_core.views.timeline import TimelineBuilder
    from loom_desktop.widgets.timeline import TimelineWidget

    doc = load(sample)
    builder = TimelineBuilder(doc)
    builder.extend(upto=10)
    widget = TimelineWidget()
    qtbot.addWidget(widget)
    widget.set_timeline(builder.tl)
    builder.extend()  # must not raise BufferError
    widget.set_timeline(builder.tl)
    assert len(builder.tl) > 10


def test_header_arriving_after_an_empty_rewrite_places_the_user_step(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    """Regression: a rewrite caught while the file was empty left the run without episodes."""
    import msgspec

    from loom_core.formats.journal import parse_journal_lines
    from loom_core.live.follow import JournalUpdate

    path = tmp_path / "run.jsonl"
    view = _live_view(qtbot, window, path)
    view.live.stop()  # feed updates by hand
    lines = [header("hello"), effect(0, "model", model_result("hi"))]
    state = parse_journal_lines(lines)
    empty = JournalUpdate(
        rewritten=True,
        header=None,
        new_effects=[],
        new_entries=[],
        unfinished=(),
        torn=False,
        exists=True,
        offset=0,
        status="rewritten",
    )
    full = JournalUpdate(
        rewritten=False,
        header=state.header,
        new_effects=state.effects,
        new_entries=[msgspec.Raw(x.strip()) for x in lines[1:]],
        unfinished=(),
        torn=False,
        exists=True,
        offset=99,
        status=FINISHED,
    )
    view.live.apply(empty)
    view.live.apply(full)
    view.live._index_slice()
    assert [view.session.timeline.kind_name(s) for s in range(view.session.count)] == [
        "prompt",
        "model",
    ]


def test_an_amended_header_adds_the_later_prompt_live(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    """A recording proxy appends a newer header when a user prompt appears mid-run: the
    live tab shows the new episode step, and matches a full load of the file."""
    path = tmp_path / "run.journal.jsonl"
    path.write_bytes(header("first") + effect(0, "model", model_result("one")))
    view = _live_view(qtbot, window, path)
    qtbot.waitUntil(lambda: _matches_file(view, path), timeout=15_000)
    _append(path, header("first", "second") + effect(1, "model", model_result("two")))
    qtbot.waitUntil(lambda: _matches_file(view, path), timeout=15_000)
    tl = view.session.timeline
    assert [tl.kind_name(s) for s in range(len(tl))] == ["prompt", "model", "prompt", "model"]
