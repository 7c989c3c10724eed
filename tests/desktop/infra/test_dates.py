"""Qt's file dialogs write dates unambiguously under LANG=C.UTF-8 (they said "5 12 2026").

The cause is Qt's C locale (short date ``d MM yyyy``), read from the environment when the
application starts; the app lets Qt read ISO dates instead, and leaves the environment as
it found it. Each case runs in a fresh process: Qt reads the locale once per process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from loom_desktop.infra.dates import is_plain, time_locale

_PROBE = """
import json, os, sys, time
from PySide6.QtCore import QDate, QLocale
from PySide6.QtWidgets import QApplication, QFileSystemModel
from loom_desktop.infra.dates import iso_dates
if sys.argv[1] == "app":
    with iso_dates():
        app = QApplication([])
else:
    app = QApplication([])
model = QFileSystemModel()
root = model.setRootPath(sys.argv[2])
deadline = time.monotonic() + 20
while not model.rowCount(root) and time.monotonic() < deadline:
    app.processEvents()
    time.sleep(0.01)
shown = model.data(model.index(0, 3, root))
short = QLocale.system().toString(QDate(2026, 12, 5), QLocale.FormatType.ShortFormat)
numbers = QLocale.system().toString(1234.5)
print(json.dumps([shown, short, numbers, os.environ.get("LC_TIME"), os.environ.get("LC_ALL")]))
"""


def probe(how: str, folder: Path, **env: str) -> list[str | None]:
    run_env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_TIME", "LANG")}
    run_env.update(QT_QPA_PLATFORM="offscreen", **env)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, how, str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        env=run_env,
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize("env", [{"LANG": "C.UTF-8"}, {"LC_ALL": "C"}, {}])
def test_a_c_locale_gets_iso_dates_and_keeps_its_environment(tmp_path: Path, env) -> None:
    (tmp_path / "run.loom.json").write_text("{}")
    before = probe("qt", tmp_path, **env)
    assert before[1] == "5 12 2026"  # the cause: Qt's C locale
    shown, short, numbers, lc_time, lc_all = probe("app", tmp_path, **env)
    assert short == "2026-12-05" and shown is not None
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", shown), shown  # a 24-hour time: short
    assert numbers == before[2]  # only dates change
    assert (lc_time, lc_all) == (None, env.get("LC_ALL"))  # children inherit nothing new


def test_a_real_locale_is_left_alone() -> None:
    assert not is_plain(time_locale({"LANG": "de_DE.UTF-8"}))
    assert is_plain(time_locale({"LANG": "C.UTF-8"})) and is_plain(time_locale({}))
    assert not is_plain(time_locale({"LC_ALL": "fr_FR.UTF-8", "LANG": "C"}))
