"""The fuzz driver's window mode: every mutated input opened in one real main window.

    QT_QPA_PLATFORM=offscreen python -m tests.core.fuzz.drive --window --cases 10000

Why a harness of its own: the loader and the views are fuzzed in-process by
:mod:`tests.core.fuzz.surfaces`, but the window adds its own paths (the background
load and its signals, live tabs for journals with their banner, the context view and
the plot, the error dialog). Each input is written to a file and opened the way a user
opens one (:meth:`MainWindow.open_path`); a bounded event loop waits for the tab to
load or fail; a loaded tab is rendered at its first, middle and last step and closed.

Outcomes: ``ok`` (loaded), ``rejected`` (the "Cannot open file" dialog naming the file
and a cause), ``crashed`` (anything escaping into Qt: ``sys.excepthook``, a critical or
fatal Qt message, an exception a catch-all logged, a dialog whose cause is a Python
exception rather than a reading error, a tab that neither loaded nor failed, a live
tab whose banner does not name the line) and ``hung`` (over the per-case bound).
One window and one event loop serve every case; dialogs are recorded, never shown.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QEventLoop, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QMessageBox

from loom_desktop import main_window
from loom_desktop.document.view import DocumentView
from loom_desktop.infra import gc_policy
from loom_desktop.main_window import MainWindow
from loom_desktop.widgets.timeline import TimelineWidget

DIALOG_TITLE = "Cannot open file"
COLLECT_EVERY = 200  # inputs between full collections (see _hold_nothing)
OWN_PLOT_EVERY = 10  # every tenth tab builds and paints its own plot (see WindowFuzz)
PAINT_EVERY = 3  # the shared plot is painted (at the last step shown) for every third input


class Hung(Exception):
    """The GUI thread was busy with one input past the bound."""


class RecordedBox:
    """Stands in for ``QMessageBox`` in the window module: records, never blocks or shows."""

    Icon = QMessageBox.Icon
    StandardButton = QMessageBox.StandardButton
    shown: list[tuple[str, str]] = []

    def __init__(self, _icon: Any, title: str, text: str, *_args: Any) -> None:
        RecordedBox.shown.append((title, text))

    def setAttribute(self, *_args: Any) -> None:  # noqa: N802 - the Qt API it replaces
        pass

    def setInformativeText(self, *_args: Any) -> None:  # noqa: N802
        pass

    def open(self) -> None:
        pass


class _Caught(logging.Handler):
    """An exception a catch-all logged (the live tab's and the tailer's): a crash hidden."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(logging.ERROR)
        self.problems = problems

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and not record.name.startswith("watchdog"):
            err = record.exc_info[1]
            self.problems.append(f"logged {type(err).__name__}: {err} ({record.getMessage()})")


@dataclass
class Case:
    """One input's outcome in the window."""

    status: str = "ok"
    problems: list[str] = field(default_factory=list)


class WindowFuzz:
    """One main window, reused for every input (see the module docstring).

    The plot: building a tab's pyqtgraph plot costs more than everything else a tab
    does together (about 0.1 s), so every tab builds its own only for one input in
    ``OWN_PLOT_EVERY`` (then the window paints it); for the others the tab defers it
    as it does while loading, and the run's timeline is drawn in one plot kept for
    the whole run (the same widget class, fed and painted the same way).
    """

    def __init__(self, window: MainWindow, folder: Path, bound: float = 10.0) -> None:
        self.window = window
        self.folder = folder
        self.bound = bound
        self.problems: list[str] = []  # what escaped into Qt during the current case
        self._n = 0
        self.plot = TimelineWidget()
        self.plot.resize(900, 230)  # never shown: painted by grab() only (see PAINT_EVERY);
        # shown, it repainted on every processEvents, 2-3 times per input and half the run

    def open_anchor(self) -> None:
        """Keep the bundled sample open in a first tab for the whole run: each input's tab
        then opens and closes beside it, as when a user opens runs one after another. With
        no tab left, closing each input's tab showed the start page (the Runs list, which
        grows by one run per input) and switched the window's stack twice per input.
        Called inside :meth:`hooks`."""
        sample = Path(__file__).resolve().parents[2] / "resources" / "sample.loom.json"
        anchor = self.folder / "anchor.loom.json"
        anchor.write_bytes(sample.read_bytes())
        self._n += 1  # counted as an input: no plot of its own (see WindowFuzz)
        view = self.window.open_path(str(anchor))
        if self._wait(view, len(self.window.failures)) != "loaded":
            raise RuntimeError(f"the bundled sample did not open: {self.problems}")

    @contextlib.contextmanager
    def hooks(self) -> Iterator[None]:
        """Route everything that can escape into Qt into :attr:`problems`; dialogs recorded."""
        old_hook, old_box = sys.excepthook, main_window.QMessageBox
        handler = _Caught(self.problems)

        def excepthook(
            kind: type[BaseException], err: BaseException, tb: TracebackType | None
        ) -> None:
            if isinstance(err, Hung):
                self.problems.append("hung")
                return
            where = _where(err)
            self.problems.append(f"{kind.__name__}: {str(err)[:200]} at {where}")

        def messages(kind: QtMsgType, _context: Any, text: str) -> None:
            if kind in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
                self.problems.append(f"Qt {kind.name}: {text}")

        sys.excepthook = excepthook
        old_hold, gc_policy.hold = gc_policy.hold, _hold_nothing
        collecting = gc.isenabled()
        gc.disable()  # collected on this thread only (see _hold_nothing)
        own_plot = DocumentView.ensure_timeline
        DocumentView.ensure_timeline = lambda view, **kw: (  # type: ignore[method-assign]
            own_plot(view, **kw) if self._n % OWN_PLOT_EVERY == 0 else None
        )
        main_window.QMessageBox = RecordedBox  # type: ignore[misc,assignment]
        old_qt = qInstallMessageHandler(messages)
        logging.getLogger().addHandler(handler)
        try:
            yield
        finally:
            logging.getLogger().removeHandler(handler)
            qInstallMessageHandler(old_qt)
            main_window.QMessageBox = old_box  # type: ignore[misc]
            gc_policy.hold = old_hold
            if collecting:
                gc.enable()
            DocumentView.ensure_timeline = own_plot  # type: ignore[method-assign]
            sys.excepthook = old_hook

    def run(self, data: bytes, journal_name: bool = False) -> Case:
        """Open ``data`` as a file, wait, render, close; the outcome (never raises)."""
        self._n += 1
        path = self.folder / f"case{self._n}{'.jsonl' if journal_name else '.loom.json'}"
        path.write_bytes(data)
        self.problems.clear()
        RecordedBox.shown.clear()
        failures = len(self.window.failures)
        case = Case()
        signal.setitimer(signal.ITIMER_REAL, self.bound + 5)
        try:
            view = self.window.open_path(str(path))
            state = self._wait(view, failures)
            if state == "loaded":
                self._look(view, case)
            elif state == "failed":
                case.status = "rejected"
                self._check_dialog(str(path), failures, case)
            else:
                case.problems.append(state)
            self._close(view)
        except Hung:
            self.problems.append("hung")
        except Exception as err:  # noqa: BLE001 - a view that fails while drawn is a crash
            self.problems.append(f"{type(err).__name__}: {str(err)[:200]} at {_where(err)}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            path.unlink(missing_ok=True)
        if self._n % COLLECT_EVERY == 0:
            gc.collect()  # the closed tabs' cycles (see _hold_nothing)
        case.problems.extend(self.problems)
        if "hung" in case.problems or any(p.startswith("hung") for p in case.problems):
            case.status = "hung"
        elif case.problems:
            case.status = "crashed"
        return case

    @staticmethod
    def alarm(_signum: int, _frame: Any) -> None:
        """SIGALRM: the GUI thread is stuck in one input (raised where it runs)."""
        raise Hung()

    # -- the steps of one case ---------------------------------------------------------
    def _wait(self, view: DocumentView, failures: int) -> str:
        """``loaded``, ``failed``, or why neither happened within the bound."""
        app = QCoreApplication.instance()
        assert app is not None
        deadline = time.monotonic() + self.bound
        while time.monotonic() < deadline:
            if len(self.window.failures) > failures:
                return "failed"
            if self._loaded(view):
                return "loaded"
            if self.problems:
                return "problem"
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
            if not (len(self.window.failures) > failures or view.complete):
                time.sleep(0.001)
        busy = view._load_task.running or (view.live is not None and not view.live.updates)
        return "hung: still loading" if busy else "silent: the tab neither loaded nor failed"

    @staticmethod
    def _loaded(view: DocumentView) -> bool:
        """The run is shown: a trace fully loaded, or a live tab that has read the file and
        indexed everything it read (the tab says "loaded" up to ``UI_MS`` later)."""
        live = view.live
        if live is None:
            return view.complete
        builder, doc = live.builder, live.doc
        if doc is None:
            return False
        return (
            builder is None or doc is None or live._stuck or builder.walker.done >= len(doc.effects)
        )

    def _look(self, view: DocumentView, case: Case) -> None:
        """The context view at the first, middle and last step, and the plot."""
        tl = view.session.timeline
        count = len(tl) if tl is not None else 0
        self.plot._auto_range = True  # as in a new tab
        if tl is not None:
            self.plot.set_timeline(tl)
        for step in sorted({0, count // 2, max(count - 1, 0)}):
            view.session.set_step(step)
            view.render_now()
            self.plot.set_cursor(step)
        if self._n % PAINT_EVERY == 0:
            self.plot.grab()  # the axis labels (step numbers) are made while painting
        view.ensure_timeline()  # the tab's own plot, when it builds one (see WindowFuzz)
        if view.live is not None:
            self._check_banner(view, case)

    @staticmethod
    def _check_banner(view: DocumentView, case: Case) -> None:
        """Every unreadable journal line is in the banner, by number and cause."""
        banner = view.live.banner
        if banner.lines and not banner.isVisibleTo(view):
            case.problems.append("unreadable lines but no banner")
        if banner.lines:
            number, cause = banner.lines[-1]
            if f"{number}" not in banner.text() or cause not in banner.text():
                case.problems.append(f"banner does not name line {number}: {banner.text()}")

    def _check_dialog(self, path: str, failures: int, case: Case) -> None:
        """The dialog names the file and a reading cause (not a Python exception's name)."""
        shown = [text for title, text in RecordedBox.shown if title == DIALOG_TITLE]
        failed_path, cause = self.window.failures[failures]
        if failed_path != path or not shown or path not in shown[-1]:
            case.problems.append(f"no dialog naming {path}: {shown}")
        elif not cause or _python_error(cause):
            case.problems.append(f"the dialog shows an exception, not a cause: {cause}")

    def _close(self, view: DocumentView) -> None:
        """Close the tab (a failed open closed it already) and let Qt delete it now."""
        index = self.window.tabs.indexOf(view) if shiboken6.isValid(view) else -1
        if index >= 0:
            self.window.close_tab(index)
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        QCoreApplication.processEvents()


def _hold_nothing(_owner: object) -> None:
    """The window's collector policy is for tabs that stay open: it freezes a loaded run and
    runs a full collection of the process when its tab closes (see ``gc_policy``). Here a
    tab lives for milliseconds, and a full collection of the fuzzer's heap per input would
    be most of the run's time; :meth:`WindowFuzz.run` collects every ``COLLECT_EVERY``, on
    the GUI thread, with automatic collection off meanwhile: left on, it ran in the
    tailer's thread once closed tabs' garbage piled up, and destroying Qt objects there
    killed the process (SIGSEGV, twice in the long truncation run)."""


def _python_error(cause: str) -> bool:
    """``RecursionError: …``: what ``_load_failed`` shows for an exception that is not a
    :class:`LoadError` -- a crash in a reader, shown in a dialog."""
    head = cause.split(":", 1)[0]
    return head.isidentifier() and head.endswith(("Error", "Exception"))


def _where(err: BaseException) -> str:
    tb, last = err.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    return f"{last.tb_frame.f_code.co_filename}:{last.tb_lineno}" if last else "?"
