"""The bundled sample is nobody's run: a team's library does not list it.

Every member's first start opens the bundled sample; indexed into a shared library it
would be listed once per host and member. The computer's own library still lists it once
opened (tests/desktop/features/library/test_runs_page.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from loom_desktop.main_window import MainWindow

WAIT = 60_000


def test_opening_the_bundled_sample_does_not_list_it_in_the_team_library(
    qtbot: Any,
    window: MainWindow,
    here: str,
    pg_url: str,
    sample: Path,
    tmp_path: Path,
    open_and_wait: Any,
) -> None:
    window.library.use_library(pg_url)
    controller = window.library.controller
    qtbot.waitUntil(lambda: controller.team_address() == pg_url, timeout=WAIT)
    open_and_wait(window, sample)
    mine = tmp_path / "mine.loom.json"
    shutil.copy(sample, mine)
    open_and_wait(window, mine)  # the user's own run: listed for the team
    # (notes are indexed in order: once the later one is listed, the sample's was handled)
    qtbot.waitUntil(
        lambda: any(r.path.endswith("mine.loom.json") for r in controller.runs.runs), timeout=WAIT
    )
    assert [Path(r.path).name for r in controller.runs.runs] == ["mine.loom.json"]
