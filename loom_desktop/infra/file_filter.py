"""The Open dialogs' file filter: loom's own files and every foreign format's patterns.

One definition, because File ▸ Open and Compare's "Choose a run" must offer the same files;
foreign patterns come from the readers themselves, so a new format appears in both.
"""

from __future__ import annotations

from loom_core.formats.foreign import open_patterns

LOOM_PATTERNS = "*.loom.json *.json *.jsonl *.wirelog"


def run_file_filter() -> str:
    """``Runs (…);;All files (*)`` for a QFileDialog."""
    patterns = " ".join([LOOM_PATTERNS, *open_patterns()])
    return f"Runs ({patterns});;All files (*)"
