"""The window's paints stay on the GUI thread: Qt's raster engine starts no helper threads.

Why it matters: Qt hands a large fill to a pool of helper threads and waits for them, and
on a busy machine each hand-off waits for a core (see ``LoomApplication``). A fresh
process, because Qt decides once per process whether it has that pool.
"""

from __future__ import annotations

import os
import subprocess
import sys

PAINT_BIG_FILLS = """
import os
from loom_desktop.app import LoomApplication
from PySide6.QtGui import QColor, QImage, QPainter

app = LoomApplication([])
before = len(os.listdir("/proc/self/task"))
image = QImage(1400, 900, QImage.Format.Format_ARGB32_Premultiplied)
painter = QPainter(image)
for shade in range(20):  # fills of 900 lines each: Qt's pool takes them in pieces
    painter.fillRect(0, 0, 1400, 900, QColor(shade, 40, 90, 200))
painter.end()
print(len(os.listdir("/proc/self/task")) - before)
"""


def test_large_fills_start_no_helper_threads() -> None:
    env = {k: v for k, v in os.environ.items() if k != "QT_NO_GUI_THREADPOOL"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    done = subprocess.run(
        [sys.executable, "-c", PAINT_BIG_FILLS],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.split()[-1] == "0", done.stdout + done.stderr
