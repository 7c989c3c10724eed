"""``loom-desktop [PATH...] [--screenshot OUT.png [--step N] [--size WxH]]``.

Without a path the bundled sample trace opens, so the app always has something
to show. ``--screenshot`` renders the real main window (offscreen when there is
no display), writes a PNG and exits: for the README, bug reports and tests.

One window per user: when Loom Desktop is already running, ``loom-desktop FILE``
hands the files to it and exits 0 (:mod:`.infra.single_instance`). ``--screenshot``
never does: it is always a process of its own. ``--install-desktop-integration``
registers the app and ``*.loom.json`` with the Linux desktop for this user.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from loom_desktop import __version__

if TYPE_CHECKING:
    from loom_desktop.app import LoomApplication
    from loom_desktop.infra.single_instance import InstanceServer
    from loom_desktop.main_window import MainWindow

from loom_desktop.infra.child import RUN_MODULE, run_module  # noqa: E402  (no Qt: safe before arg parsing)

EXIT_BAD_INPUT = 2
DESCRIPTION = (
    "Loom Desktop, a time-travel debugger for AI agent runs: open traces, journals "
    "and wirelogs (the bundled sample when no PATH is given)."
)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    from loom_core.cli.help import HelpParser

    parser = HelpParser(prog="loom-desktop", description=DESCRIPTION)
    parser.add_argument("paths", nargs="*", help="traces, journals or wirelogs to open")
    parser.add_argument(
        "--screenshot", metavar="OUT.png", help="render the window to a PNG and exit"
    )
    parser.add_argument(
        "--step",
        type=int,
        default=None,
        help="the step to show in the screenshot (its seq, as the list numbers it)",
    )
    parser.add_argument("--size", default="1400x860", help="window size for the screenshot, WxH")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    setup = parser.add_mutually_exclusive_group()
    setup.add_argument(
        "--install-desktop-integration",
        action="store_true",
        help="Linux: add the launcher entry, icon and *.loom.json type for this user",
    )
    setup.add_argument(
        "--uninstall-desktop-integration",
        action="store_true",
        help="Linux: remove what --install-desktop-integration added",
    )
    return parser.parse_args(argv)


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"loom-desktop: --size must look like 1400x860, not {text!r}") from None
    return w, h


def screenshot(window: MainWindow, paths: list[str], out: str, step: int | None, size: str) -> int:
    """Open ``paths`` synchronously, move to step ``step`` (a seq), render the window to ``out``."""
    from PySide6.QtWidgets import QApplication

    from loom_core.views.steps import step_of_seq

    window.resize(*_size(size))
    window.show()
    for path in paths:
        view = window.open_path(path, background=False)
        if window.failures:
            failed_path, cause = window.failures[-1]
            print(f"error: {failed_path}: {cause}", file=sys.stderr)
            return EXIT_BAD_INPUT
        view.check_checksum_now()
        if step is not None:
            row = step_of_seq(view.session.timeline, step) if view.session.timeline else None
            if row is None:
                print(
                    f"error: {path}: no step {step} (steps are numbered by seq, as "
                    f"`python -m loom_core steps` lists them)",
                    file=sys.stderr,
                )
                return EXIT_BAD_INPUT
            view.session.set_step(row)
    for _ in range(5):
        QApplication.processEvents()
    current = window.current()
    if current is not None:
        current._render_context()
        window.update_status()
    QApplication.processEvents()
    if not window.grab().save(out):
        print(f"error: {out}: cannot write the PNG", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


class Running:
    """A GUI run: the window and the instance server, wired to the application's signals,
    and the quit signals (SIGINT, SIGTERM, SIGHUP…) that close the window cleanly.

    ``close`` undoes the wiring, so a test can start one on pytest-qt's shared app.
    """

    def __init__(
        self, app: LoomApplication, window: MainWindow, server: InstanceServer | None
    ) -> None:
        from loom_desktop.infra.quit_signals import QuitSignals

        self.app, self.window, self.server = app, window, server
        self.quit_signals = QuitSignals(lambda _name: window.close(), app)
        app.open_requested.connect(window.open_path)
        app.raise_requested.connect(self._raise)
        if server is not None:
            server.setParent(app)
            server.paths_received.connect(app.accept_handover)

    def _raise(self) -> None:
        from loom_desktop.app import bring_to_front

        bring_to_front(self.window)

    def close(self) -> None:
        """Stop serving, unwire and close the window."""
        self.quit_signals.close()
        if self.server is not None:
            self.server.paths_received.disconnect(self.app.accept_handover)
            self.server.close()
            self.server.deleteLater()
        self.app.open_requested.disconnect(self.window.open_path)
        self.app.raise_requested.disconnect(self._raise)
        if self.window.isVisible():  # after app.exec() it was closed already: save once
            self.window.close()


SAMPLE_GRACE_MS = 250  # macOS sends the double-clicked file as an event just after start


def start_gui(
    app: LoomApplication, paths: list[str], server: InstanceServer | None, sample: str | None = None
) -> Running:
    """Show the main window with ``paths`` open (queued macOS open events too).

    With no paths, the Runs page is shown and ``sample`` opens only if no open event
    arrived meanwhile: a Finder double-click starts the app without arguments and then
    sends the file.
    """
    from PySide6.QtCore import QTimer

    from loom_desktop.main_window import MainWindow

    running = Running(app, MainWindow(), server)
    for path in paths:
        app.request_open(path)
    app.start_listening()
    running.window.show()
    if not paths and sample:
        window = running.window
        window.library.dock.show()  # no file given: the Runs page beside the sample
        QTimer.singleShot(
            SAMPLE_GRACE_MS, lambda: window.tabs.count() == 0 and window.open_path(sample)
        )
    return running


def _integrate(install: bool) -> int:
    if not sys.platform.startswith("linux"):
        print(
            "loom-desktop: desktop integration is installed by the macOS app bundle or the "
            "Windows installer (see packaging/); this flag is for Linux",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    from loom_desktop.integration import linux

    return linux.install() if install else linux.uninstall()


def _import_core_first() -> None:
    """The Qt-free modules every window uses, imported before PySide6: once PySide6 is
    imported, shiboken reads the source of each module imported after it (to see whether it
    uses PySide's ``__feature__`` switches), and numpy's and the readers' modules are about
    180 of those at start-up."""
    import loom_core.formats.progressive  # noqa: F401
    import loom_core.views.filtering  # noqa: F401
    import loom_core.views.timeline  # noqa: F401


def _load() -> str | None:
    """Import the core and Qt, first asking whether Qt can open a window here: a missing
    system library or Python dependency is one line (returned), never Qt's abort, which
    names the wrong package, or a traceback."""
    from loom_desktop.system_libs import display_problem, import_problem, start_window_check

    check = start_window_check(os.environ)  # the linker is asked while the core imports
    try:
        import loom_desktop  # noqa: F401  (pins pyqtgraph to PySide6 first)

        _import_core_first()
        problem = check.problem() if check is not None else None
        if problem is None:
            import loom_desktop.app  # noqa: F401  (PySide6, which loads Qt's own libraries)

            problem = display_problem(os.environ)  # libraries first: they are what to install
        return problem
    except ModuleNotFoundError as error:  # the shell's Python, not the venv's
        from loom_core.cli.outside_venv import message

        if (line := message(error, "loom_desktop")) is None:
            raise
        return line
    except ImportError as error:  # a library Qt itself needs (display or not)
        if (line := import_problem(error)) is None:
            raise
        return line


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [RUN_MODULE] and len(argv) > 1:  # a helper process of the frozen app
        return run_module(argv[1:])
    args = parse_args(argv)
    if args.install_desktop_integration or args.uninstall_desktop_integration:
        return _integrate(args.install_desktop_integration)
    if args.screenshot and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    problem = _load()
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_BAD_INPUT
    from loom_desktop.app import LoomApplication, quiet_qt_noise
    from loom_desktop.infra.dates import iso_dates
    from loom_desktop.resources import sample_trace

    quiet_qt_noise()
    with iso_dates():  # under LANG=C, Qt's file dialogs wrote 5 December as "5 12 2026"
        app = LoomApplication(sys.argv[:1])
    if args.screenshot:  # always its own process: never hands over, never serves
        from loom_desktop.main_window import MainWindow

        window = MainWindow(reattach=False)  # another window's proxies are not its own
        code = screenshot(
            window, args.paths or [str(sample_trace())], args.screenshot, args.step, args.size
        )
        window.close()
        return code
    from loom_desktop.infra.single_instance import InstanceServer, claim, server_name

    paths = [os.path.abspath(p) for p in args.paths]  # the running instance has another cwd
    claimed = claim(server_name(), paths)
    if claimed is True:
        return 0
    server = claimed if isinstance(claimed, InstanceServer) else None
    running = start_gui(app, paths, server, sample=str(sample_trace()))
    code = app.exec()
    running.close()
    from loom_desktop.infra.workers import wait_for_pool

    wait_for_pool(5000)
    return code


if __name__ == "__main__":
    sys.exit(main())
