"""Fixtures: a fake upstream per test, and no real keys or base URLs leaking in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.core.providers.rig import ENV_VARS, Upstream


@pytest.fixture(autouse=True)
def no_real_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own key or base URL must never reach a test (or the internet)."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    up = Upstream()
    try:
        yield up
    finally:
        up.close()
