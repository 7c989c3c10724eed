"""Shared assertions for branches: loom-harness accepts them, and so do we."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loom import Run

from loom_core.formats.loader import load
from loom_core.formats.trace import checksum_state
from tests.core.clis import core
from tests.core.proxy.harness import loom_verifies


def loom_ok(path: Path) -> Run:
    """``Run.load`` without a warning, ``loom trace verify``, ``loom timeline``; our loader
    and ``summary`` too."""
    run = loom_verifies(path)
    doc = load(path)
    assert doc.warnings == () and checksum_state(doc) == "valid"
    summary = core("summary", path)
    assert summary.returncode == 0, summary.stderr
    return run


def read(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def tail_of(branch: dict[str, Any]) -> list[dict[str, Any]]:
    return branch["log"][branch["fork"]["prefix"] :]


def kinds(entries: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in entries]


def texts(entries: list[dict[str, Any]]) -> list[str]:
    return [e["result"]["text"] for e in entries if e["kind"] == "model"]
