"""Forget in a team's library: a row is one machine's file, so only that machine forgets it.

The window (laptop "desk") and the other laptop (the real ``runs`` command in its own
process) share a real PostgreSQL library. The Runs page's Forget on the other laptop's
run is disabled and says who listed it from where; ``runs forget`` from this machine
refuses it alike; on a run of this machine Forget says it is for the whole team, and the
other laptop no longer lists it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMenu

from loom_desktop.main_window import MainWindow
from tests.core.team.test_team_library import ROOT, SAMPLE, Laptop

WAIT = 60_000


def _forget_action(page: Any, row: int, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The Runs page's context menu on ``row``, as the user right-clicks it."""
    shown: list[QMenu] = []
    monkeypatch.setattr(QMenu, "popup", lambda menu, _pos: shown.append(menu))
    rect = page.table.visualRect(page.table.model().index(row, 0))
    page._menu(rect.center())
    (menu,) = shown
    return next(a for a in menu.actions() if a.text().startswith("Forget"))


def test_another_machines_run_is_forgotten_only_there(
    qtbot: Any,
    window: MainWindow,
    here: str,
    pg_url: str,
    bucket: str,
    teammate: Laptop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = teammate
    theirs = other.folder / "theirs.loom.json"
    shutil.copy(SAMPLE, theirs)
    other.run("publish", theirs)
    mine = tmp_path / "desk" / "mine.loom.json"
    mine.parent.mkdir()
    shutil.copy(SAMPLE, mine)

    window.library.use_library(pg_url)
    controller = window.library.controller
    controller.note(str(mine), "opened")
    qtbot.waitUntil(lambda: len(controller.runs.runs) == 2, timeout=WAIT)
    hosts = [r.host for r in controller.runs.runs]
    page = window.library.page

    action = _forget_action(page, hosts.index("laptop-b"), monkeypatch)
    assert not action.isEnabled()
    assert action.toolTip() == (
        f"published by laptop-b-user from laptop-b: only laptop-b can forget it "
        f"(loom-core runs forget {theirs} there)"
    )
    desk = subprocess.run(  # the CLI on this machine says the same
        [sys.executable, "-m", "loom_core", "runs", "--library", pg_url, "forget", str(theirs)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert desk.returncode == 2 and len(desk.stderr.strip().splitlines()) == 1
    assert "not in the run library as a run of this machine (desk)" in desk.stderr
    assert sorted(r["path"] for r in other.json("list")) == sorted([str(theirs), str(mine)])

    action = _forget_action(page, hosts.index("desk"), monkeypatch)
    assert action.isEnabled() and action.text() == "Forget for the team (keep the file)"
    action.trigger()
    qtbot.waitUntil(lambda: [r.host for r in controller.runs.runs] == ["laptop-b"], timeout=WAIT)
    assert [r["path"] for r in other.json("list")] == [str(theirs)]  # gone for the team
    assert mine.is_file()  # the file stays
