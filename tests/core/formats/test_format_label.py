"""Naming a loom run's format (the status bar does it for every run shown) imports no
foreign reader: that import took 0.18 s on the GUI thread while a live journal's first
rows came in."""

from __future__ import annotations

import subprocess
import sys

from tests.core.clis import ROOT

_PROBE = """
import sys
from loom_core.formats.foreign import format_label
from loom_core.formats.journal import JournalState, journal_document
doc = journal_document(JournalState(header={"version": 1, "episodes": []}), "x.jsonl")
print(format_label(doc))
print(sorted(m for m in sys.modules if m in (
    "loom_core.formats.otlp", "loom_core.formats.claude_code", "loom_core.formats.inspect_eval")))
"""


def test_a_journal_is_named_without_importing_the_foreign_readers() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["journal v1", "[]"]
