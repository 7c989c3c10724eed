"""A lone surrogate escape (``"\\ud800"`` in the file) loads, as loom-harness loads it.

Why: Python's json reads such an escape, so loom-harness's ``Run.load`` opens the file
(and its ``trace verify`` accepts its checksum); refusing it would make a run it
recorded unreadable here. No text can hold the character, so it is shown as its
escape and named in a warning; the file's own bytes stay the source, so the checksum
and a save keep the value exactly as loom-harness wrote it.
"""

from __future__ import annotations

import json
from pathlib import Path

from loom import Run
from loom.trace import trace_checksum

from loom_core.formats import progressive
from loom_core.formats.loader import load
from loom_core.formats.save import save_document
from loom_core.formats.trace import checksum_state
from loom_core.views.steps import step_summary
from loom_core.views.timeline import build_timeline
from tests.core.clis import core, loom

LONE = "\ud800"
DOC = {
    "version": 2,
    "prompt": "go" + LONE,
    "output": "o",
    "model": LONE,
    "log": [{"seq": 0, "kind": "tool:x", "key": "k", "result": "a\udc00b", "depth": 0}],
}


def _written(tmp_path: Path) -> Path:
    """The trace as loom-harness writes it: ``json.dumps`` escapes the lone surrogates."""
    path = tmp_path / "lone.loom.json"
    path.write_text(json.dumps({**DOC, "checksum": trace_checksum(DOC)}, indent=2))
    assert b'"model": "\\ud800"' in path.read_bytes()
    return path


def test_it_loads_as_loom_harness_loads_it(tmp_path: Path) -> None:
    path = _written(tmp_path)
    theirs = Run.load(str(path))  # the oracle reads it...
    assert theirs.prompt == "go" + LONE and theirs.log[0].result == "a\udc00b"
    doc = load(path)  # ...and so do we, the value shown as its escape and named
    assert doc.header.model == "\\ud800" and doc.header.prompt == "go\\ud800"
    assert step_summary(build_timeline(doc), 1).endswith("a\\udc00b")
    assert doc.warnings == (
        "a lone surrogate escape (\\ud800) in a string at line 3, "
        "shown as its escape (no text can hold it)",
    )
    assert checksum_state(doc) == "valid"  # the file's bytes, not the shown text
    progressive.SMALL_BYTES, small = 0, progressive.SMALL_BYTES  # the window's big-file path
    try:
        assert progressive.load_progressive(str(path)).doc.warnings == doc.warnings
    finally:
        progressive.SMALL_BYTES = small


def test_a_save_keeps_the_value_loom_harness_wrote(tmp_path: Path) -> None:
    path = _written(tmp_path)
    out = tmp_path / "saved.loom.json"
    save_document(load(path), str(out))
    assert loom("trace", "verify", out).returncode == 0
    saved = Run.load(str(out))
    assert saved.prompt == "go" + LONE and saved.log[0].result == "a\udc00b"


def test_the_cli_shows_it(tmp_path: Path) -> None:
    done = core("summary", _written(tmp_path))
    assert done.returncode == 0 and "model: \\ud800" in done.stdout, done.stderr


def test_a_journal_line_with_one_is_read_as_loom_harness_reads_it(tmp_path: Path) -> None:
    """loom-harness's journal reader (``json.loads`` per line) takes the line; so do we,
    the value shown as its escape, the line named (not skipped as unreadable)."""
    from loom.journal import Journal

    from tests.core.live_helpers import effect, header

    path = tmp_path / "run.jsonl"
    path.write_bytes(header("go") + effect(0, "tool:x", "a\udc00b") + effect(1, "tool:x", "ok"))
    assert b'"a\\udc00b"' in path.read_bytes()
    _, theirs = Journal.read(str(path))
    doc = load(path)
    assert [e.result for e in theirs] == ["a\udc00b", "ok"] and len(doc.effects) == 2
    assert step_summary(build_timeline(doc), 1).endswith("a\\udc00b")
    assert doc.warnings == (
        "line 2: a lone surrogate escape (\\udc00) in a string, shown as its escape",
    )


def test_a_live_header_with_a_wrongly_typed_surrogate_value_is_a_line_problem() -> None:
    """The live tail skips a header no document can be built from, surrogates or not: the
    version "a\\ud800b" is named as the line's cause instead of failing the tab's update."""
    from loom_core.formats.journal import JournalState

    line = b'{"version": "a\\ud800b", "type": "header", "episodes": []}'
    cause = JournalState().read_line(line)
    assert cause is not None and "version" in cause
