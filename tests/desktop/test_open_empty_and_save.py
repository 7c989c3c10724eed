"""An empty trace is an error, not a waiting tab; Watch opens; Save as trace says where.

Why: an empty ``*.loom.json`` opened a live tab that waited forever for a journal
that would never come (a trace is written whole); Watch Journal…'s button said
"Save" for a dialog that writes nothing; and a saved run said nothing at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import shiboken6
from PySide6.QtWidgets import QFileDialog

from loom_core.formats.loader import load
from loom_core.live.live_status import FINISHED
from loom_desktop.dialogs import watch_file_dialog
from loom_desktop.main_window import MainWindow
from tests.core.clis import core
from tests.core.live_helpers import effect, header, model_result


@pytest.mark.parametrize("content", [b"", b"  \n\n"])
def test_an_empty_trace_opened_is_an_error_dialog(
    qtbot, window: MainWindow, tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "run.loom.json"
    path.write_bytes(content)
    view = window.open_path(str(path))
    qtbot.waitUntil(lambda: bool(window.failures), timeout=10_000)
    assert window.failures[-1] == (str(path), "the file is empty")
    # The failed tab is gone; it may already be deleted (deleteLater ran during the wait).
    assert window.tabs.count() == 0
    assert not shiboken6.isValid(view) or view.live is None
    assert window.errors[-1] == f"Cannot open {path}\n\nthe file is empty"


def test_an_empty_file_is_followed_when_watched_or_named_like_a_journal(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    trace, journal = tmp_path / "run.loom.json", tmp_path / "run.journal.jsonl"
    trace.write_bytes(b"")
    journal.write_bytes(b"")  # a proxy's journal starts empty
    watched = window.open_path(str(trace), watch=True)
    named = window.open_path(str(journal))
    assert watched.live is not None and named.live is not None
    qtbot.wait(200)
    assert not window.failures


def test_a_watched_run_says_what_it_waits_for(qtbot, window: MainWindow, tmp_path: Path) -> None:
    """A bare "waiting" did not say for what: a file that does not exist yet, or its first
    step; the tab says which, and moves on when it comes."""
    path = tmp_path / "later.journal.jsonl"
    view = window.open_path(str(path), watch=True)
    status = view.live.bar.status
    qtbot.waitUntil(lambda: status.text() == "waiting for the file to be created", timeout=10_000)
    path.write_bytes(b"")
    qtbot.waitUntil(
        lambda: status.text() == "waiting for the first step to be written", timeout=10_000
    )
    path.write_bytes(header("hi") + effect(0, "model", model_result("hello")))
    qtbot.waitUntil(lambda: not status.text().startswith("waiting"), timeout=10_000)


@pytest.mark.parametrize(
    "command",
    [
        ["summary"],
        ["summary", "--json"],
        ["doctor"],
        ["checksum"],
        ["steps"],
        ["convert", "-o", "{out}"],
    ],
)
def test_cli_commands_on_an_empty_file_exit_2_with_one_line(
    tmp_path: Path, command: list[str]
) -> None:
    path, out = tmp_path / "run.loom.json", tmp_path / "out.loom.json"
    path.write_bytes(b"")
    done = core(*[c.format(out=out) for c in command], path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"error: {path}: the file is empty"]
    assert not out.exists()


def test_the_watch_dialog_opens_and_says_watch(qtbot) -> None:
    dialog = watch_file_dialog()
    qtbot.addWidget(dialog)
    assert dialog.acceptMode() == QFileDialog.AcceptMode.AcceptOpen
    assert dialog.fileMode() == QFileDialog.FileMode.AnyFile  # it may not exist yet
    assert dialog.labelText(QFileDialog.DialogLabel.Accept) == "Watch"


def test_save_as_trace_says_where_and_a_failure_says_why(
    qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(header("go") + effect(0, "model", model_result("done")))
    view = window.open_path(str(path))
    qtbot.waitUntil(lambda: view.live.status == FINISHED, timeout=15_000)
    out = tmp_path / "kept.loom.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(out), ""))
    view.live.bar.save.click()
    assert load(out).format == "trace"
    assert window.statusBar().currentMessage() == f"Run saved as a trace: {out}"
    bad = tmp_path / "missing-folder" / "x.loom.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(bad), ""))
    view.live.bar.save.click()
    assert window.statusBar().currentMessage().startswith(f"Cannot save the run to {bad}: ")
    assert window.errors and window.errors[-1].startswith("Cannot save the run")
    assert not bad.exists()
