"""When the window's run library starts: after the run the app opened at start shows its
plot (its watcher, threads and indexing would compete with that run's first screen), at
once when no run is opening (the Runs page is what shows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QAction

from loom_desktop.features.library.controller import LibraryController
from loom_desktop.features.library.seat import RUNS_KEY
from loom_desktop.features.library.window_ui import LibraryUi
from loom_desktop.infra.settings import DesktopSettings
from loom_desktop.main_window import MainWindow
from tests.desktop.plot_paints import plot_paints

WAIT = 20_000


def _shown(qtbot: Any) -> MainWindow:
    window = MainWindow(settings=DesktopSettings(), reattach=False)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    return window


def _painted_at(monkeypatch: Any, owner: type, name: str) -> tuple[list[bool], list[Any]]:
    """``owner.name`` patched to record, at each call, whether the current tab's plot had
    painted on the screen by then (True with no tab): placed but not yet painted, its
    first paint would share the interpreter lock with the library's threads. The second
    list is where the test puts its window."""
    seen: list[bool] = []
    windows: list[Any] = []
    real = getattr(owner, name)
    painted = plot_paints(monkeypatch)

    def recording(obj: Any, *args: Any, **kw: Any) -> Any:
        view = windows[0].current()
        seen.append(view is None or (view.timeline_widget is not None and bool(painted)))
        return real(obj, *args, **kw)

    monkeypatch.setattr(owner, name, recording)
    return seen, windows


def _window(qtbot: Any, monkeypatch: Any) -> tuple[MainWindow, list[bool]]:
    """A shown window whose library records, at its start, whether the current tab's plot
    had painted (see :func:`_painted_at`)."""
    seen, windows = _painted_at(monkeypatch, LibraryController, "start")
    windows.append(_shown(qtbot))
    return windows[0], seen


def test_the_library_starts_after_the_opened_run_shows_its_plot(
    qtbot: Any, monkeypatch: Any, sample: Path
) -> None:
    window, seen = _window(qtbot, monkeypatch)
    view = window.open_path(str(sample))  # as the app opens its command line's files
    qtbot.waitUntil(lambda: view.timeline_widget is not None, timeout=WAIT)
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
    assert seen == [True]
    qtbot.waitUntil(
        lambda: sample.name in [Path(r.path).name for r in window.library.controller.runs.runs],
        timeout=WAIT,
    )  # the opened run is listed, as before
    window.close()


def test_the_library_starts_at_once_without_a_run_and_once_on_a_failed_open(
    qtbot: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    window, seen = _window(qtbot, monkeypatch)
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
    assert seen == [True]
    window.close()
    window, seen = _window(qtbot, monkeypatch)
    bad = tmp_path / "bad.loom.json"
    bad.write_text('{"version": 1, "log": [', encoding="utf-8")
    window.open_path(str(bad))
    qtbot.waitUntil(lambda: bool(window.failures), timeout=WAIT)
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
    assert seen == [True]  # once, though the tab both failed and closed
    window.close()


# -- the library's part of the window, built after the first paint (features/library/seat.py)


def _runs_actions(window: MainWindow) -> list[QAction]:
    return [a for a in window.actions() if a.shortcut().toString() == RUNS_KEY]


def _opening(qtbot: Any, sample: Path, windows: list[Any] | None = None) -> MainWindow:
    """A shown window that has just opened ``sample``: its library not built yet."""
    window = _shown(qtbot)
    if windows is not None:
        windows.append(window)
    window.open_path(str(sample))
    assert not window.seat.built
    return window


def test_the_library_is_built_once_the_opened_run_has_painted(
    qtbot: Any, monkeypatch: Any, sample: Path
) -> None:
    """Not with the window: its pages, dock, controller and modules are built after the
    opened run's plot has painted, and what the window told it before (the run loaded)
    reaches it then."""
    seen, windows = _painted_at(monkeypatch, LibraryUi, "__init__")
    window = _opening(qtbot, sample, windows)
    qtbot.waitUntil(lambda: window.seat.built, timeout=WAIT)
    assert seen == [True]
    assert _runs_actions(window) == [window.library.dock.toggleViewAction()]  # the stand-in gone
    qtbot.waitUntil(
        lambda: sample.name in [Path(r.path).name for r in window.library.controller.runs.runs],
        timeout=WAIT,
    )  # the "loaded" told before it was built
    window.close()


def test_view_runs_before_the_library_is_built_builds_it_and_shows_the_dock(
    qtbot: Any, sample: Path
) -> None:
    window = _opening(qtbot, sample)
    (stand_in,) = _runs_actions(window)
    stand_in.trigger()  # View ▸ Runs (Ctrl+Shift+R)
    assert window.seat.built and window.library.dock.isVisible()
    toggle = window.library.dock.toggleViewAction()
    assert _runs_actions(window) == [toggle] and toggle.isChecked()
    window.close()


def test_a_window_closed_before_the_library_is_built_never_builds_it(
    qtbot: Any, sample: Path
) -> None:
    window = _opening(qtbot, sample)
    window.close()
    for _ in range(20):  # the turns in which the plot would have shown
        qtbot.wait(10)
    assert not window.seat.built
