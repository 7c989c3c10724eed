"""The window's background helper processes (checksum check, library indexing of a big run)
are started at a lower CPU priority (:mod:`loom_core.cli.background`), and still answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom_desktop.document import view as view_module
from loom_desktop.features.library.controller import index_command
from loom_desktop.infra.child import BACKGROUND


def test_the_checksum_check_runs_in_the_background_and_still_answers(
    window, sample: Path, qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[tuple[str, ...]] = []
    real = view_module.module_command

    def recording(module: str, *args: str) -> tuple[str, list[str]]:
        started.append((module, *args))
        return real(module, *args)

    monkeypatch.setattr(view_module, "module_command", recording)
    view = window.open_path(str(sample))
    qtbot.waitUntil(lambda: view.checksum == "valid", timeout=20_000)
    assert started == [(BACKGROUND, "checksum", str(sample))]


def test_a_big_run_is_indexed_by_a_background_process(tmp_path: Path) -> None:
    argv = index_command(str(tmp_path / "library.sqlite3"), "/runs/big.loom.json")
    assert BACKGROUND in argv
    assert argv[argv.index(BACKGROUND) + 1 :] == [
        "runs",
        "--library",
        str(tmp_path / "library.sqlite3"),
        "index",
        "/runs/big.loom.json",
    ]
