"""The window maps a big run's file, and a program cutting that file short cannot crash it.

Why: mapped, a big run's pages are let go after each pass (the window's memory above Qt's
fell from about 1.5× to 0.9× the file at 100,000 effects), but a mapped file cut short
makes the next read past its new end a SIGBUS. The window's application turns mapping on
(:func:`loom_core.formats.mapped_file.enable`); a writer, even on the window's own thread,
waits on the lease until the mapping is copied out, and every row reads as before.
"""

from __future__ import annotations

import gc
import os
import weakref
from pathlib import Path

from benchmarks.synth import write_synth
from loom_core.formats.mapped_file import MappedFile
from loom_core.formats.progressive import SMALL_BYTES
from loom_desktop.main_window import MainWindow
from tests.core.leases import require_leases
from tests.desktop.document.test_steps_agree import cli_rows
from tests.desktop.test_tab_memory import close_and_settle

EFFECTS = 5000


def test_a_big_run_is_mapped_and_outlives_its_file_cut_short(
    qtbot, window: MainWindow, open_and_wait, tmp_path: Path
) -> None:
    require_leases(tmp_path)
    path = write_synth(tmp_path / "big.loom.json", EFFECTS)
    assert path.stat().st_size > SMALL_BYTES  # the window's big-run path
    expected = cli_rows(path)
    view = open_and_wait(window, path)
    source = view.doc.source
    assert isinstance(source, MappedFile) and not source.pinned
    fd = source.fd
    path.write_bytes(b"{}")  # this, the window's thread, cuts it short (an in-place save)
    assert source.pinned  # the lease held the write until the mapping was copied out
    model = view.model
    assert model.rowCount() == len(expected)
    for r in range(0, len(expected), 97):
        assert model.step_row(model.step_at(r)).to_dict() == expected[r], f"row {r}"
    last = len(expected) - 1
    assert model.step_row(model.step_at(last)).to_dict() == expected[last]
    mapping, index = weakref.ref(source), window.tabs.indexOf(view)
    del source, model, view
    close_and_settle(qtbot, window, index)
    gc.collect()
    assert mapping() is None  # the closed tab's mapping is gone, and with it its lease
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        target = ""
    assert target != str(path)
