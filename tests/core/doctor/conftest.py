"""The recording-proxy rig, for the checkup of a trace our proxy wrote."""

from __future__ import annotations

from tests.core.proxy.conftest import rig

__all__ = ["rig"]
