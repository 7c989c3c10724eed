"""Fixtures for the recording-proxy tests: one rig (fake upstream + proxy) per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.core.proxy.harness import Rig, start_rig


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    with start_rig(tmp_path) as r:
        yield r
