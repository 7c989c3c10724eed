"""The GUI benchmarks' window lists what it opens in a library of its own.

Why: the window indexes every run it opens, so a benchmark run by a developer would list
its synthetic and temporary runs in their own library, or, with ``LOOM_LIBRARY_URL`` in
their shell, publish them in their team's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from loom_core.library.address import default_address


def test_a_benchmark_window_uses_neither_the_users_nor_the_teams_library(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from benchmarks.gui_app import private_library

    users = tmp_path / "users" / "library.sqlite3"
    monkeypatch.setenv("LOOM_DESKTOP_LIBRARY", str(users))
    monkeypatch.setenv("LOOM_LIBRARY_URL", "postgresql://ana@db.example.com/loom")
    path = private_library()
    try:
        assert "LOOM_LIBRARY_URL" not in os.environ
        assert default_address() == str(path) and path != users
        assert path.parent.is_dir() and not path.exists()  # made when the window opens it
    finally:
        shutil.rmtree(path.parent)
