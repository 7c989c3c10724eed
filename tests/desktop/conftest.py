"""Desktop tests run offscreen, with settings in a temp dir, and fail on leftover work."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

import loom_desktop  # noqa: E402,F401
from loom_desktop.app import LoomApplication  # noqa: E402
from loom_desktop.infra.workers import wait_for_pool  # noqa: E402
from loom_desktop.main_window import MainWindow  # noqa: E402
from loom_desktop.resources import sample_trace  # noqa: E402


@pytest.fixture(scope="session")
def qapp_cls() -> type[LoomApplication]:
    """pytest-qt builds our application class, so its open signal is testable."""
    return LoomApplication


@pytest.fixture(autouse=True)
def _config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep the user's real settings out of tests."""
    cfg = tmp_path / "config"
    monkeypatch.setenv("LOOM_DESKTOP_CONFIG_DIR", str(cfg))
    return cfg


@pytest.fixture(autouse=True)
def _no_leftover_tasks() -> Iterator[None]:
    """Every test must leave the thread pool idle: tasks are owned and stopped."""
    yield
    assert wait_for_pool(10_000), "a background task outlived its test"


@pytest.fixture
def window(qtbot) -> Iterator[MainWindow]:
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    yield win
    win.close()


@pytest.fixture
def sample() -> Path:
    return sample_trace()


@pytest.fixture
def open_and_wait(qtbot):
    """Open a path in the background and wait until the full run is shown."""

    def run(window: MainWindow, path: Path | str):
        view = window.open_path(str(path))
        qtbot.waitUntil(lambda: view.complete and view.timeline_widget is not None, timeout=20_000)
        return view

    return run
