"""``loom-desktop [PATH...] [--screenshot OUT.png [--step N] [--size WxH]]``.

Without a path the bundled sample trace opens, so the app always has something
to show. ``--screenshot`` renders the real main window (offscreen when there is
no display), writes a PNG and exits: for the README, bug reports and tests.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

EXIT_BAD_INPUT = 2


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="loom-desktop", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="traces, journals or wirelogs to open")
    parser.add_argument("--screenshot", metavar="OUT.png", help="render the window to a PNG and exit")
    parser.add_argument("--step", type=int, default=None, help="step to show in the screenshot")
    parser.add_argument("--size", default="1400x860", help="window size for the screenshot, WxH")
    return parser.parse_args(argv)


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"loom-desktop: --size must look like 1400x860, not {text!r}") from None
    return w, h


def screenshot(window, paths: list[str], out: str, step: int | None, size: str) -> int:
    """Open ``paths`` synchronously, move to ``step``, render the window to ``out``."""
    from PySide6.QtWidgets import QApplication

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
            view.session.set_step(step)
    for _ in range(5):
        QApplication.processEvents()
    view = window.current()
    if view is not None:
        view._render_context()
        window.update_status()
    QApplication.processEvents()
    if not window.grab().save(out):
        print(f"error: {out}: cannot write the PNG", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.screenshot and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import loom_desktop  # noqa: F401  (pins pyqtgraph to PySide6 first)

    from .app import LoomApplication, quiet_qt_noise
    from .main_window import MainWindow
    from .resources import sample_trace

    paths = args.paths or [str(sample_trace())]
    quiet_qt_noise()
    app = LoomApplication(sys.argv[:1])
    window = MainWindow()
    if args.screenshot:
        code = screenshot(window, paths, args.screenshot, args.step, args.size)
        window.close()
        return code
    app.open_requested.connect(window.open_path)
    for path in paths:
        app.request_open(path)
    app.start_listening()
    window.show()
    code = app.exec()
    from .workers import wait_for_pool

    wait_for_pool(5000)
    return code


if __name__ == "__main__":
    sys.exit(main())
