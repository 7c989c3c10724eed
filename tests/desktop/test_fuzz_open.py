"""Bad files in the real window and the context view's HTML (issue 12).

A file that cannot be read gives the "Cannot open file" dialog naming the cause,
never an exception in a slot and never silently no tab; a file with wrongly typed
values opens and the context view shows them raw and marked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from PySide6.QtWidgets import QMessageBox

from loom_core.formats.loader import load
from loom_core.views.timeline import Timeline, build_timeline
from loom_desktop.document.context_html import WRONG_TYPE, ViewState, step_html
from loom_desktop.main_window import MainWindow
from tests.core.fuzz.strategies import mutated
from tests.core.fuzz.surfaces import exercise
from tests.core.fuzz.test_fuzz import FUZZ, REGRESSIONS
from tests.core.live_helpers import effect, header, model_result

H = b'{"version": 2, "log": []'
BAD = {  # family -> (content, words the dialog must show)
    "nesting": (H + b', "x": ' + b"[" * 1000 + b"]" * 1000 + b"}", "nested too deeply"),
    "strings": (H + b', "model": "\\x41"}', "not valid JSON"),  # (a lone \\ud800 loads)
    "numbers": (b'{"log": [], "version": 1e400}', "number out of range in member 'version'"),
    "types": (b'{"log": [], "version": "two"}', "wrong type in member 'version'"),
    "truncation": (H[:-3], "ends early"),
    "encodings": ((H + b"}").decode().encode("utf-16"), "UTF-16 text, not UTF-8"),
    "duplicates": (b'{"log": [], "log": 5}', "'log' is not a list"),
}  # (journals open as live tabs, which report bad lines in their own banner: see below)


def _render(tl: Timeline, step: int) -> str:
    """A step's page with everything unfolded, so every value is rendered."""
    return step_html(tl, step, ViewState(system_open=True, show_all=True))


def _render_all(path: Path) -> list[str]:
    tl = build_timeline(load(path))
    return [_render(tl, s) for s in range(len(tl))]


@pytest.mark.parametrize("family", sorted(BAD))
def test_a_bad_file_gives_the_dialog(
    qtbot, window: MainWindow, tmp_path: Path, family: str
) -> None:
    content, words = BAD[family]
    path = tmp_path / f"{family}.loom.json"
    path.write_bytes(content)
    window.open_path(str(path))  # the background load, as File > Open does
    qtbot.waitUntil(lambda: bool(window.failures), timeout=15_000)
    assert window.failures[-1][0] == str(path) and words in window.failures[-1][1]
    boxes = [b for b in window.findChildren(QMessageBox) if b.windowTitle() == "Cannot open file"]
    assert boxes and words in boxes[-1].text() and str(path) in boxes[-1].text()
    assert window.tabs.count() == 0


GOOD = effect(0, "model", model_result("go", ("x",)))
JOURNAL_LINES = {  # the journal_lines family: a bad line appended to a live journal
    "torn": (effect(1, "tool:x", "ok")[:25] + b"\n", "Line 3", "incomplete (torn)"),
    "invalid UTF-8": (
        effect(1, "tool:x", "ok").replace(b'"ok"', b'"\xff\xfe"'),
        "Line 3",
        "not UTF-8 text",
    ),
    "deeply nested": (
        effect(1, "tool:x", "ok").replace(b'"ok"', b"[" * 3000 + b"]" * 3000),
        "Line 3",
        "nested too deeply",
    ),
    "lone surrogate": (  # read as loom-harness reads it, the value shown as its escape
        effect(1, "tool:x", "ok").replace(b'"ok"', b'"\\ud800"'),
        "line 3",
        "a lone surrogate escape (\\ud800) in a string, shown as its escape",
    ),
    "wrong types": (
        b'{"type": "effect", "seq": 1, "kind": 5, "depth": "x", "result": "ok"}\n',
        "line 3 (seq 1)",
        "field 'kind' has the wrong type, shown raw: 5",
    ),
}


@pytest.mark.parametrize("case", sorted(JOURNAL_LINES))
def test_a_bad_journal_line_gives_the_banner_and_the_tab_follows_on(
    qtbot, window: MainWindow, tmp_path: Path, case: str
) -> None:
    """A live tab whose journal gets a bad line: the banner names the line and the cause,
    what the tab had stays, and the good lines after it still arrive (no dialog)."""
    line, where, cause = JOURNAL_LINES[case]
    path = tmp_path / "run.jsonl"
    path.write_bytes(header("go") + GOOD)
    view = window.open_path(str(path))  # File > Open: a journal becomes a live tab
    assert view.live is not None
    view.live.tailer.poll_interval = 0.05
    qtbot.waitUntil(lambda: view.model.rowCount() == 2, timeout=15_000)
    with open(path, "ab") as fh:
        fh.write(line + effect(2, "model", model_result("done")))
    last = lambda: view.session.timeline.doc.effects[-1].seq  # noqa: E731
    qtbot.waitUntil(lambda: view.model.rowCount() >= 3 and last() == 2, timeout=15_000)
    banner = view.live.banner
    assert banner.isVisible() and where in banner.text()
    assert cause in banner.text() + banner.toolTip()  # the tooltip lists every problem
    assert view.session.timeline.kind_name(1) == "model"  # what it had is kept
    assert window.tabs.indexOf(view) >= 0 and not window.failures


def test_wrongly_typed_values_open_and_are_marked(
    qtbot, window: MainWindow, open_and_wait, tmp_path: Path
) -> None:
    path = tmp_path / "typed.loom.json"
    path.write_text(
        json.dumps(
            {
                "version": 2,
                "episodes": ["hi"],
                "log": [
                    {"seq": 0, "kind": "model", "result": {"text": True, "tool_calls": 5}},
                    {
                        "seq": 1,
                        "kind": "model",
                        "result": {
                            "text": "t",
                            "tool_calls": [{"id": "a", "name": ["x"], "input": {}}],
                        },
                        "meta": {"tools": 5},
                    },
                ],
            }
        )
    )
    view = open_and_wait(window, path)
    assert view.doc is not None and len(view.doc.effects) == 2 and not window.failures
    label = window.status_labels["format"]  # the status bar marks them, the tooltip names them
    assert label.text() == "trace v2 · ⚠ 1 warning(s)"
    assert label.toolTip() == "seq 1: field 'meta.tools' has the wrong type, shown raw: 5"
    pages = _render_all(path)
    assert WRONG_TYPE in pages[1] and "true" in pages[1]  # "text": true, shown raw
    assert WRONG_TYPE in pages[2] and "[&quot;x&quot;]" in pages[2].replace('"', "&quot;")


@pytest.mark.parametrize("path", sorted(REGRESSIONS.glob("*.json")), ids=lambda p: p.name)
def test_kept_regressions_render(path: Path, tmp_path: Path) -> None:
    exercise(path.read_bytes(), tmp_path, cli=False, render=_render)


@FUZZ
@given(mutated("types"))
def test_context_html_takes_any_value(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    exercise(data, tmp_path_factory.mktemp("html"), cli=False, render=_render)
