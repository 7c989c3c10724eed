"""Fixtures of the window's team-library tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """This process is laptop "desk", with a cache of its own."""
    monkeypatch.setenv("LOOM_HOST", "desk")
    monkeypatch.setenv("LOOM_DESKTOP_CACHE", str(tmp_path / "desk-cache"))
    monkeypatch.delenv("LOOM_LIBRARY_URL", raising=False)
    return "desk"
