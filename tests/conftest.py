"""Every test (and every process a test starts) keeps generated runs out of the real home."""

from __future__ import annotations

from pathlib import Path

import pytest

from loom_core.runs_dir import ENV


@pytest.fixture(autouse=True)
def runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The per-user runs folder, in this test's temp dir (subprocesses inherit it)."""
    folder = tmp_path / "runs"
    monkeypatch.setenv(ENV, str(folder))
    return folder
