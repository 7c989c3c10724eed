"""What the window imports before its first paint (issue 14: first paint from process
start). The plot's library, pyqtgraph, costs about 0.3 s to import on a quiet machine and
is needed only when a tab first shows its timeline, which a big run's tab defers until it
has loaded; the main window's module must not pull it in."""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import json, sys
import loom_desktop.app, loom_desktop.main_window
print(json.dumps(sorted(m for m in ("pyqtgraph", "aiohttp", "anthropic", "openai") if m in sys.modules)))
"""


def test_the_window_module_does_not_import_the_plot_library_or_the_sdks() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
