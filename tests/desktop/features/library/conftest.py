"""Fixtures of the window's team-library tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.team.test_team_library import Laptop


@pytest.fixture
def here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """This process is laptop "desk", with a cache of its own."""
    monkeypatch.setenv("LOOM_HOST", "desk")
    monkeypatch.setenv("LOOM_DESKTOP_CACHE", str(tmp_path / "desk-cache"))
    monkeypatch.delenv("LOOM_LIBRARY_URL", raising=False)
    return "desk"


@pytest.fixture
def teammate(tmp_path: Path, pg_url: str, bucket: str) -> Laptop:
    """Another laptop ("laptop-b", the real ``runs`` command in its own process) on the
    team's database, its run store set to the bucket's ``team`` folder."""
    other = Laptop("laptop-b", tmp_path, pg_url)
    other.run("store", f"{bucket}/team")
    return other
