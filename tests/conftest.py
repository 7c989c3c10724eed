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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "pristine_sdks: needs the openai/anthropic SDKs no instrumentor has touched"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``pristine_sdks`` run first. OpenLLMetry's ``uninstrument`` leaves its
    wrappers on the SDK clients for the rest of the process: afterwards every client call
    opens a span on a shut-down provider, so an SDK-only agent's traces have a parent that
    never arrives and are no longer bare (tests/core/formats/test_otlp.py runs it)."""
    first = [i for i in items if i.get_closest_marker("pristine_sdks")]
    items[:] = first + [i for i in items if not i.get_closest_marker("pristine_sdks")]
