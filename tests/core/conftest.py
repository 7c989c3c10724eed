"""Shared fixtures: every harness scenario is recorded once per session (about a second)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.harness_runs import Recorded, all_traces


@pytest.fixture(scope="session")
def harness_traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Recorded]:
    """Name -> recorded loom-harness trace; tests must copy a file before changing it."""
    out: Path = tmp_path_factory.mktemp("harness")
    return all_traces(out)
