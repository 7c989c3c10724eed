"""loom_core must never pull in Qt.

Why: the same library serves the CLI, CI jobs and a headless proxy process,
where Qt may be absent or unable to start, and importing it would cost a
second per run. A fresh interpreter imports every module of loom_core, in every
subpackage (and runs the CLI, whose imports are lazy), and reports which GUI
modules got loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import loom_core

GUI_PREFIXES = ("PySide6", "shiboken6", "pyqtgraph", "PyQt")
PACKAGE = Path(loom_core.__file__).parent
SAMPLE = PACKAGE.parent / "resources" / "sample.loom.json"

PROBE = (
    f"GUI_PREFIXES = {GUI_PREFIXES!r}\n"
    + """
import contextlib, importlib, io, json, pkgutil, sys
import loom_core
from loom_core.cli.entry import main
names = sorted(m.name for m in pkgutil.walk_packages(loom_core.__path__, "loom_core.")
               if not m.name.endswith(".__main__"))  # a __main__ would run and exit
for name in names:
    importlib.import_module(name)
sample, out = sys.argv[1], sys.argv[2]
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    codes = [main(["summary", sample]), main(["summary", sample, "--json"]),
             main(["checksum", sample]), main(["convert", sample, "-o", out])]
gui = sorted(m for m in sys.modules if m.split(".")[0].startswith(GUI_PREFIXES))
print(json.dumps({"imported": names, "codes": codes, "gui": gui}))
"""
)


def test_no_gui_module_is_imported(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(SAMPLE), str(tmp_path / "o.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["gui"] == []
    assert report["codes"] == [0, 0, 0, 0]
    files = [
        p for p in PACKAGE.rglob("*.py") if p.stem != "__main__" and p != PACKAGE / "__init__.py"
    ]
    on_disk = {
        ".".join(("loom_core", *p.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(
            ".__init__"
        )
        for p in files
    }
    assert on_disk <= set(report["imported"])  # every module was really imported
