"""Where bundled files live: ``resources/`` at the repository root (or beside a frozen app)."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def sample_trace() -> Path:
    """The sample run the app opens when started without a file."""
    return resources_dir() / "sample.loom.json"
