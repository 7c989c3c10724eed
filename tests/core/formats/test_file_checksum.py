"""The checksum command hashes a big trace's mapped bytes; it does not load the run.

``file_checksum_state`` must say what :func:`checksum_state` says of the loaded document
for every file -- valid, modified, without a checksum, not ASCII, another format -- and
for a big loom trace it must get there without the full load (every effect decoded).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.synth import synth_trace
from loom_core.formats import file_checksum
from loom_core.formats.loader import load
from loom_core.formats.trace import checksum_state
from tests.core.clis import core
from tests.core.harness_runs import Recorded

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every trace takes the mapped path, however small."""
    monkeypatch.setattr(file_checksum, "MAP_BYTES", 0)


def _variants(tmp_path: Path) -> list[Path]:
    doc = synth_trace(300)
    text = json.dumps(doc, indent=2)
    out = {
        "valid": text,
        "modified": text.replace("fix the failing tests", "fix the failing test", 1),
        "absent": json.dumps({k: v for k, v in doc.items() if k != "checksum"}, indent=2),
        "empty": json.dumps({**doc, "checksum": ""}, indent=2),
        "not-a-string": json.dumps({**doc, "checksum": 5}, indent=2),
        "non-ascii": json.dumps({**doc, "prompt": "grüße"}, indent=2, ensure_ascii=False),
        "one-line": json.dumps(doc),
    }
    paths = []
    for name, body in out.items():
        path = tmp_path / f"{name}.loom.json"
        path.write_text(body, encoding="utf-8")
        paths.append(path)
    return paths


def test_every_state_as_the_full_load_says(tmp_path: Path, mapped: None) -> None:
    states = {}
    for path in _variants(tmp_path):
        states[path.name] = file_checksum.file_checksum_state(path)
        assert states[path.name] == checksum_state(load(path)), path.name
    assert states["valid.loom.json"] == "valid" and states["modified.loom.json"] == "mismatch"
    assert states["absent.loom.json"] == "absent"


def test_loom_harness_runs(harness_traces: dict[str, Recorded], mapped: None) -> None:
    for recorded in harness_traces.values():
        assert file_checksum.file_checksum_state(recorded.path) == "valid", recorded.name


def test_a_big_trace_is_not_loaded(
    tmp_path: Path, mapped: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mapped path alone answers: the full load is never asked."""

    def refuse(*_args: object) -> None:
        raise AssertionError("the run was loaded")

    monkeypatch.setattr(file_checksum, "load_opened", refuse)
    valid, modified = _variants(tmp_path)[:2]
    assert file_checksum.file_checksum_state(valid) == "valid"
    assert file_checksum.file_checksum_state(modified) == "mismatch"


def test_the_command_on_the_sample_and_a_broken_file(tmp_path: Path) -> None:
    done = core("checksum", ROOT / "resources" / "sample.loom.json")
    assert (done.returncode, done.stdout.strip()) == (0, "valid")
    broken = tmp_path / "broken.loom.json"
    broken.write_text('{"version": 2, "log": [')
    done = core("checksum", broken)
    err = done.stderr.strip()
    assert done.returncode == 2 and str(broken) in err and len(err.splitlines()) == 1
