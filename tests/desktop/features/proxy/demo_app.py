"""Loom Desktop running the offline demo in a process of its own, for the signal tests.

``python -m tests.desktop.features.proxy.demo_app`` starts the window the way
``loom-desktop`` does (:func:`loom_desktop.__main__.start_gui`, with its quit
signals), runs Help ▸ Run offline demo, and prints one JSON line per event:
``{"event": "held", "app": PID, "proxy": PID, "agent": PID, "save": PATH}`` once the
deploy call is held, ``{"event": "finished", "code": C, "output": [...]}`` when the
demo is over, and ``{"event": "exited"}`` last. A line ``approve`` on stdin approves
the held call. When the demo finishes the window closes, so the process ends.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def say(**event: Any) -> None:
    print(json.dumps(event), flush=True)


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSocketNotifier, QTimer

    import loom_desktop  # noqa: F401  (pins pyqtgraph to PySide6)
    from loom_desktop.__main__ import start_gui
    from loom_desktop.app import LoomApplication

    app = LoomApplication(sys.argv[:1])
    running = start_gui(app, [], None)
    window = running.window
    demo = window.run_demo(pace=0.05)

    def held() -> None:
        entries = window.proxy_manager.proxies
        if not entries or entries[0].panel is None or entries[0].panel.current() is None:
            return
        poll.stop()
        say(
            event="held",
            app=os.getpid(),
            proxy=demo.proxy.pid,
            agent=int(demo.agent.processId()),
            save=str(demo.save),
        )

    poll = QTimer(interval=50)
    poll.timeout.connect(held)
    poll.start()

    def command() -> None:
        line = sys.stdin.readline()
        if not line:  # the test closed our stdin
            stdin.setEnabled(False)
        elif line.strip() == "approve":
            window.proxy_manager.proxies[0].panel.approve()

    stdin = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)
    stdin.activated.connect(command)

    def finished(code: int) -> None:
        say(event="finished", code=code, output=demo.output)
        QTimer.singleShot(0, window.close)

    demo.finished.connect(finished)
    code = app.exec()
    running.close()
    say(event="exited", code=code)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
