"""PySide6's per-module ``__feature__`` check, answered without reading each new module's
source (see loom_desktop.infra.feature_scan): a fresh interpreter imports the app's shell,
then a module of its own; the module's file was never read for the check, and the module
has PySide6's plain "no feature" selection, which a read of a module using Qt gives too."""

from __future__ import annotations

from pathlib import Path

from tests.desktop.fresh_probe import json_probe

_PROBE = """
import json, linecache, sys
import loom_desktop.app  # PySide6, then the app's shell
sys.path.insert(0, sys.argv[1])
import probe_module_after_qt as module
feature = sys.modules["PySide6.support.feature"]
print(json.dumps([
    module.__file__ in linecache.cache,
    feature.pyside_feature_dict.get("probe_module_after_qt"),
    module.text(),
]))
"""


def test_a_module_imported_after_the_shell_is_not_read_for_pyside_features(
    tmp_path: Path,
) -> None:
    (tmp_path / "probe_module_after_qt.py").write_text(
        "from PySide6.QtCore import QObject\n\n\ndef text():\n    o = QObject()\n"
        "    o.setObjectName('plain names')\n    return o.objectName()\n",
        encoding="utf-8",
    )
    read, selection, text = json_probe(_PROBE, str(tmp_path))
    assert not read  # its source was not read to decide
    assert selection == 0  # "no feature": Qt's plain names
    assert text == "plain names"
