"""Fixtures shared by the shield tests (pytest finds them here, no import in each test)."""

from __future__ import annotations

from tests.core.shield.oracle import frozen_loom

__all__ = ["frozen_loom"]
