"""What the window imports before its first paint (issue 14: first paint from process
start). The plot's library, pyqtgraph, costs about 0.3 s to import on a quiet machine and
is needed only when a tab first shows its timeline, which a big run's tab defers until it
has loaded; the OTLP receiver's aiohttp only when the user starts listening; the command
line's modules never. Parsing the app's arguments and building the main window must pull
in none of them; nor the feature menus' engines (fork, the proxy's stop), imported on
first use."""

from __future__ import annotations

import json
import subprocess
import sys

# the fork engine, asyncio (the proxy's stop signals) and the control client (urllib,
# ssl) come with the first fork, Stop or proxy
HEAVY = (
    "pyqtgraph",
    "aiohttp",
    "anthropic",
    "openai",
    "loom_core.cli.entry",
    "loom_desktop.features.fork.work",
    "asyncio",
    "loom_core.proxy.control_client",
)
_PROBE = f"""
HEAVY = {HEAVY!r}
import json, sys
from PySide6.QtWidgets import QApplication
import loom_desktop.app, loom_desktop.main_window
from loom_desktop.__main__ import parse_args
parse_args(["x.loom.json"])
app = QApplication([])
window = loom_desktop.main_window.MainWindow()  # its menus and features built
print(json.dumps(sorted(m for m in HEAVY if m in sys.modules)))
"""


def test_the_window_does_not_import_the_plot_library_the_receiver_or_the_sdks() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
