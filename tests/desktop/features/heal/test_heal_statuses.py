"""The heal dialog's candidate table is read whole: a status's reason is not cut off.

Why: a skipped repair says why ("token budget: 1,055 left, the next call may bill up
to 4,387"); in a narrow, single-line cell that was "skipped (t…", which told nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRect, Qt

from loom_core.providers.scripted import ScriptedProvider
from loom_desktop.features.doctor.findings_model import C_STATUS
from loom_desktop.main_window import MainWindow
from tests.desktop.features.heal.test_doctor_heal import (  # noqa: F401
    fooled_model,
    open_heal,
    poisoned,
    set_check,
    use_provider,
)


def test_a_skipped_candidates_reason_is_shown_whole(
    qtbot,
    window: MainWindow,
    open_and_wait,
    poisoned: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    use_provider(monkeypatch, lambda: ScriptedProvider(responder=fooled_model))
    view = open_and_wait(window, poisoned)
    dialog = open_heal(qtbot, window, view)
    dialog.budget.settings.budget.setValue(1100)  # one call fits, the second repair's does not
    set_check(qtbot, dialog, "require", "never said")
    qtbot.waitUntil(dialog.start_btn.isEnabled, timeout=20_000)
    dialog.start_btn.click()
    qtbot.waitUntil(lambda: dialog.result is not None, timeout=30_000)
    table = dialog.candidates.table
    rows = [
        r
        for r in range(dialog.model.rowCount())
        if str(dialog.model.index(r, C_STATUS).data()).startswith("skipped (token budget")
    ]
    assert rows, [dialog.model.index(r, C_STATUS).data() for r in range(dialog.model.rowCount())]
    text = dialog.model.index(rows[0], C_STATUS).data()
    width = table.columnWidth(C_STATUS) - 8  # the cell's margins
    needed = table.fontMetrics().boundingRect(
        QRect(0, 0, width, 10_000), int(Qt.TextFlag.TextWordWrap), text
    )
    assert table.wordWrap() and table.rowHeight(rows[0]) >= needed.height()
    assert needed.width() <= width
    dialog.grab().save(str(tmp_path / "heal_statuses.png"))
