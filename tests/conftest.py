"""Every test (and every process a test starts) keeps generated runs and the run library out
of the real home."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom_core.library.db import ENV as LIBRARY_ENV
from loom_core.runs_dir import ENV


@pytest.fixture(autouse=True)
def runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The per-user runs folder, in this test's temp dir (subprocesses inherit it)."""
    folder = tmp_path / "runs"
    monkeypatch.setenv(ENV, str(folder))
    return folder


@pytest.fixture(autouse=True)
def library_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The run library's database, in this test's temp dir (subprocesses inherit it)."""
    path = tmp_path / "library.sqlite3"
    monkeypatch.setenv(LIBRARY_ENV, str(path))
    return path
