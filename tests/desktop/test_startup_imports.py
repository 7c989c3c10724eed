"""What the window imports before its first paint (issue 14: first paint from process
start). The plot's library, pyqtgraph, costs about 0.3 s to import on a quiet machine and
is needed only when a tab first shows its timeline, which a big run's tab defers until it
has loaded; the OTLP receiver's aiohttp only when the user starts listening; the command
line's modules never. Parsing the app's arguments and building the main window must pull
in none of them; nor the feature menus' engines (fork, the proxy's stop), imported on
first use. Nor, until a run's first rows are painted, pydantic: the load path's structs and
the header's checks are declared without it (loom_core.formats.structs, header)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.desktop.fresh_probe import json_probe

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
    # the run library's part of the window, built once the opened run has painted
    "loom_desktop.features.library.window_ui",
    "loom_core.library.worker",
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
    assert json_probe(_PROBE) == []


# what opening a run may not import before its first rows: pydantic (about 90 ms), the
# format's pydantic models, and importlib.metadata with its email parser (30 ms, for the
# prices' release); only a price cache that has never seen the model pays for
# genai-prices (and its pydantic), so the probe runs twice and the second one is checked
BEFORE_ROWS = (
    *HEAVY,
    "pydantic",
    "pydantic_core",
    "loom_core.formats.schema",
    "importlib.metadata",
    "email.message",
)
_OPEN_PROBE = f"""
BEFORE_ROWS = {BEFORE_ROWS!r}
import json, sys
from loom_desktop.__main__ import _import_core_first
_import_core_first()
from PySide6.QtCore import QEventLoop
from loom_desktop.app import LoomApplication
from loom_desktop.infra.settings import DesktopSettings
from loom_desktop.main_window import MainWindow
app = LoomApplication([])
window = MainWindow(settings=DesktopSettings(), reattach=False)
window.show()
view = window.open_path(sys.argv[1])
for _ in range(2000):  # each turn waits for events, at most 50 ms
    if view.model.rowCount() > 0:
        break
    app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
loaded = sorted(m for m in BEFORE_ROWS if m in sys.modules)
print(json.dumps([view.model.rowCount(), loaded]))
window.close()
"""


def _proxy_trace(tmp_path: Path) -> Path:
    """The sample run as a proxy recording with a shield decision and a workspace: every
    struct of the header is read on the way to the first rows."""
    data = json.loads((Path(__file__).parents[2] / "resources" / "sample.loom.json").read_text())
    data.pop("checksum", None)
    data["recorded_via"] = "proxy"
    data["shield_events"] = [
        {"ts": 1.5, "action": "deny", "via": "rule", "tool": "bash", "input": {}, "rule": "r"}
    ]
    data["workspace"] = {"cwd": "/w", "argv": ["agent"], "os": "linux"}
    data["truncated"] = "yes"  # a lax member: coerced, as pydantic did
    path = tmp_path / "proxy.loom.json"
    path.write_text(json.dumps(data))
    return path


def test_a_run_is_opened_and_painted_without_pydantic(tmp_path: Path) -> None:
    trace = _proxy_trace(tmp_path)
    for _ in range(2):  # the first start of an install fills the price cache
        rows, loaded = json_probe(_OPEN_PROBE, str(trace))
    assert rows > 0
    assert loaded == []
